"""What kport's injection library costs a kernel: CUDA-event times as JSON.

    python3 inject_overhead.py > plain.json
    CUDA_INJECTION64_PATH=... NVTX_INJECTION64_PATH=... KPORT_TRACE_DIR=... \\
        python3 inject_overhead.py > injected.json

Run once without and once with the library and compare the two files. For a
few kernels of about 10 us to 2 ms (torch's runtime-API launches, a Triton
kernel and a CuPy one, both through the driver API) each launch is timed
alone with CUDA events after an L2 flush (median, min, p90 over `--reps`),
and a train of back-to-back small launches gives the per-launch cost, where
CUPTI's launch callbacks would show first. Every timed launch sits in a
``kport:<kernel>`` range, so the injected run's trace holds CUPTI's own
figures for the same launches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import cupy
import numpy
import torch
import triton
import triton.language as tl


@triton.jit
def overhead_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


_CUPY_SOURCE = r"""
extern "C" __global__ void overhead_copy_kernel(const float4* x, float4* out, long long n4) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = x[i];
}
"""


def _kernels():
    """name -> a call of about the stated device time on an H200 (4.3 TB/s copies)."""
    cupy_copy = cupy.RawModule(code=_CUPY_SOURCE).get_function("overhead_copy_kernel")
    tensors = {}

    def buf(n):
        if n not in tensors:
            tensors[n] = (torch.randn(n, device="cuda"), torch.empty(n, device="cuda"))
        return tensors[n]

    def torch_add(n):
        x, out = buf(n)
        return lambda: torch.add(x, 1.0, out=out)

    def triton_scale(n):
        x, out = buf(n)
        return lambda: overhead_scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)

    def cupy_copy_of(n):
        x, out = buf(n)
        cx, cout = cupy.asarray(x), cupy.asarray(out)
        args = (cx, cout, numpy.int64(n // 4))
        return lambda: cupy_copy(((n // 4 + 255) // 256,), (256,), args)

    a = torch.randn((4096, 4096), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((4096, 4096), device="cuda", dtype=torch.bfloat16)
    return {
        "torch_add_10us": torch_add(1 << 22),     # 32 MiB moved
        "torch_add_100us": torch_add(1 << 25),    # 256 MiB
        "torch_add_1ms": torch_add(1 << 28),      # 2 GiB
        "torch_add_2ms": torch_add(1 << 29),      # 4 GiB
        "torch_matmul_bf16_4096": lambda: torch.matmul(a, b),
        "triton_scale_100us": triton_scale(1 << 25),
        "cupy_copy_100us": cupy_copy_of(1 << 25),
        "cupy_copy_1ms": cupy_copy_of(1 << 28),
    }


def _time_each(fn, name, reps, flush):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"kport:{name}")
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return {"reps": reps, "median_us": statistics.median(times), "min_us": times[0],
            "p90_us": times[int(0.9 * (len(times) - 1))]}


def _launch_train(fn, launches):
    """Device time per launch of `launches` back-to-back launches (no flush, no sync)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    host_start = time.perf_counter()
    torch.cuda.nvtx.range_push("kport:launch_train")
    start.record()
    for _ in range(launches):
        fn()
    end.record()
    host_issue = time.perf_counter() - host_start
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    return {"launches": launches, "device_us_per_launch": start.elapsed_time(end) * 1e3 / launches,
            "host_issue_us_per_launch": host_issue * 1e6 / launches}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--launches", type=int, default=2000)
    args = parser.parse_args(argv)
    flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")  # 256 MiB
    torch.cuda.nvtx.mark("inject_overhead: start")
    kernels = _kernels()
    for fn in kernels.values():  # compile and load everything first
        fn()
    torch.cuda.synchronize()
    results = {name: _time_each(fn, name, args.reps, flush) for name, fn in kernels.items()}
    small = torch.empty(1024, device="cuda")
    train = {
        "torch_fill_1k": _launch_train(lambda: small.fill_(1.0), args.launches),
        "triton_scale_1k": _launch_train(
            lambda: overhead_scale_kernel[(1,)](small, small, 1024, BLOCK=1024), args.launches),
    }
    report = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": torch.cuda.get_device_name(),
        "injected": {k: os.environ.get(k, "") for k in
                     ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "KPORT_TRACE_DIR")},
        "kernels": results,
        "launch_train": train,
    }
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
