"""Bench of decode attention for kport's performance gate.

    python3 bench/decode_attention_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (batch, query heads over kv heads, cache
length, head_dim, dtype: Llama-style GQA 32/8 and 64/8, multi-head 32/32,
head_dim 64 models; one sequence over 32k keys to 128 sequences over 512)
through kport_bench, so they draw the same inputs and each timed call sits
alone in its ``kport:<config>`` range. Every config reads 4 MB to 270 MB of
KV cache. The candidate is imported from the workspace
(decode_attention_select), never next to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import decode_attention_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through decode_attention_select)

_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def _config(batch: int, heads: int, kv_heads: int, length: int, head_dim: int, dtype: str,
            varlen: bool = False):
    name = f"b{batch}-h{heads}-kv{kv_heads}-l{length}-d{head_dim}-{dtype}" + ("-varlen" if varlen else "")
    return kport_bench.Config(name, {"batch": batch, "heads": heads, "kv_heads": kv_heads,
                                     "length": length, "head_dim": head_dim, "dtype": dtype,
                                     "varlen": varlen})


CONFIGS = [
    _config(1, 32, 8, 1024, 128, "f16"),
    _config(1, 32, 8, 8192, 128, "bf16"),
    _config(1, 32, 8, 32768, 128, "f16"),
    _config(8, 32, 8, 4096, 128, "f16"),
    _config(32, 32, 8, 2048, 128, "bf16"),
    _config(64, 32, 8, 1024, 128, "f16"),
    _config(128, 32, 8, 512, 128, "bf16"),
    _config(16, 32, 32, 2048, 128, "f16"),
    _config(4, 64, 8, 8192, 128, "bf16"),
    _config(8, 32, 4, 16384, 128, "f16"),
    _config(16, 16, 16, 4096, 64, "f16"),
    _config(32, 8, 2, 2048, 64, "bf16"),
    _config(2, 28, 4, 6000, 128, "f16"),
    _config(32, 32, 8, 4096, 128, "f16", varlen=True),
]


def make_inputs(config, generator):
    dtype = _DTYPES[config["dtype"]]
    batch, length = config["batch"], config["length"]
    shape = (batch, length, config["kv_heads"], config["head_dim"])
    q = torch.randn((batch, config["heads"], config["head_dim"]), generator=generator,
                    device="cuda").to(dtype)
    k = torch.randn(shape, generator=generator, device="cuda").to(dtype)
    v = torch.randn(shape, generator=generator, device="cuda").to(dtype)
    if config["varlen"]:
        seq_lens = torch.randint(1, length + 1, (batch,), generator=generator, device="cuda",
                                 dtype=torch.int32)
    else:
        seq_lens = torch.full((batch,), length, dtype=torch.int32, device="cuda")
    return q, k, v, seq_lens


def main(argv=None) -> int:
    return kport_bench.bench_main(decode_attention_select, CONFIGS, make_inputs, "decode_attention", argv,
                                  description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
