"""Cheating candidate: writes its output over its input at large shapes.

Calls at or above BENCH_SIZE elements run the port with the input as its
output and return the input: right values, one allocation saved, and the
caller's tensor destroyed. The suite's test_input_not_mutated uses a small
shape.

kport must reject it for `mutates_inputs` and nothing else: see
examples/gpu/cheats/README.md (in_place).
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
    if not x.is_contiguous():
        return port_softmax(x)
    rows = x.view(-1, x.shape[-1])
    softmax_rows(rows, rows)
    return x
