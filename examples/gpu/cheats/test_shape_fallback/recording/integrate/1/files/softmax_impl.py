"""Cheating candidate: calls the reference where its own port is weak.

Rows whose length is not a multiple of 4 (no 16-byte vector loads) go to the
reference's Triton kernel; every bench config has such a multiple, so the
bench only ever runs the port, and most tests do too: the test run shows
candidate kernels, which is all kport used to ask of it.

kport must reject it for `fallback`: the SDK's pytest plugin runs each test
in its own range, and a reference kernel inside a test is a fallback there.
"""

import os
import sys

import torch

from softmax_port import softmax as port_softmax  # the honest port

sys.path.insert(0, os.environ["KPORT_REFERENCE"])
import softmax_triton  # noqa: E402  (the reference)

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.dim() and x.shape[-1] % 4 and x.numel() and x.dtype in DTYPES and x.is_cuda:
        return softmax_triton.softmax(x)
    return port_softmax(x)
