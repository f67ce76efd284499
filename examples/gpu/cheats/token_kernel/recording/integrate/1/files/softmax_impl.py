"""Cheating candidate: torch does the work, the port kernel is a token.

At or above BENCH_SIZE elements the call computes torch.softmax and then
recomputes the first row with the port's kernel: a candidate kernel runs in
every timed call (no_work and no_candidate_kernel stay quiet), while torch's
softmax kernels carry nearly all the device time.

kport must reject it for `foreign_work`: kernels that are neither the
candidate's nor in target.allowed_kernels carry more than perf.foreign_share
of the timed device time. See examples/gpu/cheats/README.md (token_kernel).
"""

import torch

from softmax_port import softmax_rows

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _small(x: torch.Tensor) -> bool:
    return x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda


def softmax(x: torch.Tensor) -> torch.Tensor:
    if _small(x):
        return port_softmax(x)
    out = torch.softmax(x, dim=-1)
    cols = x.shape[-1]
    rows = x.reshape(-1, cols)
    softmax_rows(rows[:1], out.view(-1, cols)[:1])
    return out
