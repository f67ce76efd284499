"""A/A fidelity bench, Triton kernels: vector add, row softmax, matmul (tl.dot).

    python3 aa_triton_bench.py --impl triton [--verify]

kport runs this one program as both the reference and the candidate
(aa_triton.toml), so every config's true ratio is 1: what the performance
gate reports beyond 1 is measurement noise. The configs span about 3 us to
5 ms of device time. do_bench_aa.py times the same configs with
triton.testing.do_bench, for comparison.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import torch
import triton
import triton.language as tl

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from aa_common import kport_bench, verify_all  # noqa: E402


@triton.jit
def aa_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def aa_softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def aa_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr):
    # Grouped tile order (Triton's matmul tutorial): neighbouring programs
    # share A rows in L2. Row-major A (M x K), B (K x N), C (M x N); M, N, K
    # are multiples of the blocks (the configs are).
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * tiles_n)
    first_m = group * GROUP_M
    group_size = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size)
    pid_n = (pid % (GROUP_M * tiles_n)) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :]
    b = b_ptr + rk[:, None].to(tl.int64) * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BLOCK_K
        b += BLOCK_K * N
    c = c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(c, acc.to(c_ptr.dtype.element_ty))


def add(x, y, out):
    n = x.numel()
    aa_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, num_warps=4)
    return out


def softmax(x, out):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    warps = 16 if block >= 4096 else 8 if block >= 2048 else 4
    aa_softmax_kernel[(rows,)](out, x, cols, BLOCK=block, num_warps=warps)
    return out


def matmul(a, b, c):
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, 128) * triton.cdiv(n, 128),)
    aa_matmul_kernel[grid](a, b, c, m, n, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                           GROUP_M=8, num_warps=8, num_stages=3)
    return c


Config = kport_bench.Config

CONFIGS = (
    # f32 vector add: 12 bytes an element, ~3 us (launch-bound) to ~3 ms.
    [Config(f"add-f32-n{n}", {"op": "add", "n": n}) for n in
     (1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 25, 1 << 26, 1 << 27, 1 << 28, 1 << 30)]
    # f32 row softmax: one program per row.
    + [Config(f"softmax-f32-{r}x{c}", {"op": "softmax", "rows": r, "cols": c}) for r, c in
       ((1024, 256), (4096, 512), (4096, 1024), (8192, 2048), (16384, 4096),
        (16384, 8192), (32768, 8192), (65536, 8192))]
    # f16 matmul, f32 accumulation: ~5 us to ~5 ms.
    + [Config(f"matmul-f16-{m}x{n}x{k}", {"op": "matmul", "m": m, "n": n, "k": k}) for m, n, k in
       ((256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
        (3072, 3072, 3072), (4096, 4096, 4096), (6144, 6144, 6144), (8192, 8192, 8192),
        (8192, 8192, 16384))]
)

OPS = {"add": add, "softmax": softmax, "matmul": matmul}


def make_inputs(config, generator):
    """(op, tensors...) for one config: fn below calls op(tensors...)."""
    op = config["op"]
    opts = {"generator": generator, "device": "cuda"}
    if op == "add":
        n = config["n"]
        return (add, torch.randn(n, **opts), torch.randn(n, **opts),
                torch.empty(n, device="cuda"))
    if op == "softmax":
        shape = (config["rows"], config["cols"])
        return (softmax, torch.randn(shape, **opts) * 4, torch.empty(shape, device="cuda"))
    m, n, k = config["m"], config["n"], config["k"]
    return (matmul, torch.randn((m, k), **opts).half(), torch.randn((k, n), **opts).half(),
            torch.empty((m, n), device="cuda", dtype=torch.float16))


def call(op, *tensors):
    return op(*tensors)


def expected(inputs):
    """What torch computes for the same inputs, to check each kernel once."""
    op, *tensors = inputs
    if op is add:
        return tensors[0] + tensors[1], 0.0, 0.0
    if op is softmax:
        return torch.softmax(tensors[0].double(), dim=-1).float(), 1e-5, 1e-6
    a, b = tensors[0], tensors[1]
    return (a.float() @ b.float()).half(), 1e-2, 1e-2 * a.shape[1] ** 0.5


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["triton"], required=True,
                        help="the one implementation: both sides of the A/A run")
    parser.add_argument("--verify", action="store_true",
                        help="check every config once against torch first (untimed)")
    kport_bench.add_arguments(parser, iterations=10, warmup=2)
    args = parser.parse_args(argv)
    configs = kport_bench.select(CONFIGS, args.only)
    if args.verify and not verify_all(configs, make_inputs, call, expected):
        return 1
    kport_bench.run(configs, make_inputs, call, iterations=args.iterations,
                    warmup=args.warmup, label="aa-triton")
    return 0


if __name__ == "__main__":
    sys.exit(main())
