#!/bin/sh
# Builds the reference's test suite and bench into the folder given as $1
# (kport passes {out}) with nvcc for sm_90. Runs with cwd = this folder.
set -eu
out=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$out"
# kport's C++ bench helper (check lines for KPORT_CHECK), from this repository.
sdk_inc=${KPORT_SDK_CPP:-$here/../../../../../sdk/cpp}
flags="-arch=sm_90 -O2 -std=c++17 -I$here -I$sdk_inc"
"$nvcc" $flags -o "$out/scale_add_test" "$here/tests/scale_add_test.cu" \
  "$here/scale_add_ref.cu"
"$nvcc" $flags -o "$out/scale_add_bench" "$here/bench/scale_add_bench.cu" \
  "$here/scale_add_ref.cu" -ldl
