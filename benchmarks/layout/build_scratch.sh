#!/usr/bin/env bash
# Times one from-scratch build of the checkout SRC: an empty build folder,
# ccache off (CCACHE_DISABLE=1 reaches ccache through the compiler launcher,
# which then only runs the compiler), the configure line of scripts/setup, and
# `ninja -j2` under /usr/bin/time -v at nice 10 (so others' builds on a shared
# machine are not starved; CPU time stays valid under nice).
# Usage: build_scratch.sh SRC OUT_PREFIX
#   writes OUT_PREFIX.configure.log, .time.txt (time -v of ninja), .ninja.log
#   (ninja's output), .ninja_log (copy of build/.ninja_log), .tu.txt
#   (translation unit count)
set -euo pipefail
src=$(cd "$1" && pwd)
out=$2
build=$src/build
rm -rf "$build"
export CCACHE_DISABLE=1
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKPORT_CUDA_ROOT=/usr/local/cuda >"$out.configure.log" 2>&1
# Translation units: compile commands (-c) in the build graph.
ninja -C "$build" -t commands | grep -c -- ' -c ' >"$out.tu.txt" || true
status=0
nice -n 10 /usr/bin/time -v -o "$out.time.txt" ninja -C "$build" -j2 \
  >"$out.ninja.log" 2>&1 || status=$?
cp "$build/.ninja_log" "$out.ninja_log"
echo "exit $status" >>"$out.time.txt"
exit $status
