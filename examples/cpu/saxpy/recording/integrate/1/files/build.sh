#!/bin/sh
# Host glue of the saxpy port: builds the reference's own test suite and bench
# against the port (saxpy_port.cpp) instead of the reference, into ./build/.
# kport runs it with cwd = the workspace and KPORT_REFERENCE set.
set -eu
ref=${KPORT_REFERENCE:?KPORT_REFERENCE must name the reference dir}
nvtx_inc=${NVTX_INCLUDE:-/usr/local/cuda/include}
mkdir -p build
# The same flags as the reference build: the port must win on its code.
sdk_inc=${KPORT_SDK_CPP:-$ref/../../../../sdk/cpp}
flags="-O2 -std=c++17 -I$ref -I$nvtx_inc -I$sdk_inc"
c++ $flags -o build/saxpy_test "$ref/tests/saxpy_test.cpp" saxpy_port.cpp \
  -lgtest -lgtest_main -pthread -ldl
c++ $flags -o build/saxpy_bench "$ref/bench/saxpy_bench.cpp" saxpy_port.cpp \
  -ldl
