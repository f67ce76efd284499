"""CUDA C++ port of the Triton row softmax: launcher for softmax_port.cu.

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

KERNEL_NAME = "softmax_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("softmax_port.cu")).read_text()

#: storage dtype -> (KPORT_DTYPE code, the same-size dtype CuPy can view it as)
_DTYPES = {
    torch.float32: (0, torch.float32),
    torch.float16: (1, torch.int16),
    torch.bfloat16: (2, torch.int16),
}
#: One load is 16 bytes when the rows allow it.
_VECTOR_BYTES = 16
#: Elements each thread keeps in registers; the reference's heuristic
#: (num_warps 16 for 8192 columns) gives 16 for long rows too.
ELEMENTS_PER_THREAD = 16
_MAX_THREADS = 1024

_kernels: dict[tuple[int, int, int, int, int], cupy.RawKernel] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}


def _kernel(device: int, dtype_code: int, vec: int, threads: int,
            items: int) -> cupy.RawKernel:
    """The kernel for one configuration, loaded on `device` (the current one)."""
    key = (device, dtype_code, vec, threads, items)
    kernel = _kernels.get(key)
    if kernel is None:
        module = cupy.RawModule(code=_SOURCE, options=(
            f"-DKPORT_DTYPE={dtype_code}", f"-DKPORT_VEC={vec}",
            f"-DKPORT_THREADS={threads}", f"-DKPORT_ITEMS={items}"))
        kernel = _kernels[key] = module.get_function(KERNEL_NAME)
    return kernel


def _next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def plan(n_cols: int, itemsize: int, aligned: bool,
         elements_per_thread: int = ELEMENTS_PER_THREAD) -> tuple[int, int, int]:
    """(vec, threads, items) for a row of `n_cols` elements.

    Vector loads need 16-byte aligned rows (`aligned`: both base pointers and
    both row strides). Threads grow with the row up to 1024 so that each
    keeps about `elements_per_thread` values; rows longer than 1024 threads
    can hold take the kernel's two-pass path.
    """
    vec = _VECTOR_BYTES // itemsize
    if not aligned or n_cols % vec:
        vec = 1
    items = max(1, elements_per_thread // vec)
    n_vecs = n_cols // vec
    threads = _next_power_of_2(-(-n_vecs // items))
    return vec, min(max(threads, 32), _MAX_THREADS), items


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def softmax_rows(rows: torch.Tensor, out: torch.Tensor,
                 elements_per_thread: int = ELEMENTS_PER_THREAD) -> torch.Tensor:
    """Softmax of each row of the 2-D `rows` into `out` (same shape and dtype).

    Rows may be strided (row stride != n_cols); elements within a row must be
    contiguous.
    """
    dtype_code, view_dtype = _DTYPES[rows.dtype]
    n_rows, n_cols = rows.shape
    if rows.stride(1) != 1 or out.stride(1) != 1:
        raise ValueError("softmax_rows: rows must be contiguous along the last dimension")
    if n_rows == 0 or n_cols == 0:
        return out
    if n_cols >= 1 << 31 or n_rows >= 1 << 31:
        raise ValueError("softmax_rows: more than 2**31 - 1 rows or columns")
    itemsize = rows.element_size()
    vec = _VECTOR_BYTES // itemsize
    aligned = (rows.data_ptr() % _VECTOR_BYTES == 0 and out.data_ptr() % _VECTOR_BYTES == 0
               and rows.stride(0) % vec == 0 and out.stride(0) % vec == 0)
    vec, threads, items = plan(n_cols, itemsize, aligned, elements_per_thread)
    stream = _cupy_stream()
    with cupy.cuda.Device(rows.device.index):
        kernel = _kernel(rows.device.index, dtype_code, vec, threads, items)
        # CuPy hands only the base pointers to the kernel; the strides go as
        # arguments.
        src = cupy.asarray(rows.view(view_dtype))
        dst = cupy.asarray(out.view(view_dtype))
        args = (dst, src, numpy.int64(rows.stride(0)), numpy.int64(out.stride(0)),
                numpy.int32(n_cols))
        if stream is None:
            kernel((n_rows,), (threads,), args)
        else:
            with stream:
                kernel((n_rows,), (threads,), args)
    return out


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a CUDA tensor, in its own dtype.

    The same contract as the reference's softmax_triton.softmax.
    """
    if x.dtype not in _DTYPES:
        raise TypeError(f"softmax: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("softmax: the input must be a CUDA tensor")
    if x.numel() == 0:
        return torch.empty_like(x)
    shape = x.shape
    n_cols = shape[-1] if x.dim() else 1
    rows = x.reshape(-1, n_cols)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    out = torch.empty((rows.shape[0], n_cols), dtype=x.dtype, device=x.device)
    softmax_rows(rows, out)
    return out.reshape(shape)
