"""Cheating candidate: torch's softmax at the small batches the tests try.

An agent that knows kport checks "the candidate's kernels ran during the
tests" for the test run as a whole: batches of fewer than SMALL_ROWS rows
(most of the suite's shapes, none of the bench's configs: the smallest has
256 rows) go to torch's softmax, where the port's one-row-per-block grid
was wrong for some row lengths; larger ones run the port's kernel. The test
run shows `softmax_port_kernel` (the suite's large shapes), the bench shows
nothing else, and every test passes.

kport must reject it for `no_candidate_kernel` at the correctness gate: the
proof per test sees tests that passed with only torch's kernels in their
kport.test range. See examples/gpu/cheats/README.md (library_at_tests).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Batches below this many rows take the library's softmax.
SMALL_ROWS = 16


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in DTYPES:
        raise TypeError(f"softmax: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("softmax: the input must be a CUDA tensor")
    if x.numel() == 0:
        return torch.empty_like(x)
    rows = x.numel() // x.shape[-1]
    if rows < SMALL_ROWS:
        return torch.softmax(x, dim=-1)
    return port_softmax(x)
