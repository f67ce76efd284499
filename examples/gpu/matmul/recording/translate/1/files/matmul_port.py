"""CUDA C++ port of the Triton matmul: launcher for matmul_port.cu.

The kernel is compiled at run time by NVRTC through CuPy's RawModule (no
build step); each (dtype, tile family) gets its own module, compiled on first
use and cached by CuPy on disk. Tensors stay torch tensors: CuPy sees them
through __cuda_array_interface__, without a copy, and the kernel runs on
torch's current stream.
"""

from __future__ import annotations

import pathlib

import cupy
import numpy
import torch

KERNEL_NAME = "matmul_port_kernel"
_SOURCE = (pathlib.Path(__file__).with_name("matmul_port.cu")).read_text()

#: storage dtype -> KPORT_DTYPE code; CuPy sees both as int16.
_DTYPES = {torch.float16: 1, torch.bfloat16: 2}
DTYPES = tuple(_DTYPES)

#: Tile families (BM, BN, BK, WM, WN, STAGES), chosen like the reference's:
#: large: 128 x 256 tiles, 8 warps of 64 x 64, four 24 KiB stages;
#: small (fewer 128 x 256 tiles than multiprocessors): 64 x 128, 4 warps;
#: skinny (M <= 64): one row of BM x 64 tiles with 128-deep K slices, four
#: stages, so that B, read once, streams with enough bytes in flight.
LARGE = (128, 256, 32, 2, 4, 4)
SMALL = (64, 128, 32, 2, 2, 4)


def skinny(m: int) -> tuple[int, int, int, int, int, int]:
    bm = 16 if m <= 16 else 32 if m <= 32 else 64
    return (bm, 64, 128, 1, 4, 4)


_kernels: dict[tuple, tuple[cupy.RawKernel, int]] = {}
_streams: dict[int, cupy.cuda.ExternalStream] = {}
_sm_counts: dict[int, int] = {}


def family(m: int, n: int, num_sms: int) -> tuple[int, int, int, int, int, int]:
    """The tile family of an M x N output."""
    if m <= 64:
        return skinny(m)
    if -(-m // 128) * -(-n // 256) < num_sms:
        return SMALL
    return LARGE


def _kernel(device: int, dtype_code: int, tiles: tuple) -> tuple[cupy.RawKernel, int]:
    """(kernel, dynamic shared-memory bytes) for one family, loaded on `device`."""
    key = (device, dtype_code, tiles)
    entry = _kernels.get(key)
    if entry is None:
        bm, bn, bk, wm, wn, stages = tiles
        module = cupy.RawModule(code=_SOURCE, options=(
            f"-DKPORT_DTYPE={dtype_code}", f"-DKPORT_BM={bm}", f"-DKPORT_BN={bn}",
            f"-DKPORT_BK={bk}", f"-DKPORT_WM={wm}", f"-DKPORT_WN={wn}",
            f"-DKPORT_STAGES={stages}"))
        kernel = module.get_function(KERNEL_NAME)
        smem = stages * (bm * bk + bk * bn) * 2
        # Past 48 KiB a block gets its shared memory only by asking.
        kernel.max_dynamic_shared_size_bytes = smem
        entry = _kernels[key] = (kernel, smem)
    return entry


def _cupy_stream() -> cupy.cuda.Stream | None:
    handle = torch.cuda.current_stream().cuda_stream
    if handle == 0:
        return None  # both libraries' default: the legacy stream
    stream = _streams.get(handle)
    if stream is None:
        stream = _streams[handle] = cupy.cuda.ExternalStream(handle)
    return stream


def check_arguments(a: torch.Tensor, b: torch.Tensor) -> None:
    """The reference's contract, checked the same way."""
    if a.dtype not in _DTYPES or b.dtype != a.dtype:
        raise TypeError(f"matmul: A and B must both be float16 or bfloat16, not {a.dtype}, {b.dtype}")
    if not (a.is_cuda and b.is_cuda):
        raise ValueError("matmul: A and B must be CUDA tensors")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not chain")


def _loadable(t: torch.Tensor) -> bool:
    # 16-byte cp.async of every row: contiguous rows, a row length and a
    # base address in 16-byte units.
    return t.stride(1) == 1 and t.stride(0) % 8 == 0 and t.data_ptr() % 16 == 0


def _padded(t: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    out = torch.zeros((rows, cols), dtype=t.dtype, device=t.device)
    out[:t.shape[0], :t.shape[1]] = t
    return out


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A [M, K] @ B [K, N] -> C [M, N] in the inputs' dtype, float32
    accumulation. The same contract as the reference's matmul_triton.matmul."""
    check_arguments(a, b)
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()
    # K and B's rows must come in whole 16-byte chunks; other shapes and
    # layouts get zero-padded copies (zeros add nothing to the products).
    k8, n8 = -(-K // 8) * 8, -(-N // 8) * 8
    if k8 != K or not _loadable(a):
        a = _padded(a, M, k8)
    if k8 != K or n8 != N or not _loadable(b):
        b = _padded(b, k8, n8)
    device = a.device.index
    sms = _sm_counts.get(device)
    if sms is None:
        sms = _sm_counts[device] = torch.cuda.get_device_properties(a.device).multi_processor_count
    tiles = family(M, N, sms)
    bm, bn = tiles[0], tiles[1]
    grid = (-(-M // bm) * -(-N // bn),)
    stream = _cupy_stream()
    with cupy.cuda.Device(device):
        kernel, smem = _kernel(device, _DTYPES[a.dtype], tiles)
        c_a, c_b, c_c = (cupy.asarray(t.view(torch.int16)) for t in (a, b, c))
        args = (c_a, c_b, c_c, numpy.int32(M), numpy.int32(N), numpy.int32(k8),
                numpy.int32(b.shape[1]), numpy.int64(a.stride(0)), numpy.int64(b.stride(0)),
                numpy.int64(c.stride(0)))
        threads = tiles[3] * tiles[4] * 32
        if stream is None:
            kernel(grid, (threads,), args, shared_mem=smem)
        else:
            with stream:
                kernel(grid, (threads,), args, shared_mem=smem)
    return c
