#!/bin/bash
# Runs the GPU checks of the injection library from a carried bundle (see
# tests/fixtures/trace/README.md): the gpu tests, the unit tests, a Triton
# and torch process, and torch.profiler beside the library. Traces are kept
# and packed into <out>/traces.tgz (the fixtures come from there).
#   run_on_device.sh <bundle dir> <out dir>
# The bundle, built on a build machine (ninja kport_inject kport_trace_dump
# kport_inject_unit_tests kport_test_nvtx_child kport_gpu_trace_tests):
#   libkport_inject.so kport_trace_dump            (build/lib/, build/)
#   kport_gpu_trace_tests kport_gpu_child kport_cubin_kernel.cubin
#                                                  (build/tests/gpu/)
#   kport_inject_unit_tests kport_test_nvtx_child  (build/tests/unit/trace/)
#   run_on_device.sh triton_nvtx.py profiler_conflict.py (tests/gpu/)
set -u -o pipefail
B=$(cd "$1" && pwd)
OUT=$2
T=/tmp/kport-traces
rm -rf "$T" && mkdir -p "$T/cuda" "$T/direct" "$T/triton" "$T/profiler"
export KPORT_TEST_INJECT_LIBRARY=$B/libkport_inject.so
export KPORT_TEST_GPU_CHILD=$B/kport_gpu_child
export KPORT_TEST_GPU_CUBIN=$B/kport_cubin_kernel.cubin
export KPORT_TEST_NVTX_CHILD=$B/kport_test_nvtx_child
inject() {
  env NVTX_INJECTION64_PATH=$B/libkport_inject.so \
    CUDA_INJECTION64_PATH=$B/libkport_inject.so KPORT_TRACE_DIR="$@"
}

echo "== machine"; date -u +%Y-%m-%dT%H:%M:%SZ; uname -r
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
ldd "$B/libkport_inject.so"

echo "== gpu_child directly, with the library's debug log"
inject "$T/direct" env KPORT_INJECT_DEBUG=1 timeout 60 "$B/kport_gpu_child" kernels \
  "$B/kport_cubin_kernel.cubin"
echo "direct rc=$?"
"$B/kport_trace_dump" "$T/direct" | grep -v '^range'

echo "== gpu tests"
KPORT_TEST_KEEP_TRACES=$T/cuda timeout 120 "$B/kport_gpu_trace_tests"
echo "gpu tests rc=$?"

echo "== unit tests on the GPU machine"
timeout 60 "$B/kport_inject_unit_tests" --gtest_brief=1
echo "unit tests rc=$?"

echo "== cuda traces"
"$B/kport_trace_dump" "$T/cuda"
echo "python xxh3_128 of the cubin:"
python3 -c "import sys,xxhash; print(xxhash.xxh3_128_hexdigest(open(sys.argv[1],'rb').read()))" \
  "$B/kport_cubin_kernel.cubin"

echo "== triton + torch under NVTX ranges"
rm -rf /tmp/kport-triton-cache
PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/kport-triton-cache \
  inject "$T/triton" env KPORT_INJECT_DEBUG=1 timeout 150 python3 "$B/triton_nvtx.py"
echo "triton rc=$?"
"$B/kport_trace_dump" "$T/triton"

echo "== torch.profiler beside the library"
PYTHONUNBUFFERED=1 inject "$T/profiler" env KPORT_INJECT_DEBUG=1 timeout 60 python3 "$B/profiler_conflict.py"
echo "profiler rc=$?"
"$B/kport_trace_dump" "$T/profiler" | grep -v '^kernel\|^memop\|^module' 
"$B/kport_trace_dump" "$T/profiler" | grep -c '^kernel'

tar czf "$OUT/traces.tgz" -C "$T" cuda direct triton profiler
echo "== done"
