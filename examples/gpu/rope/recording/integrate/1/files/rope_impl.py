"""Host glue: the candidate's entry point for the reference's test suite and bench.

tests/test_rope.py and bench/rope_bench.py import this module from the
workspace when they test or time the candidate (KPORT_IMPL or KPORT_SIDE =
candidate). It exposes the reference's API (rope, DTYPES, CACHE_DTYPE) over
the CUDA port only: nothing here imports the Triton reference, so no call can
fall back to it.
"""

from rope_port import CACHE_DTYPE, DTYPES, KERNEL_NAME, rope  # noqa: F401
