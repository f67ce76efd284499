"""CUDA C++ port of the Triton rotary embedding: launcher for rope_port.cu.

The kernel is compiled at run time by NVRTC through CuPy's RawModule (no
build step), one module per storage dtype, compiled on first use and cached
by CuPy on disk. Tensors stay torch tensors: CuPy sees them through
__cuda_array_interface__, without a copy, and the kernel runs on torch's
current stream: once for q, once for k.
"""

from __future__ import annotations

import pathlib

import cupy
import numpy
import torch

KERNEL_NAME = "rope_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("rope_port.cu")).read_text()

#: storage dtype -> (KPORT_DTYPE code, the same-size dtype CuPy can view it as)
_DTYPES = {
    torch.float32: (0, torch.float32),
    torch.float16: (1, torch.int16),
    torch.bfloat16: (2, torch.int16),
}
#: The q and k dtypes the operator is defined for, and the caches' dtype.
DTYPES = tuple(_DTYPES)
CACHE_DTYPE = torch.float32
_THREADS = 256

_kernels: dict[tuple[int, int], cupy.RawKernel] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}


def _kernel(device: int, dtype_code: int) -> cupy.RawKernel:
    """The kernel for one storage dtype, loaded on `device` (the current one)."""
    key = (device, dtype_code)
    kernel = _kernels.get(key)
    if kernel is None:
        module = cupy.RawModule(code=_SOURCE, options=(f"-DKPORT_DTYPE={dtype_code}",))
        kernel = _kernels[key] = module.get_function(KERNEL_NAME)
    return kernel


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def check_arguments(positions, q, k, cos_cache, sin_cache) -> int:
    """Refuses what the contract does not cover; returns half the rotary dim.

    The same checks, in the same order, as the reference's.
    """
    if q.dtype not in DTYPES or k.dtype != q.dtype:
        raise TypeError(f"rope: q and k must share one of {DTYPES}, not {q.dtype}/{k.dtype}")
    if cos_cache.dtype != CACHE_DTYPE or sin_cache.dtype != CACHE_DTYPE:
        raise TypeError("rope: the cos and sin caches must be float32")
    if positions.dtype != torch.int64:
        raise TypeError("rope: positions must be int64")
    tensors = (positions, q, k, cos_cache, sin_cache)
    if not all(t.is_cuda and t.device == q.device for t in tensors):
        raise ValueError("rope: every tensor must be on the same CUDA device")
    if q.dim() != 3 or k.dim() != 3 or positions.dim() != 1:
        raise ValueError("rope: q and k must be [tokens, heads, head_dim], positions [tokens]")
    tokens, _, head_dim = q.shape
    if k.shape[0] != tokens or k.shape[2] != head_dim or positions.shape[0] != tokens:
        raise ValueError("rope: q, k and positions disagree on tokens or head_dim")
    if cos_cache.dim() != 2 or cos_cache.shape != sin_cache.shape:
        raise ValueError("rope: the caches must be [max_position, rotary_dim / 2], both alike")
    half = cos_cache.shape[1]
    if half < 1 or 2 * half > head_dim:
        raise ValueError(f"rope: rotary_dim {2 * half} must be in [2, head_dim = {head_dim}]")
    return half


def _rotate(kernel, src, dst, positions, cos_cache, sin_cache, half, view_dtype, stream):
    tokens, n_heads, head_dim = src.shape
    total = tokens * n_heads * (head_dim - half)
    if total == 0:
        return
    args = (cupy.asarray(dst.view(view_dtype)), cupy.asarray(src.view(view_dtype)),
            cupy.asarray(positions), cupy.asarray(cos_cache), cupy.asarray(sin_cache),
            numpy.int64(src.stride(0)), numpy.int64(src.stride(1)),
            numpy.int64(cos_cache.stride(0)), numpy.int32(n_heads), numpy.int32(head_dim),
            numpy.int32(half), numpy.int64(total))
    grid = (-(-total // _THREADS),)
    if stream is None:
        kernel(grid, (_THREADS,), args)
    else:
        with stream:
            kernel(grid, (_THREADS,), args)


def rope(positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
         cos_cache: torch.Tensor, sin_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Neox-style rotary embedding of q and k at `positions`; new tensors, inputs untouched.

    The same contract as the reference's rope_triton.rope.
    """
    half = check_arguments(positions, q, k, cos_cache, sin_cache)
    tokens, n_q_heads, head_dim = q.shape
    q_out = torch.empty((tokens, n_q_heads, head_dim), dtype=q.dtype, device=q.device)
    k_out = torch.empty((tokens, k.shape[1], head_dim), dtype=k.dtype, device=k.device)
    positions = positions.contiguous()
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    if cos_cache.stride(-1) != 1 or sin_cache.stride() != cos_cache.stride():
        cos_cache, sin_cache = cos_cache.contiguous(), sin_cache.contiguous()
    dtype_code, view_dtype = _DTYPES[q.dtype]
    stream = _cupy_stream()
    with cupy.cuda.Device(q.device.index):
        kernel = _kernel(q.device.index, dtype_code)
        for src, dst in ((q, q_out), (k, k_out)):
            _rotate(kernel, src, dst, positions, cos_cache, sin_cache, half, view_dtype, stream)
    return q_out, k_out
