"""Bench of the rotary embedding (rope) for kport's performance gate.

    python3 bench/rope_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (tokens x q heads x k heads x head_dim, dtype;
Llama-class attention shapes from one decode token to 16k prefill tokens:
launch-bound to HBM-bound) through kport_bench, so they draw the same inputs
and each timed call sits alone in its ``kport:<config>`` range. The candidate
is imported from the workspace (rope_select), never next to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import rope_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through rope_select)

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
MAX_POSITION = 8192


def _config(tokens: int, q_heads: int, k_heads: int, head_dim: int, dtype: str,
            rotary_dim: int | None = None):
    rotary_dim = rotary_dim or head_dim
    name = f"{tokens}x{q_heads}q{k_heads}kx{head_dim}"
    if rotary_dim != head_dim:
        name += f"r{rotary_dim}"
    return kport_bench.Config(f"{name}-{dtype}", {
        "tokens": tokens, "q_heads": q_heads, "k_heads": k_heads, "head_dim": head_dim,
        "rotary_dim": rotary_dim, "dtype": dtype})


#: From about 2 us (one decode token) to about 0.2 ms (16384 tokens of 48
#: heads x 128 bf16 in and out: 0.4 GB through HBM).
CONFIGS = [
    _config(1, 32, 8, 128, "bf16"),
    _config(8, 32, 8, 128, "bf16"),
    _config(64, 32, 8, 128, "bf16"),
    _config(256, 32, 8, 128, "bf16"),
    _config(1024, 32, 8, 128, "bf16"),
    _config(2048, 32, 8, 128, "f16"),
    _config(4096, 32, 8, 128, "bf16"),
    _config(8192, 32, 8, 128, "bf16"),
    _config(16384, 32, 8, 128, "bf16"),
    _config(2048, 32, 8, 128, "f32"),
    _config(4096, 64, 8, 128, "bf16"),
    _config(4096, 32, 32, 64, "f16"),
    _config(4096, 16, 16, 256, "bf16", rotary_dim=64),
    _config(8192, 8, 8, 128, "f16"),
]


def make_inputs(config, generator):
    tokens, head_dim, dtype = config["tokens"], config["head_dim"], _DTYPES[config["dtype"]]
    half = config["rotary_dim"] // 2
    q = torch.randn((tokens, config["q_heads"], head_dim), generator=generator, device="cuda")
    k = torch.randn((tokens, config["k_heads"], head_dim), generator=generator, device="cuda")
    positions = torch.randint(0, MAX_POSITION, (tokens,), generator=generator, device="cuda")
    inv_freq = 10000.0 ** (-torch.arange(half, device="cuda", dtype=torch.float32) / half)
    angles = torch.arange(MAX_POSITION, device="cuda", dtype=torch.float32)[:, None] * inv_freq
    return (positions, q.to(dtype), k.to(dtype), angles.cos(), angles.sin())


def main(argv=None) -> int:
    return kport_bench.bench_main(rope_select, CONFIGS, make_inputs, "rope", argv,
                                  description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
