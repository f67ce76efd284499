"""A/A fidelity bench, CUDA C++ kernels (aa_cuda.cu via CuPy RawModule):
vector add, tiled matmul, two-pass reduction.

    python3 aa_cuda_bench.py --impl cuda [--verify]

kport runs this one program as both the reference and the candidate
(aa_cuda.toml): every config's true ratio is 1. The configs span about 3 us
to 5 ms of device time; do_bench_aa.py times them with do_bench too.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import cupy
import numpy
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from aa_common import kport_bench, verify_all  # noqa: E402

_module: cupy.RawModule | None = None


def _kernel(name: str) -> cupy.RawKernel:
    global _module
    if _module is None:
        _module = cupy.RawModule(code=(HERE / "aa_cuda.cu").read_text())
    return _module.get_function(name)


def _ptr(t: torch.Tensor) -> cupy.ndarray:
    return cupy.asarray(t)


#: Blocks of the reduction's first pass: enough to fill 132 SMs 8 deep.
_REDUCE_BLOCKS = 132 * 8


def add(x, y, out):
    n4 = x.numel() // 4
    _kernel("aa_vector_add")(((n4 + 255) // 256,), (256,),
                             (_ptr(x), _ptr(y), _ptr(out), numpy.int64(n4)))
    return out


def matmul(a, b, c):
    n = a.shape[0]
    _kernel("aa_matmul_tiled")((n // 32, n // 32), (32, 8),
                               (_ptr(a), _ptr(b), _ptr(c), numpy.int32(n)))
    return c


def reduce_sum(x, partial):
    n = x.numel()
    blocks = min(_REDUCE_BLOCKS, max(1, -(-n // (256 * 4 * 4))))
    kernel = _kernel("aa_reduce_sum")
    kernel((blocks,), (256,), (_ptr(x), _ptr(partial), numpy.int64(n)))
    kernel((1,), (256,), (_ptr(partial), _ptr(partial[blocks:]), numpy.int64(blocks)))
    return partial[blocks:blocks + 1]


Config = kport_bench.Config

CONFIGS = (
    [Config(f"add-f32-n{n}", {"op": "add", "n": n}) for n in
     (1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 25, 1 << 26, 1 << 27, 1 << 28, 1 << 30)]
    + [Config(f"matmul-f32-{n}", {"op": "matmul", "n": n}) for n in
       (128, 256, 512, 768, 1024, 1536, 2048, 2560)]
    + [Config(f"reduce-f32-n{n}", {"op": "reduce", "n": n}) for n in
       (1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30)]
)


def make_inputs(config, generator):
    """(op, tensors...) for one config: call below runs op(tensors...)."""
    op = config["op"]
    opts = {"generator": generator, "device": "cuda"}
    if op == "add":
        n = config["n"]
        return (add, torch.randn(n, **opts), torch.randn(n, **opts),
                torch.empty(n, device="cuda"))
    if op == "matmul":
        n = config["n"]
        return (matmul, torch.randn((n, n), **opts), torch.randn((n, n), **opts),
                torch.empty((n, n), device="cuda"))
    n = config["n"]
    # Partials, then one slot for the total.
    return (reduce_sum, torch.randn(n, **opts), torch.empty(_REDUCE_BLOCKS + 1, device="cuda"))


def call(op, *tensors):
    return op(*tensors)


def expected(inputs):
    op, *tensors = inputs
    if op is add:
        return tensors[0] + tensors[1], 0.0, 0.0
    if op is matmul:
        a, b = tensors[0].double(), tensors[1].double()
        return a @ b, 1e-4, 1e-4 * a.shape[1] ** 0.5
    x = tensors[0].double()
    return x.sum().reshape(1), 1e-5, 1e-5 * x.numel() ** 0.5


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["cuda"], required=True,
                        help="the one implementation: both sides of the A/A run")
    parser.add_argument("--verify", action="store_true",
                        help="check every config once against torch first (untimed)")
    kport_bench.add_arguments(parser, iterations=10, warmup=2)
    args = parser.parse_args(argv)
    configs = kport_bench.select(CONFIGS, args.only)
    if args.verify and not verify_all(configs, make_inputs, call, expected):
        return 1
    kport_bench.run(configs, make_inputs, call, iterations=args.iterations,
                    warmup=args.warmup, label="aa-cuda")
    return 0


if __name__ == "__main__":
    sys.exit(main())
