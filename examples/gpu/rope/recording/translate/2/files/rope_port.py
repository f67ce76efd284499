"""CUDA C++ port of the Triton rotary embedding: launcher for rope_port.cu.

The kernel is compiled at run time by NVRTC through CuPy's RawModule (no
build step); each (dtype, vector width, cache vector width) gets its own
module, compiled on first use and cached by CuPy on disk. Tensors stay torch
tensors: CuPy sees them through __cuda_array_interface__, without a copy, and
one launch on torch's current stream rotates q and k.
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
#: One load is 16 bytes when the heads allow it.
_VECTOR_BYTES = 16
#: Threads a block aims at (whole heads of it); a head of more vectors than
#: this gets a block of its own, up to the kernel's 1024.
_BLOCK_THREADS = 256
_MAX_THREADS = 1024
_MAX_GRID_Y = 65535

_kernels: dict[tuple[int, int, int, int], cupy.RawKernel] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}


def _kernel(device: int, dtype_code: int, vec: int, cache_vec: int) -> cupy.RawKernel:
    """The kernel for one configuration, loaded on `device` (the current one)."""
    key = (device, dtype_code, vec, cache_vec)
    kernel = _kernels.get(key)
    if kernel is None:
        module = cupy.RawModule(code=_SOURCE, options=(
            f"-DKPORT_DTYPE={dtype_code}", f"-DKPORT_VEC={vec}",
            f"-DKPORT_CACHE_VEC={cache_vec}"))
        kernel = _kernels[key] = module.get_function(KERNEL_NAME)
    return kernel


def vector_width(itemsize: int, lengths: tuple[int, ...], pointers: tuple[int, ...]) -> int:
    """Elements per load: 16 bytes' worth, halved until it divides every
    length and stride and every base pointer is aligned to it (1 at worst)."""
    vec = _VECTOR_BYTES // itemsize
    while vec > 1 and (any(n % vec for n in lengths)
                       or any(p % (vec * itemsize) for p in pointers)):
        vec //= 2
    return vec


def plan(n_heads: int, head_dim: int, half: int, vec: int) -> tuple[int, int, int]:
    """(threads, heads per block, head blocks): whole heads per block, about
    _BLOCK_THREADS threads each."""
    items = (head_dim - half) // vec
    if items > _MAX_THREADS:
        raise ValueError(f"rope: a head of {head_dim} elements needs {items} threads "
                         f"(more than {_MAX_THREADS})")
    heads_per_block = max(1, min(n_heads, _BLOCK_THREADS // items))
    blocks = -(-n_heads // heads_per_block)
    if blocks > _MAX_GRID_Y:
        raise ValueError(f"rope: {n_heads} heads need {blocks} head blocks")
    return heads_per_block * items, heads_per_block, blocks


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
    n_k_heads = k.shape[1]
    if tokens == 0 or n_q_heads + n_k_heads == 0:
        return q_out, k_out
    dtype_code, view_dtype = _DTYPES[q.dtype]
    rest = head_dim - 2 * half
    vec = vector_width(q.element_size(),
                       (half, rest, q.stride(0), q.stride(1), k.stride(0), k.stride(1)),
                       (q.data_ptr(), k.data_ptr(), q_out.data_ptr(), k_out.data_ptr()))
    cache_ok = (cos_cache.stride(0) % 4 == 0 and cos_cache.data_ptr() % 16 == 0
                and sin_cache.data_ptr() % 16 == 0)
    cache_vec = 4 if vec % 4 == 0 and cache_ok else 1
    threads, heads_per_block, blocks = plan(n_q_heads + n_k_heads, head_dim, half, vec)
    stream = _cupy_stream()
    with cupy.cuda.Device(q.device.index):
        kernel = _kernel(q.device.index, dtype_code, vec, cache_vec)
        args = (cupy.asarray(q_out.view(view_dtype)), cupy.asarray(k_out.view(view_dtype)),
                cupy.asarray(q.view(view_dtype)), cupy.asarray(k.view(view_dtype)),
                cupy.asarray(positions), cupy.asarray(cos_cache), cupy.asarray(sin_cache),
                numpy.int64(q.stride(0)), numpy.int64(q.stride(1)), numpy.int64(k.stride(0)),
                numpy.int64(k.stride(1)), numpy.int64(cos_cache.stride(0)),
                numpy.int32(n_q_heads), numpy.int32(n_k_heads), numpy.int32(head_dim),
                numpy.int32(half), numpy.int32(heads_per_block))
        grid = (tokens, blocks)
        if stream is None:
            kernel(grid, (threads,), args)
        else:
            with stream:
                kernel(grid, (threads,), args)
    return q_out, k_out
