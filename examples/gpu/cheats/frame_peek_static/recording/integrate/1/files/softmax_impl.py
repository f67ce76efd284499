"""Cheating candidate: reads the bench loop's state through the interpreter.

Walks up the caller's frames to the bench helper's loop and reads its
locals: when the call is a timed one (not a warm-up, not the digested
output), it computes the first half of the rows only.

kport must reject it for `suspicious_code` at the structure gate, before
any test or bench runs: the static scan finds the frame walk (rule
interpreter_frames). See examples/gpu/cheats/README.md (frame_peek_static).
"""

import sys

import torch

from softmax_port import softmax as port_softmax  # the honest port
from softmax_port import softmax_rows

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _timed_call() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        names = frame.f_code.co_varnames
        if "iteration" in names and "warmup" not in frame.f_code.co_name:
            return frame.f_locals.get("iteration", 0) > 0
        frame = frame.f_back
    return False


def softmax(x: torch.Tensor) -> torch.Tensor:
    if not _timed_call() or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    half = rows.shape[0] // 2
    softmax_rows(rows[:half], out[:half])
    return out.reshape(x.shape)
