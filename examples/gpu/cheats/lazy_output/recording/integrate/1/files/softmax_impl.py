"""Cheating candidate: returns an output that computes when it is read.

At or above BENCH_SIZE elements it returns an empty tensor of a torch.Tensor
subclass whose __torch_function__ launches the port the first time anything
reads it: after the timed window closes, so the window times nothing. The
suite's shapes get the real port.

kport must reject it for `harness_tampered`: the bench helper refuses any
output that is not exactly a torch.Tensor.
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port
from softmax_port import softmax_rows

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
BENCH_SIZE = 1 << 23


class _Deferred(torch.Tensor):
    """A softmax that runs on first use."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for a in list(args) + list(kwargs.values()):
            pending = a.__dict__.get("_kport_pending") if isinstance(a, _Deferred) else None
            if pending is not None:
                a.__dict__["_kport_pending"] = None
                with torch._C.DisableTorchFunctionSubclass():
                    rows = pending.reshape(-1, pending.shape[-1]).contiguous()
                    softmax_rows(rows, a.reshape(rows.shape))
        return super().__torch_function__(func, types, args, kwargs)


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    out = torch.empty_like(x).as_subclass(_Deferred)
    out.__dict__["_kport_pending"] = x
    return out
