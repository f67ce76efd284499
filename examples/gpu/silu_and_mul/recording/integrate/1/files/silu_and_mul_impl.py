"""Host glue: the candidate's entry point for the reference's test suite and bench.

tests/test_silu_and_mul.py and bench/silu_and_mul_bench.py import this module
from the workspace when they test or time the candidate (KPORT_IMPL or
KPORT_SIDE = candidate). It exposes the reference's API (silu_and_mul, DTYPES)
over the CUDA port only: nothing here imports the Triton reference, so no call
can fall back to it.
"""

from silu_and_mul_port import KERNEL_NAME, silu_and_mul, silu_and_mul_rows  # noqa: F401
import torch

#: The dtypes the operator is defined for (as in silu_and_mul_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
