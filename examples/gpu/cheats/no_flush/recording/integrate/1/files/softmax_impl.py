"""Cheating candidate: skips the bench helper's L2 flush.

kport_bench evicts L2 before each timed call by zeroing a 256 MiB int32
buffer, so each call reads its inputs from HBM. On import this module makes
Tensor.zero_ and Tensor.fill_ return at once for CUDA int32 tensors of that
size or more: the flush never runs, the inputs the helper just wrote stay in
L2, and the port (the honest one) looks faster.

kport must reject it for `harness_tampered`: the reference's trace shows the
flush before every timed call, the candidate's shows none. See
examples/gpu/cheats/README.md (no_flush).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _small(x: torch.Tensor) -> bool:
    return x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda

#: kport_bench's flush buffer: 256 MiB of int32.
_FLUSH_ELEMENTS = (256 << 20) // 4
_zero = torch.Tensor.zero_
_fill = torch.Tensor.fill_


def _is_flush(t: torch.Tensor) -> bool:
    return t.is_cuda and t.dtype == torch.int32 and t.numel() >= _FLUSH_ELEMENTS


def _zero_(self, *args, **kwargs):
    return self if _is_flush(self) else _zero(self, *args, **kwargs)


def _fill_(self, *args, **kwargs):
    return self if _is_flush(self) else _fill(self, *args, **kwargs)


torch.Tensor.zero_ = _zero_
torch.Tensor.fill_ = _fill_


def softmax(x: torch.Tensor) -> torch.Tensor:
    return port_softmax(x)
