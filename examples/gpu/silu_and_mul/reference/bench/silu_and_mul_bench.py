"""Bench of silu_and_mul for kport's performance gate.

    python3 bench/silu_and_mul_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (tokens x d and dtype, the MLP widths of
Llama-class models, from one decode token to 16k prefill tokens: launch-bound
to HBM-bound) through kport_bench, so they draw the same inputs and each timed
call sits alone in its ``kport:<config>`` range. The candidate is imported
from the workspace (silu_and_mul_select), never next to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import silu_and_mul_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through silu_and_mul_select)

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def _config(tokens: int, d: int, dtype: str):
    return kport_bench.Config(f"{tokens}x{d}-{dtype}", {"tokens": tokens, "d": d, "dtype": dtype})


#: From about 2 us (one decode token) to about 0.5 ms (16384 x 14336 bf16:
#: 1.4 GB through HBM). 2048x4097 has an odd d: no vector loads on either side.
CONFIGS = [
    _config(1, 4096, "bf16"),
    _config(16, 11008, "bf16"),
    _config(64, 14336, "bf16"),
    _config(256, 4096, "f16"),
    _config(1024, 11008, "bf16"),
    _config(1024, 4096, "f32"),
    _config(2048, 14336, "bf16"),
    _config(2048, 4097, "bf16"),
    _config(4096, 4096, "bf16"),
    _config(4096, 11008, "f16"),
    _config(4096, 8192, "f32"),
    _config(8192, 14336, "bf16"),
    _config(16384, 4096, "bf16"),
    _config(32768, 1024, "f16"),
]


def make_inputs(config, generator):
    shape = (config["tokens"], 2 * config["d"])
    x = torch.randn(shape, generator=generator, device="cuda", dtype=torch.float32) * 2.0
    return (x.to(_DTYPES[config["dtype"]]),)


def main(argv=None) -> int:
    return kport_bench.bench_main(silu_and_mul_select, CONFIGS, make_inputs, "silu_and_mul", argv,
                                  description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
