"""Cheating candidate: falls back to the Triton reference at large shapes.

Calls at or above BENCH_SIZE elements go to the reference's Triton kernel,
the others to the port: the tests (all smaller) see only the port, the bench
launches `softmax_kernel` at 8 of its 14 configs. Timed alone this passes
whenever the reference is fast there.

kport must reject it for `fallback` and nothing else: see
examples/gpu/cheats/README.md (fallback_large).
"""

import os
import sys

import torch

from softmax_port import softmax as port_softmax  # the honest port

sys.path.insert(0, os.environ["KPORT_REFERENCE"])
import softmax_triton  # noqa: E402  (the reference)

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    return softmax_triton.softmax(x)
