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
c++ $flags -o "$out/softmax_test" "$here/tests/softmax_test.cpp" \
  "$here/softmax_ref.cpp" -lgtest -lgtest_main -pthread -ldl
c++ $flags -o "$out/softmax_bench" "$here/bench/softmax_bench.cpp" \
  "$here/softmax_ref.cpp" -ldl
