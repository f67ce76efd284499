"""Bench of moe_align_block_size for kport's performance gate.

    python3 bench/moe_align_bench.py --impl reference|candidate [--workspace DIR]

Both sides run the same configs (tokens x topk over experts, block size: the
shapes of Mixtral, DeepSeek-V2-Lite, Qwen3-MoE and DeepSeek-V3 routers, from
one decode step to a long prefill) through kport_bench, so they draw the same
router ids and each timed call sits alone in its ``kport:<config>`` range.
The candidate is imported from the workspace (moe_align_select), never next
to the reference.
"""

from __future__ import annotations

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import moe_align_select  # noqa: E402

import kport_bench  # noqa: E402  (on sys.path through moe_align_select)


def _config(tokens: int, topk: int, experts: int, block_size: int, hot: int = 0):
    name = f"t{tokens}-k{topk}-e{experts}-bs{block_size}" + (f"-hot{hot}" if hot else "")
    return kport_bench.Config(name, {"tokens": tokens, "topk": topk, "experts": experts,
                                     "block_size": block_size, "hot": hot})


#: From one decode step (16 ids) to a 32k-token prefill over 256 experts.
CONFIGS = [
    _config(16, 2, 8, 16),
    _config(256, 2, 8, 64),
    _config(4096, 2, 8, 64),
    _config(16384, 2, 8, 128),
    _config(64, 6, 64, 16),
    _config(1024, 6, 64, 64),
    _config(8192, 6, 64, 64),
    _config(8192, 6, 64, 64, hot=4),
    _config(128, 8, 128, 16),
    _config(2048, 8, 128, 64),
    _config(16384, 8, 128, 128),
    _config(32, 8, 256, 16),
    _config(4096, 8, 256, 64),
    _config(32768, 8, 256, 128),
]


def make_inputs(config, generator):
    # topk distinct experts per token, as a router's top-k gives them; `hot`
    # experts take a skewed share.
    logits = torch.rand((config["tokens"], config["experts"]), generator=generator, device="cuda")
    if config["hot"]:
        logits[:, :config["hot"]] += 0.5
    ids = logits.topk(config["topk"], dim=1).indices.to(torch.int32)
    return ids, config["block_size"], config["experts"]


def _aligner(impl):
    def align(ids, block_size, experts):
        # What the bench returns is digested (KPORT_CHECK) and compared
        # element by element with the other side's: only the padded length
        # is defined to the element. The order of the ids inside a group and
        # expert_ids past the last block are free by contract (the suite
        # checks all three outputs against that contract).
        _, _, post_pad = impl.moe_align_block_size(ids, block_size, experts)
        return post_pad
    return align


def main(argv=None) -> int:
    return kport_bench.bench_main(moe_align_select, CONFIGS, make_inputs, _aligner, argv,
                                  name="moe_align", description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
