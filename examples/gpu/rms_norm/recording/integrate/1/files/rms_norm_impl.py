"""Host glue: the candidate's entry point for the reference's test suite and bench.

tests/test_rms_norm.py and bench/rms_norm_bench.py import this module
from the workspace when they test or time the candidate (KPORT_IMPL or
KPORT_SIDE = candidate). It exposes the reference's API (rms_norm, DTYPES)
over the CUDA port only: nothing here imports the Triton reference, so no call
can fall back to it.
"""

from rms_norm_port import KERNEL_NAME, rms_norm, rms_norm_rows  # noqa: F401
import torch

#: The dtypes the operator is defined for (as in rms_norm_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
