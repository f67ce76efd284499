"""A Triton kernel and a torch kernel inside torch.cuda.nvtx ranges, for the
trace fixtures: run under NVTX_INJECTION64_PATH / CUDA_INJECTION64_PATH with
KPORT_TRACE_DIR set. Prints the XXH3-128 of every cubin Triton compiled
(TRITON_CACHE_DIR), so the caller can find them among the trace's modules.
"""
import glob
import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def kport_add_one(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + 1.0, mask=mask)


def main():
    n = 4096
    x = torch.zeros(n, device="cuda")
    # Compilation and the first launch happen outside every kport: range.
    kport_add_one[(n // 1024,)](x, n, BLOCK=1024)
    torch.cuda.synchronize()
    for _ in range(3):
        torch.cuda.nvtx.range_push("kport:cfg")
        kport_add_one[(n // 1024,)](x, n, BLOCK=1024)
        y = x * 2.0
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    assert float(x[0]) == 4.0 and float(y[0]) == 8.0, (float(x[0]), float(y[0]))
    cache = os.environ.get("TRITON_CACHE_DIR", "")
    try:
        import xxhash
    except ImportError:
        xxhash = None
    for path in sorted(glob.glob(os.path.join(cache, "**", "*.cubin"), recursive=True)):
        data = open(path, "rb").read()
        digest = xxhash.xxh3_128_hexdigest(data) if xxhash else "no-xxhash"
        print("cubin", os.path.basename(path), len(data), digest)
    print("triton ok", torch.__version__, triton.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
