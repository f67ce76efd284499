"""Bench of the row softmax for kport's performance gate.

    python3 bench/softmax_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (rows x cols and dtype, from launch-bound to
HBM-bound) through kport_bench, so they draw the same inputs and each timed
call sits alone in its ``kport:<config>`` range. The candidate is imported
from the workspace (softmax_select), never next to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import softmax_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through softmax_select)

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def _config(rows: int, cols: int, dtype: str):
    return kport_bench.Config(f"{rows}x{cols}-{dtype}", {"rows": rows, "cols": cols, "dtype": dtype})


#: From about 3 us (one wave of tiny rows) to about 0.5 ms (1 GiB through HBM).
CONFIGS = [
    _config(256, 128, "f32"),
    _config(1024, 512, "f32"),
    _config(8192, 256, "f32"),
    _config(4096, 1024, "f32"),
    _config(1024, 2048, "f32"),
    _config(16384, 1024, "f32"),
    _config(4096, 4096, "f32"),
    _config(2048, 8192, "f32"),
    _config(16384, 8192, "f32"),
    _config(4096, 2048, "f16"),
    _config(512, 8192, "f16"),
    _config(16384, 4096, "f16"),
    _config(4096, 2048, "bf16"),
    _config(16384, 8192, "bf16"),
]


def make_inputs(config, generator):
    shape = (config["rows"], config["cols"])
    x = torch.randn(shape, generator=generator, device="cuda", dtype=torch.float32) * 4.0
    return (x.to(_DTYPES[config["dtype"]]),)


def main(argv=None) -> int:
    return kport_bench.bench_main(softmax_select, CONFIGS, make_inputs, "softmax", argv,
                                  description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
