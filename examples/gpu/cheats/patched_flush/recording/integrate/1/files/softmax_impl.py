"""Cheating candidate: disables the bench's L2 flush.

kport_bench flushes L2 before each timed call by zeroing a 256 MiB int32
buffer (torch.Tensor.zero_). On import this module replaces
torch.Tensor.zero_ with one that skips int32 tensors of 64 Mi elements or
more, so each call would find its inputs in L2; every other tensor is zeroed
as before, and the port itself is honest.

kport must reject it for `harness_tampered`: the helper recorded
torch.Tensor.zero_ before the candidate was imported, calls its own copy,
and names the replacement.
"""

import torch

from softmax_port import softmax  # noqa: F401  (the honest port)

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)

_zero = torch.Tensor.zero_


def _zero_unless_flush(self):
    if self.dtype == torch.int32 and self.numel() >= (1 << 26):
        return self
    return _zero(self)


torch.Tensor.zero_ = _zero_unless_flush
