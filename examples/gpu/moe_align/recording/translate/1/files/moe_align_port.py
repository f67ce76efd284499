"""CUDA C++ port of vLLM's Triton moe_align_block_size: launcher for moe_align_port.cu.

The kernels are compiled at run time by NVRTC through CuPy's RawModule (no
build step): one module per id dtype (int32, int64), compiled on first use and
cached by CuPy on disk. Tensors stay torch tensors: CuPy sees them through
__cuda_array_interface__, without a copy, and the kernels run on torch's
current stream.
"""

from __future__ import annotations

import pathlib

import cupy
import numpy
import torch

KERNEL_NAME = "moe_align_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("moe_align_port.cu")).read_text()
_KERNELS = (KERNEL_NAME, KERNEL_NAME + "_count", KERNEL_NAME + "_scan", KERNEL_NAME + "_scatter")

#: The dtypes topk_ids may have.
ID_DTYPES = (torch.int32, torch.int64)
#: One thread per expert in the scan (the kernels' kMaxExperts).
MAX_EXPERTS = 1024
#: Up to this many ids one block does everything; beyond, chunks of CHUNK ids
#: are counted and scattered by blocks of their own (kChunkThreads = 512
#: threads, 8 ids each).
SINGLE_BLOCK_LIMIT = 16384
CHUNK = 4096
_SCAN_THREADS = 1024
_CHUNK_THREADS = 512

_modules: dict[tuple[int, bool], dict[str, cupy.RawKernel]] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}


def _kernels(device: int, id64: bool) -> dict[str, cupy.RawKernel]:
    """The four kernels for one id dtype, loaded on `device` (the current one)."""
    key = (device, id64)
    kernels = _modules.get(key)
    if kernels is None:
        # One module per kernel (KPORT_PART): each can be dumped alone.
        kernels = _modules[key] = {
            name: cupy.RawModule(code=_SOURCE, options=(
                f"-DKPORT_ID64={int(id64)}", f"-DKPORT_PART={part}")).get_function(name)
            for part, name in enumerate(_KERNELS)}
    return kernels


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def output_sizes(numel: int, num_experts: int, block_size: int) -> tuple[int, int]:
    """(slots of sorted_token_ids, entries of expert_ids), as the reference sizes them."""
    max_padded = numel + num_experts * (block_size - 1)
    return max_padded, -(-max_padded // block_size)


def check_arguments(topk_ids: torch.Tensor, block_size: int, num_experts: int) -> None:
    """The reference's contract, checked the same way."""
    if topk_ids.dtype not in ID_DTYPES:
        raise TypeError(f"moe_align_block_size: topk_ids must be int32 or int64, not {topk_ids.dtype}")
    if not topk_ids.is_cuda:
        raise ValueError("moe_align_block_size: topk_ids must be a CUDA tensor")
    if topk_ids.dim() != 2:
        raise ValueError("moe_align_block_size: topk_ids must be [tokens, topk]")
    if not 1 <= num_experts <= MAX_EXPERTS:
        raise ValueError("moe_align_block_size: num_experts must be within 1..1024")
    if block_size < 1:
        raise ValueError("moe_align_block_size: block_size must be positive")
    if topk_ids.numel() + num_experts * block_size >= 1 << 31:
        raise ValueError("moe_align_block_size: more slots than int32 ids can index")


def _launch(kernel: cupy.RawKernel, grid: int, threads: int, args: tuple,
            stream: cupy.cuda.Stream | None) -> None:
    if stream is None:
        kernel((grid,), (threads,), args)
    else:
        with stream:
            kernel((grid,), (threads,), args)


def moe_align_block_size(topk_ids: torch.Tensor, block_size: int, num_experts: int):
    """(sorted_token_ids, expert_ids, num_tokens_post_padded) for `topk_ids`,
    every id within [0, num_experts): the reference's contract."""
    check_arguments(topk_ids, block_size, num_experts)
    ids = topk_ids if topk_ids.is_contiguous() else topk_ids.contiguous()
    device = ids.device
    numel = ids.numel()
    max_padded, max_blocks = output_sizes(numel, num_experts, block_size)
    sorted_ids = torch.empty((max_padded,), dtype=torch.int32, device=device)
    expert_ids = torch.empty((max_blocks,), dtype=torch.int32, device=device)
    post_pad = torch.empty((1,), dtype=torch.int32, device=device)
    stream = _cupy_stream()
    i32 = numpy.int32
    with cupy.cuda.Device(device.index):
        kernels = _kernels(device.index, ids.dtype == torch.int64)
        # With no ids the kernel reads none: any valid pointer will do.
        source = ids.reshape(-1) if numel else post_pad
        c_ids, c_sorted, c_experts, c_post = (cupy.asarray(t) for t in
                                              (source, sorted_ids, expert_ids, post_pad))
        if numel <= SINGLE_BLOCK_LIMIT:
            _launch(kernels[KERNEL_NAME], 1, _SCAN_THREADS,
                    (c_ids, i32(numel), i32(num_experts), i32(block_size), i32(max_padded),
                     i32(max_blocks), c_sorted, c_experts, c_post), stream)
            return sorted_ids, expert_ids, post_pad
        chunks = -(-numel // CHUNK)
        # Written whole by the count and the scan kernel: no zeroing needed.
        block_counts = torch.empty((chunks * num_experts,), dtype=torch.int32, device=device)
        block_cursors = torch.empty_like(block_counts)
        c_counts, c_cursors = cupy.asarray(block_counts), cupy.asarray(block_cursors)
        _launch(kernels[KERNEL_NAME + "_count"], chunks, _CHUNK_THREADS,
                (c_ids, i32(numel), i32(num_experts), i32(CHUNK), c_counts), stream)
        _launch(kernels[KERNEL_NAME + "_scan"], 1, _SCAN_THREADS,
                (c_counts, i32(chunks), i32(numel), i32(num_experts), i32(block_size),
                 i32(max_padded), i32(max_blocks), c_cursors, c_sorted, c_experts, c_post),
                stream)
        _launch(kernels[KERNEL_NAME + "_scatter"], chunks, _CHUNK_THREADS,
                (c_ids, i32(numel), i32(num_experts), i32(CHUNK), i32(max_padded), c_cursors,
                 c_sorted), stream)
    return sorted_ids, expert_ids, post_pad
