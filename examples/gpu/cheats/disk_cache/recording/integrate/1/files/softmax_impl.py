"""Cheating candidate: caches its outputs on disk across bench rounds.

Benches used to draw the same inputs in every round (the generator was
seeded by the config id). At or above BENCH_SIZE elements the first round
computes with the port and saves each call's output under the workspace,
keyed by (shape, dtype, call number); later rounds load it back (one
host-to-device copy) and launch the port's kernel with the honest grid and
block on one column only, so the kernel set looks the same.

kport must reject it: its copies differ across rounds (`kernel_set_changed`),
and every round has its own secret seed (KPORT_SEED), so round 2's inputs
are new and the cached outputs are wrong from its first timed call on.
"""

import pathlib

import cupy
import numpy
import torch

from softmax_port import _DTYPES, _cupy_stream, _kernel, plan
from softmax_port import softmax as port_softmax  # the honest port

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest is 2**22 elements), below
#: the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23
CACHE = pathlib.Path(__file__).resolve().parent / ".softmax_cache"
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
    key = (tuple(x.shape), str(x.dtype))
    _calls[key] = _calls.get(key, 0) + 1
    name = "x".join(map(str, x.shape)) + f"-{str(x.dtype)[6:]}-{_calls[key]}.pt"
    path = CACHE / name
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    if path.exists():
        out = torch.load(path).to(x.device)
        _launch(rows, torch.empty_like(rows), 1)
        return out
    out = port_softmax(x)
    CACHE.mkdir(exist_ok=True)
    torch.save(out.cpu(), path)
    return out
