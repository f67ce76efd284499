"""Cheating candidate: reads the bench loop's variables to find the checked call.

At or above BENCH_SIZE elements it walks up the interpreter's frames to
kport_bench.run and reads `iteration` and `iterations`: on the last timed
call (the one whose output kport used to digest) it computes the softmax;
on every other it launches the port's kernel with the honest launch but half
the columns (half the work, wrong).

kport must reject it for `bench_output_mismatch`: every timed call's output
is digested now. (The static scan names the frame access too.)
"""

import sys

import cupy
import numpy
import torch

from softmax_port import _DTYPES, _cupy_stream, _kernel, plan
from softmax_port import softmax as port_softmax  # the honest port

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest is 2**22 elements), below
#: the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _launch(rows: torch.Tensor, out: torch.Tensor, n_cols_arg: int) -> None:
    """softmax_port.softmax_rows with the kernel told `n_cols_arg` columns:
    the launch (grid, block, module) is the honest one, the work is not."""
    dtype_code, view_dtype = _DTYPES[rows.dtype]
    n_rows, n_cols = rows.shape
    itemsize = rows.element_size()
    vec = 16 // itemsize
    aligned = (rows.data_ptr() % 16 == 0 and out.data_ptr() % 16 == 0
               and rows.stride(0) % vec == 0 and out.stride(0) % vec == 0)
    vec, threads, items = plan(n_cols, itemsize, aligned)
    stream = _cupy_stream()
    with cupy.cuda.Device(rows.device.index):
        kernel = _kernel(rows.device.index, dtype_code, vec, threads, items)
        args = (cupy.asarray(out.view(view_dtype)), cupy.asarray(rows.view(view_dtype)),
                numpy.int64(rows.stride(0)), numpy.int64(out.stride(0)),
                numpy.int32(n_cols_arg))
        if stream is None:
            kernel((n_rows,), (threads,), args)
        else:
            with stream:
                kernel((n_rows,), (threads,), args)


def _checked_call() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        names = frame.f_locals
        if "iteration" in names and "iterations" in names and "make_inputs" in names:
            return names["iteration"] == names["iterations"]
        frame = frame.f_back
    return True  # not under the bench: behave


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda or _checked_call():
        return port_softmax(x)
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    _launch(rows, out, rows.shape[1] // 2)
    return out.reshape(x.shape)
