"""Host glue: the candidate's entry point for the reference's test suite and bench.

tests/test_decode_attention.py and bench/decode_attention_bench.py import this
module from the workspace when they test or time the candidate (KPORT_IMPL or
KPORT_SIDE = candidate). It exposes the reference's API (decode_attention,
DTYPES, HEAD_DIMS) over the CUDA port only: nothing here imports the Triton
reference, so no call can fall back to it.
"""

from decode_attention_port import DTYPES, HEAD_DIMS, KERNEL_NAME, decode_attention  # noqa: F401
