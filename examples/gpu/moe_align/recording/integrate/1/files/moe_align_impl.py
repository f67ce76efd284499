"""Host glue: the candidate's entry point for the reference's test suite and bench.

tests/test_moe_align.py and bench/moe_align_bench.py import this module from
the workspace when they test or time the candidate (KPORT_IMPL or KPORT_SIDE =
candidate). It exposes the reference's API (moe_align_block_size, ID_DTYPES)
over the CUDA port only: nothing here imports the Triton reference, so no
call can fall back to it.
"""

from moe_align_port import ID_DTYPES, KERNEL_NAME, moe_align_block_size  # noqa: F401
