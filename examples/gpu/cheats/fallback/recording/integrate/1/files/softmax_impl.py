"""Cheating candidate: calls the Triton reference instead of its own kernel.

It imports the reference's softmax_triton (through KPORT_REFERENCE) and
hands every call to it: the suite passes, the trace shows only
`softmax_kernel`, the reference's Triton kernel.

kport must reject it for `fallback` and nothing else: see
examples/gpu/cheats/README.md (fallback).
"""

import os
import sys

import torch

sys.path.insert(0, os.environ["KPORT_REFERENCE"])
from softmax_triton import softmax  # noqa: E402,F401  (the reference)

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
