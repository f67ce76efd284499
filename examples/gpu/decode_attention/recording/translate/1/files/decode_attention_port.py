"""CUDA C++ port of the Triton decode attention: launcher for decode_attention_port.cu.

The kernels are compiled at run time by NVRTC through CuPy's RawModule (no
build step); each (dtype, head_dim, heads per block, lanes per key) gets its
own module, compiled on first use and cached by CuPy on disk. Tensors stay
torch tensors: CuPy sees them through __cuda_array_interface__, without a
copy, and the kernels run on torch's current stream.
"""

from __future__ import annotations

import math
import pathlib

import cupy
import numpy
import torch

KERNEL_NAME = "decode_attention_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("decode_attention_port.cu")).read_text()

#: storage dtype -> KPORT_DTYPE code; CuPy sees both as int16.
_DTYPES = {torch.float16: 1, torch.bfloat16: 2}
DTYPES = tuple(_DTYPES)
HEAD_DIMS = (64, 128)
#: The reference's grouped kernel holds 16 query heads per program; the
#: contract (H / H_kv at most 16 or a multiple of 16) comes from there.
_REFERENCE_BLOCK_H = 16
#: Query heads one block serves at most (the kernel's registers hold
#: heads * head_dim / lanes accumulators per thread).
MAX_HEADS_PER_BLOCK = 8
_THREADS = 128
_LOG2E = 1.4426950408889634

_modules: dict[tuple[int, int, int, int, int], tuple[cupy.RawKernel, cupy.RawKernel]] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}
_sm_counts: dict[int, int] = {}


def _kernels(device: int, dtype_code: int, head_dim: int, heads: int,
             lanes: int) -> tuple[cupy.RawKernel, cupy.RawKernel]:
    """(split kernel, reduce kernel) for one configuration, loaded on `device`."""
    key = (device, dtype_code, head_dim, heads, lanes)
    kernels = _modules.get(key)
    if kernels is None:
        options = (f"-DKPORT_DTYPE={dtype_code}", f"-DKPORT_HEAD_DIM={head_dim}",
                   f"-DKPORT_HEADS={heads}", f"-DKPORT_LANES={lanes}")
        # One module per kernel (KPORT_PART): each can be dumped alone.
        split = cupy.RawModule(code=_SOURCE, options=options + ("-DKPORT_PART=0",))
        reduce = cupy.RawModule(code=_SOURCE, options=options + ("-DKPORT_PART=1",))
        kernels = _modules[key] = (split.get_function(KERNEL_NAME),
                                   reduce.get_function(KERNEL_NAME + "_reduce"))
    return kernels


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def _next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def plan(batch: int, heads: int, kv_heads: int, head_dim: int, max_len: int,
         num_sms: int) -> tuple[int, int, int]:
    """(heads per block, lanes per key row, splits per sequence).

    A block serves the largest divisor of the group size up to 8 heads (so a
    kv head is read once per block, and most often once in all); lanes per key
    grow with the heads so that each thread keeps at most 64 accumulators;
    splits give about six blocks per multiprocessor (three fit at once) with
    at least 128 keys each.
    """
    group = heads // kv_heads
    per_block = max(d for d in range(1, min(group, MAX_HEADS_PER_BLOCK) + 1) if group % d == 0)
    lanes = _next_power_of_2(-(-head_dim * per_block // 64))
    lanes = min(max(lanes, 4), head_dim // 8)
    blocks = batch * kv_heads * (group // per_block)
    splits = -(-6 * num_sms // max(1, blocks))
    return per_block, lanes, max(1, min(splits, max(1, max_len // 128), 256))


def check_arguments(q, k_cache, v_cache, seq_lens) -> None:
    """The reference's contract, checked the same way."""
    if q.dtype not in _DTYPES:
        raise TypeError(f"decode_attention: unsupported dtype {q.dtype}")
    if k_cache.dtype != q.dtype or v_cache.dtype != q.dtype:
        raise TypeError("decode_attention: q, k_cache and v_cache must share one dtype")
    if seq_lens.dtype != torch.int32:
        raise TypeError("decode_attention: seq_lens must be int32")
    if not (q.is_cuda and k_cache.is_cuda and v_cache.is_cuda and seq_lens.is_cuda):
        raise ValueError("decode_attention: every tensor must be on the CUDA device")
    if q.dim() != 3 or k_cache.dim() != 4 or k_cache.shape != v_cache.shape:
        raise ValueError("decode_attention: q [B, H, D], k_cache = v_cache [B, L, H_kv, D]")
    batch, heads, head_dim = q.shape
    if k_cache.shape[0] != batch or k_cache.shape[3] != head_dim or seq_lens.shape != (batch,):
        raise ValueError("decode_attention: q, caches and seq_lens disagree on B or D")
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"decode_attention: head_dim must be one of {HEAD_DIMS}")
    if heads % k_cache.shape[2]:
        raise ValueError("decode_attention: H must be a multiple of H_kv")
    group = heads // k_cache.shape[2]
    if group > _REFERENCE_BLOCK_H and group % _REFERENCE_BLOCK_H:
        raise ValueError("decode_attention: H / H_kv must be at most 16 or a multiple of it")


def _aligned(t: torch.Tensor, inner: int) -> bool:
    # 16-byte loads: the base and every stride but the last in 8-element units.
    return (t.stride(-1) == 1 and t.data_ptr() % 16 == 0
            and all(s % 8 == 0 for s in t.stride()[:inner]))


def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     seq_lens: torch.Tensor, sm_scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * sm_scale) v per sequence over its first seq_lens[b] keys
    (1 <= seq_lens[b] <= L_max); sm_scale defaults to 1/sqrt(D). The same
    contract as the reference's decode_attention_triton.decode_attention."""
    check_arguments(q, k_cache, v_cache, seq_lens)
    batch, heads, head_dim = q.shape
    max_len, kv_heads = k_cache.shape[1], k_cache.shape[2]
    if q.stride(2) != 1:
        q = q.contiguous()
    if (k_cache.stride() != v_cache.stride() or not _aligned(k_cache, 3)
            or not _aligned(v_cache, 3)):
        k_cache, v_cache = k_cache.contiguous(), v_cache.contiguous()
    seq_lens = seq_lens.contiguous()
    scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else float(sm_scale)
    out = torch.empty((batch, heads, head_dim), dtype=q.dtype, device=q.device)
    if batch == 0 or heads == 0:
        return out
    device = q.device.index
    sms = _sm_counts.get(device)
    if sms is None:
        sms = _sm_counts[device] = torch.cuda.get_device_properties(q.device).multi_processor_count
    per_block, lanes, splits = plan(batch, heads, kv_heads, head_dim, max_len, sms)
    group = heads // kv_heads
    blocks_per_kv = group // per_block
    if splits > 1:
        mid_acc = torch.empty((batch, heads, splits, head_dim), dtype=torch.float32,
                              device=q.device)
        mid_max = torch.empty((batch, heads, splits), dtype=torch.float32, device=q.device)
        mid_sum = torch.empty_like(mid_max)
    else:
        # Not written with one split; the kernel still takes pointers.
        mid_acc = mid_max = mid_sum = torch.empty((1,), dtype=torch.float32, device=q.device)
    i64, i32 = numpy.int64, numpy.int32
    stream = _cupy_stream()
    with cupy.cuda.Device(device):
        split_kernel, reduce_kernel = _kernels(device, _DTYPES[q.dtype], head_dim, per_block,
                                               lanes)
        c_q, c_k, c_v, c_out = (cupy.asarray(t.view(torch.int16)) for t in (q, k_cache, v_cache, out))
        c_lens, c_acc, c_max, c_sum = (cupy.asarray(t) for t in (seq_lens, mid_acc, mid_max, mid_sum))
        split_args = (c_q, c_k, c_v, c_lens, c_out, c_acc, c_max, c_sum,
                      i64(q.stride(0)), i64(q.stride(1)), i64(k_cache.stride(0)),
                      i64(k_cache.stride(1)), i64(k_cache.stride(2)),
                      i64(out.stride(0)), i64(out.stride(1)), i32(heads), i32(group),
                      i32(blocks_per_kv), i32(splits), numpy.float32(scale * _LOG2E))
        reduce_args = (c_acc, c_max, c_sum, c_out, i64(out.stride(0)), i64(out.stride(1)),
                       i32(heads), i32(splits))
        launches = [(split_kernel, (splits, kv_heads * blocks_per_kv, batch), (_THREADS,),
                     split_args)]
        if splits > 1:
            launches.append((reduce_kernel, (heads, batch), (head_dim,), reduce_args))
        for kernel, grid, block, args in launches:
            if stream is None:
                kernel(grid, block, args)
            else:
                with stream:
                    kernel(grid, block, args)
    return out
