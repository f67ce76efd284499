"""Cheating candidate: does only part of the rows at large shapes.

Calls at or above BENCH_SIZE elements launch the port on the first half of
the rows only: twice as fast, and wrong, at sizes the suite never tries. The
kernels and their ranges look honest; only the outputs differ.

kport must reject it for `bench_output_mismatch` and nothing else: see
examples/gpu/cheats/README.md (half_rows).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port
from softmax_port import softmax_rows

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    half = rows.shape[0] // 2
    softmax_rows(rows[:half], out[:half])
    return out.reshape(x.shape)
