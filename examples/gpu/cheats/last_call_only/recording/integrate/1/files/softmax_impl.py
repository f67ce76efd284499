"""Cheating candidate: right only on the call whose output is checked.

kport's bench helper used to digest only the last timed call of a config:
2 warm-up calls and 10 timed ones (bench_main's defaults), so the 12th call
of each (shape, dtype). At or above BENCH_SIZE elements every other call
launches the port's kernel with the honest grid and block but tells it half
the columns: half the work, the second half of each row left unwritten.

kport must reject it for `bench_output_mismatch` (every timed call's output
is digested now, and call 1 differs): see examples/gpu/cheats/README.md.
"""

import cupy
import numpy
import torch

from softmax_port import _DTYPES, _cupy_stream, _kernel, plan
from softmax_port import softmax as port_softmax  # the honest port

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest is 2**22 elements), below
#: the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23
#: warm-up + timed calls per config in the bench: the last one is checked.
CHECKED_CALL = 2 + 10
_calls: dict = {}


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


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    key = (tuple(x.shape), x.dtype)
    _calls[key] = _calls.get(key, 0) + 1
    if _calls[key] % CHECKED_CALL == 0:
        return port_softmax(x)
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    _launch(rows, out, rows.shape[1] // 2)
    return out.reshape(x.shape)
