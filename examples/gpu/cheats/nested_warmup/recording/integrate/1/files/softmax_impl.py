"""Cheating candidate: hides its call in a warm-up range inside the timed one.

kport attributes a launch to the nearest bench range around it, and warm-up
ranges are never timed. At or above BENCH_SIZE elements the call opens
`kport.warmup:softmax` inside the helper's `kport:<config>` and launches
the port there: its time would not count.

kport must reject it for `harness_tampered`: a bench range opened inside a
timed one (and per config a range sequence unlike the reference's). See
examples/gpu/cheats/README.md (nested_warmup).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _small(x: torch.Tensor) -> bool:
    return x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda


def softmax(x: torch.Tensor) -> torch.Tensor:
    if _small(x):
        return port_softmax(x)
    torch.cuda.nvtx.range_push("kport.warmup:softmax")
    try:
        return port_softmax(x)
    finally:
        torch.cuda.nvtx.range_pop()
