"""CUDA C++ port of the Triton RMS norm: launcher for rms_norm_port.cu.

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

KERNEL_NAME = "rms_norm_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("rms_norm_port.cu")).read_text()

#: storage dtype -> (KPORT_DTYPE code, the same-size dtype CuPy can view it as)
_DTYPES = {
    torch.float32: (0, torch.float32),
    torch.float16: (1, torch.int16),
    torch.bfloat16: (2, torch.int16),
}
#: The reference's limit (Liger's): one row of at most 64 KiB.
MAX_ROW_BYTES = 65536
#: One load is 16 bytes when the rows allow it.
_VECTOR_BYTES = 16
#: NVRTC options added to every module (tuning knobs of rms_norm_port.cu,
#: such as -DKPORT_MIN_BLOCKS=2; none by default).
EXTRA_OPTIONS: tuple[str, ...] = ()

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
            f"-DKPORT_THREADS={threads}", f"-DKPORT_ITEMS={items}") + EXTRA_OPTIONS)
        kernel = _kernels[key] = module.get_function(KERNEL_NAME)
    return kernel


def _next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def vector_width(itemsize: int, n: int, strides: tuple[int, ...],
                 pointers: tuple[int, ...]) -> int:
    """Elements per load: 16 bytes' worth, halved until it divides n and every
    row stride and every base pointer is aligned to it (1 at worst)."""
    vec = _VECTOR_BYTES // itemsize
    while vec > 1 and (n % vec or any(s % vec for s in strides)
                       or any(p % (vec * itemsize) for p in pointers)):
        vec //= 2
    return vec


def reference_warps(n: int) -> int:
    """The warps the reference gives a row of n elements (Liger's calculate_settings)."""
    block = _next_power_of_2(n)
    if block >= 32768:
        return 32
    if block >= 8192:
        return 16
    if block >= 2048:
        return 8
    return 4


def plan(n: int, vec: int) -> tuple[int, int]:
    """(threads, items) for a row of n elements read `vec` at a time.

    The reference's block shape: as many threads as its warps hold, each
    keeping the vectors it strides over in registers. Matching its threads
    keeps the registers per block, hence the resident rows per SM, where
    the reference has them (translate/2 grew blocks to 1024 threads on wide
    rows: one resident block per SM, and nothing to overlap its reduction).
    """
    threads = 32 * reference_warps(n)
    n_vecs = n // vec
    items = max(1, -(-n_vecs // threads))
    # At most 32 elements a thread within the 64 KiB row limit (Liger's
    # warps grow with the row); more would spill.
    if items * vec > 32:
        raise ValueError(f"rms_norm: a row of {n} elements does not fit one block")
    return threads, items


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def rms_norm_rows(rows: torch.Tensor, weight: torch.Tensor, eps: float,
                  out: torch.Tensor) -> torch.Tensor:
    """RMS norm of each row of the 2-D `rows` into `out` (same shape and dtype).

    Rows may be strided; elements within a row and the weight must be
    contiguous.
    """
    dtype_code, view_dtype = _DTYPES[rows.dtype]
    n_rows, n = rows.shape
    if rows.stride(1) != 1 or out.stride(1) != 1 or not weight.is_contiguous():
        raise ValueError("rms_norm_rows: rows and weight must be contiguous along the "
                         "last dimension")
    if n_rows == 0 or n == 0:
        return out
    if n_rows >= 1 << 31:
        raise ValueError("rms_norm_rows: more than 2**31 - 1 rows")
    vec = vector_width(rows.element_size(), n, (rows.stride(0), out.stride(0)),
                       (rows.data_ptr(), out.data_ptr(), weight.data_ptr()))
    threads, items = plan(n, vec)
    stream = _cupy_stream()
    with cupy.cuda.Device(rows.device.index):
        kernel = _kernel(rows.device.index, dtype_code, vec, threads, items)
        args = (cupy.asarray(out.view(view_dtype)), cupy.asarray(rows.view(view_dtype)),
                cupy.asarray(weight.view(view_dtype)), numpy.int64(rows.stride(0)),
                numpy.int64(out.stride(0)), numpy.int32(n), numpy.float32(eps))
        if stream is None:
            kernel((n_rows,), (threads,), args)
        else:
            with stream:
                kernel((n_rows,), (threads,), args)
    return out


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMS norm over the last dimension of a CUDA tensor, in its own dtype.

    The same contract as the reference's rms_norm_triton.rms_norm.
    """
    if x.dtype not in _DTYPES:
        raise TypeError(f"rms_norm: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("rms_norm: the input must be a CUDA tensor")
    if x.dim() == 0:
        raise ValueError("rms_norm: the input needs a last dimension")
    n = x.shape[-1]
    if weight.shape != (n,) or weight.dtype != x.dtype or weight.device != x.device:
        raise ValueError(f"rms_norm: weight must be [{n}] of {x.dtype} on {x.device}")
    if n * x.element_size() > MAX_ROW_BYTES:
        raise ValueError(f"rms_norm: rows of {n} elements are over {MAX_ROW_BYTES} bytes")
    if x.numel() == 0:
        return torch.empty_like(x)
    rows = x.reshape(-1, n)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    out = torch.empty((rows.shape[0], n), dtype=x.dtype, device=x.device)
    rms_norm_rows(rows, weight.contiguous(), eps, out)
    return out.reshape(x.shape)
