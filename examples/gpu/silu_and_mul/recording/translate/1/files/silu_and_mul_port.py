"""CUDA C++ port of the Triton silu_and_mul: launcher for silu_and_mul_port.cu.

The kernel is compiled at run time by NVRTC through CuPy's RawModule (no
build step); each (dtype, vector width, threads, items) gets its own module,
compiled on first use and cached by CuPy on disk. Tensors stay torch tensors:
CuPy sees them through __cuda_array_interface__, without a copy, and the
kernel runs on torch's current stream.
"""

from __future__ import annotations

import pathlib

import cupy
import numpy
import torch

KERNEL_NAME = "silu_and_mul_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("silu_and_mul_port.cu")).read_text()

#: storage dtype -> (KPORT_DTYPE code, the same-size dtype CuPy can view it as)
_DTYPES = {
    torch.float32: (0, torch.float32),
    torch.float16: (1, torch.int16),
    torch.bfloat16: (2, torch.int16),
}
#: One load is 16 bytes when the rows allow it.
_VECTOR_BYTES = 16
#: Threads per block: 256 vectors of one row, so a decode token (d = 14336
#: bf16: 1792 vectors) still spreads over 7 SMs, as the reference's 14
#: programs of 1024 columns do.
_MAX_THREADS = 256
_MAX_GRID_Y = 65535

_kernels: dict[tuple[int, int, int, int, int], cupy.RawKernel] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}


def _kernel(device: int, dtype_code: int, vec: int, threads: int,
            items: int) -> cupy.RawKernel:
    """The kernel for one configuration, loaded on `device` (the current one)."""
    key = (device, dtype_code, vec, threads, items)
    kernel = _kernels.get(key)
    if kernel is None:
        module = cupy.RawModule(code=_SOURCE, options=(
            f"-DKPORT_DTYPE={dtype_code}", f"-DKPORT_VEC={vec}", f"-DKPORT_THREADS={threads}",
            f"-DKPORT_ITEMS={items}"))
        kernel = _kernels[key] = module.get_function(KERNEL_NAME)
    return kernel


def _next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def vector_width(itemsize: int, d: int, strides: tuple[int, ...],
                 pointers: tuple[int, ...]) -> int:
    """Elements per load: 16 bytes' worth, halved until it divides d and every
    row stride and every base pointer is aligned to it (1 at worst)."""
    vec = _VECTOR_BYTES // itemsize
    while vec > 1 and (d % vec or any(s % vec for s in strides)
                       or any(p % (vec * itemsize) for p in pointers)):
        vec //= 2
    return vec


def plan(d: int, vec: int, itemsize: int) -> tuple[int, int, int]:
    """(threads, column blocks, vectors a thread) for a row of d outputs read
    `vec` elements of `itemsize` bytes at a time: a thread holds 16 bytes of
    each half, in one vector or several narrow ones."""
    items = max(1, _VECTOR_BYTES // (vec * itemsize))
    n_vecs = d // vec
    threads = min(_MAX_THREADS, max(32, _next_power_of_2(-(-n_vecs // items))))
    return threads, -(-n_vecs // (threads * items)), items


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def silu_and_mul_rows(rows: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """silu(rows[:, :d]) * rows[:, d:] into `out` ([n, d], same dtype).

    Rows may be strided (row stride != 2d); elements within a row must be
    contiguous.
    """
    dtype_code, view_dtype = _DTYPES[rows.dtype]
    n_rows, two_d = rows.shape
    d = two_d // 2
    if rows.stride(1) != 1 or out.stride(1) != 1:
        raise ValueError("silu_and_mul_rows: rows must be contiguous along the last dimension")
    if n_rows == 0 or d == 0:
        return out
    if d >= 1 << 31 or n_rows >= 1 << 31:
        raise ValueError("silu_and_mul_rows: more than 2**31 - 1 rows or columns")
    vec = vector_width(rows.element_size(), d, (rows.stride(0), out.stride(0)),
                       (rows.data_ptr(), out.data_ptr()))
    threads, col_blocks, items = plan(d, vec, rows.element_size())
    if col_blocks > _MAX_GRID_Y:
        raise ValueError(f"silu_and_mul_rows: d = {d} needs {col_blocks} column blocks "
                         f"(more than {_MAX_GRID_Y})")
    stream = _cupy_stream()
    with cupy.cuda.Device(rows.device.index):
        kernel = _kernel(rows.device.index, dtype_code, vec, threads, items)
        # CuPy hands only the base pointers to the kernel; the strides go as
        # arguments.
        src = cupy.asarray(rows.view(view_dtype))
        dst = cupy.asarray(out.view(view_dtype))
        args = (dst, src, numpy.int64(rows.stride(0)), numpy.int64(out.stride(0)),
                numpy.int32(d))
        grid = (n_rows, col_blocks)
        if stream is None:
            kernel(grid, (threads,), args)
        else:
            with stream:
                kernel(grid, (threads,), args)
    return out


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """silu(x[..., :d]) * x[..., d:] for a CUDA tensor x of shape [..., 2d].

    The same contract as the reference's silu_and_mul_triton.silu_and_mul.
    """
    if x.dtype not in _DTYPES:
        raise TypeError(f"silu_and_mul: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("silu_and_mul: the input must be a CUDA tensor")
    if x.dim() == 0 or x.shape[-1] % 2:
        raise ValueError("silu_and_mul: the last dimension must be even (gate and up halves)")
    d = x.shape[-1] // 2
    out_shape = (*x.shape[:-1], d)
    if x.numel() == 0:
        return torch.empty(out_shape, dtype=x.dtype, device=x.device)
    rows = x.reshape(-1, 2 * d)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    out = torch.empty((rows.shape[0], d), dtype=x.dtype, device=x.device)
    silu_and_mul_rows(rows, out)
    return out.reshape(out_shape)
