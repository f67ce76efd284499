#!/bin/sh
# Host glue of the prefix_sum port: builds the reference's own test suite and bench
# against the port (prefix_sum_port.cpp) instead of the reference, into ./build/.
# kport runs it with cwd = the workspace and KPORT_REFERENCE set.
set -eu
ref=${KPORT_REFERENCE:?KPORT_REFERENCE must name the reference dir}
nvtx_inc=${NVTX_INCLUDE:-/usr/local/cuda/include}
mkdir -p build
# The same flags as the reference build: the port must win on its code.
sdk_inc=${KPORT_SDK_CPP:-$ref/../../../../sdk/cpp}
flags="-O2 -std=c++17 -I$ref -I$nvtx_inc -I$sdk_inc"
c++ $flags -o build/prefix_sum_test "$ref/tests/prefix_sum_test.cpp" prefix_sum_port.cpp \
  -lgtest -lgtest_main -pthread -ldl
c++ $flags -o build/prefix_sum_bench "$ref/bench/prefix_sum_bench.cpp" prefix_sum_port.cpp \
  -ldl
