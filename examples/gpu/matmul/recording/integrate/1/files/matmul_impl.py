"""Host glue: the candidate's entry point for the reference's test suite and bench.

tests/test_matmul.py and bench/matmul_bench.py import this module from the
workspace when they test or time the candidate (KPORT_IMPL or KPORT_SIDE =
candidate). It exposes the reference's API (matmul, DTYPES) over the CUDA
port only: nothing here imports the Triton reference, so no call can fall
back to it.
"""

from matmul_port import DTYPES, KERNEL_NAME, matmul  # noqa: F401
