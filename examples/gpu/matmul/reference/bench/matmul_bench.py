"""Bench of C = A @ B for kport's performance gate.

    python3 bench/matmul_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (M x N x K and dtype: squares from 256 to
8192, skinny products with M = 16..64 as in decode-time projections,
rectangles, and sizes that are no multiple of any tile) through kport_bench,
so they draw the same inputs and each timed call sits alone in its
``kport:<config>`` range. The candidate is imported from the workspace
(matmul_select), never next to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import matmul_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through matmul_select)

_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def _config(m: int, n: int, k: int, dtype: str):
    return kport_bench.Config(f"{m}x{n}x{k}-{dtype}", {"m": m, "n": n, "k": k, "dtype": dtype})


#: From a few microseconds (256^3) to about a millisecond (8192^3).
CONFIGS = [
    _config(256, 256, 256, "f16"),
    _config(512, 512, 512, "f16"),
    _config(1024, 1024, 1024, "f16"),
    _config(2048, 2048, 2048, "bf16"),
    _config(4096, 4096, 4096, "f16"),
    _config(4096, 4096, 4096, "bf16"),
    _config(8192, 8192, 8192, "f16"),
    _config(8192, 8192, 8192, "bf16"),
    _config(16, 4096, 4096, "f16"),
    _config(32, 8192, 8192, "bf16"),
    _config(64, 8192, 4096, "f16"),
    _config(48, 14336, 4096, "bf16"),
    _config(4096, 14336, 4096, "bf16"),
    _config(1000, 1000, 1000, "f16"),
    _config(3000, 3000, 3000, "bf16"),
]


def make_inputs(config, generator):
    dtype = _DTYPES[config["dtype"]]
    a = torch.randn((config["m"], config["k"]), generator=generator, device="cuda").to(dtype)
    b = torch.randn((config["k"], config["n"]), generator=generator, device="cuda").to(dtype)
    return a, b


def main(argv=None) -> int:
    return kport_bench.bench_main(matmul_select, CONFIGS, make_inputs, "matmul", argv,
                                  description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
