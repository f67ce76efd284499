#!/bin/sh
# Builds the reference's test suite and bench into the folder given as $1
# (kport passes {out}). Runs with cwd = this folder.
set -eu
out=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
nvtx_inc=${NVTX_INCLUDE:-/usr/local/cuda/include}
mkdir -p "$out"
# kport's C++ bench helper (check lines for KPORT_CHECK), from this repository.
sdk_inc=${KPORT_SDK_CPP:-$here/../../../../sdk/cpp}
flags="-O2 -std=c++17 -I$here -I$nvtx_inc -I$sdk_inc"
c++ $flags -o "$out/prefix_sum_test" "$here/tests/prefix_sum_test.cpp" \
  "$here/prefix_sum_ref.cpp" -lgtest -lgtest_main -pthread -ldl
c++ $flags -o "$out/prefix_sum_bench" "$here/bench/prefix_sum_bench.cpp" \
  "$here/prefix_sum_ref.cpp" -ldl
