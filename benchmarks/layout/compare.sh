#!/usr/bin/env bash
# Runs the CPU corpus (what scripts/demo runs: every examples/cpu/*/port*.toml
# with the replay agent, checked against examples/cpu/expected.toml) with the
# `kport` of two checkouts, alternating before/after, N times each, each run
# into a fresh runs folder. Each checkout runs its own examples/cpu, as its
# scripts/demo does.
# Usage: compare.sh BEFORE_SRC AFTER_SRC N OUT_DIR
#   writes OUT_DIR/run-<side>-<i>.log (kport's output), .time (time -v),
#   and keeps the runs folders under OUT_DIR/runs/<side>-<i> (not committed).
set -uo pipefail
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
n=$3
out=$(mkdir -p "$4" && cd "$4" && pwd)
for i in $(seq 1 "$n"); do
  for side in before after; do
    src=$before
    [[ $side == after ]] && src=$after
    runs=$out/runs/$side-$i
    rm -rf "$runs"
    (cd "$src/examples/cpu" &&
      /usr/bin/time -v -o "$out/run-$side-$i.time" "$src/build/kport" run \
        ./*/port*.toml --runs-dir "$runs" --expect expected.toml \
        >"$out/run-$side-$i.log" 2>&1)
    echo "$side $i exit $?" | tee -a "$out/exits.txt"
  done
done
