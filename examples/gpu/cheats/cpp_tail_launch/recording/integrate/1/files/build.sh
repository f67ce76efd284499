#!/bin/sh
# Host glue of the scale_add port: builds the reference's own test suite and
# bench against the port (scale_add_port.cu, scale_add_impl.cu) instead of
# the reference, into ./build/, with the reference's nvcc flags. kport runs
# it with cwd = the workspace and KPORT_REFERENCE set.
set -eu
ref=${KPORT_REFERENCE:?KPORT_REFERENCE must name the reference dir}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p build
sdk_inc=${KPORT_SDK_CPP:-$ref/../../../../../sdk/cpp}
# Relocatable device code and the device runtime: scale_add_impl.cu
# launches grids from the device.
flags="-arch=sm_90 -O2 -std=c++17 -rdc=true -I$ref -I$sdk_inc"
"$nvcc" $flags -o build/scale_add_test "$ref/tests/scale_add_test.cu" \
  scale_add_port.cu scale_add_impl.cu -lcudadevrt
"$nvcc" $flags -o build/scale_add_bench "$ref/bench/scale_add_bench.cu" \
  scale_add_port.cu scale_add_impl.cu -lcudadevrt -ldl
