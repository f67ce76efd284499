"""Reference: C = A @ B as the classic tiled Triton kernel (float16, bfloat16).

Triton's matrix-multiplication tutorial kernel: each program computes one
BLOCK_SIZE_M x BLOCK_SIZE_N tile of C with tl.dot over BLOCK_SIZE_K slices of
A and B (float32 accumulation, masked loads at the K edge), programs ordered
in groups of GROUP_SIZE_M tile rows so that neighbouring programs share tiles
of B in L2. C has the inputs' dtype.

No autotuning: it would compile and time candidates inside the first call,
which a bench's warm-up would hide from one side only. Instead the block
sizes are fixed per family of shapes, from the tutorial's own config list:
skinny (M <= 64), small (fewer 128 x 256 tiles than multiprocessors) and
large.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The dtypes the operator is defined for.
DTYPES = (torch.float16, torch.bfloat16)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def block_config(M: int, N: int, num_sms: int) -> dict:
    """The fixed launch parameters of a shape's family."""
    if M <= 64:
        # One row of tiles: B streams through once, so deep K blocks and
        # stages keep enough bytes in flight.
        return dict(BLOCK_SIZE_M=max(16, triton.next_power_of_2(M)), BLOCK_SIZE_N=64,
                    BLOCK_SIZE_K=128, GROUP_SIZE_M=1, num_warps=4, num_stages=4)
    if triton.cdiv(M, 128) * triton.cdiv(N, 256) < num_sms:
        return dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                    num_warps=4, num_stages=4)
    return dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                num_warps=8, num_stages=3)


def check_arguments(a: torch.Tensor, b: torch.Tensor) -> None:
    """The contract both implementations share; raises on what it excludes."""
    if a.dtype not in DTYPES or b.dtype != a.dtype:
        raise TypeError(f"matmul: A and B must both be float16 or bfloat16, not {a.dtype}, {b.dtype}")
    if not (a.is_cuda and b.is_cuda):
        raise ValueError("matmul: A and B must be CUDA tensors")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not chain")


_sm_counts: dict[int, int] = {}


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A [M, K] @ B [K, N] -> C [M, N] in the inputs' dtype, float32 accumulation."""
    check_arguments(a, b)
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()
    device = a.device.index
    if device not in _sm_counts:
        _sm_counts[device] = torch.cuda.get_device_properties(a.device).multi_processor_count
    config = block_config(M, N, _sm_counts[device])
    grid = (triton.cdiv(M, config["BLOCK_SIZE_M"]) * triton.cdiv(N, config["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), **config)
    return c
