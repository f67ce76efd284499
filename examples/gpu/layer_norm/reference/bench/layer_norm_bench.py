"""Bench of layer_norm for kport's performance gate.

    python3 bench/layer_norm_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (rows x n and dtype, hidden sizes of
transformer models from one decode token to 16k tokens: launch-bound to
HBM-bound) through kport_bench, so they draw the same inputs and each timed
call sits alone in its ``kport:<config>`` range. The candidate is imported
from the workspace (layer_norm_select), never next to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import layer_norm_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through layer_norm_select)

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
EPS = 1e-5


def _config(rows: int, n: int, dtype: str):
    return kport_bench.Config(f"{rows}x{n}-{dtype}", {"rows": rows, "n": n, "dtype": dtype})


#: From about 2 us (one row) to about 0.4 ms (16384 x 8192 bf16: 0.5 GB
#: through HBM); 4096x5120-f16 and 2048x1000-f32 are not powers of two.
CONFIGS = [
    _config(1, 4096, "bf16"),
    _config(16, 4096, "bf16"),
    _config(256, 1024, "f32"),
    _config(2048, 1000, "f32"),
    _config(1024, 768, "f16"),
    _config(4096, 2048, "f16"),
    _config(4096, 4096, "bf16"),
    _config(4096, 4096, "f32"),
    _config(8192, 1024, "bf16"),
    _config(4096, 5120, "f16"),
    _config(2048, 8192, "bf16"),
    _config(16384, 768, "f32"),
    _config(1024, 16384, "f32"),
    _config(16384, 8192, "bf16"),
]


def make_inputs(config, generator):
    n, dtype = config["n"], _DTYPES[config["dtype"]]
    x = torch.randn((config["rows"], n), generator=generator, device="cuda") * 2.0 + 0.5
    weight = torch.randn((n,), generator=generator, device="cuda") * 0.2 + 1.0
    bias = torch.randn((n,), generator=generator, device="cuda") * 0.1
    return (x.to(dtype), weight.to(dtype), bias.to(dtype), EPS)


def main(argv=None) -> int:
    return kport_bench.bench_main(layer_norm_select, CONFIGS, make_inputs, "layer_norm", argv,
                                  description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
