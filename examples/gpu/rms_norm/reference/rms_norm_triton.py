"""Reference: RMS normalisation over the last dimension as a Triton kernel.

``rms_norm(x, weight, eps)``: y = x / sqrt(mean(x^2) + eps) * weight per row,
for x of shape [..., n] and weight of shape [n] in x's dtype (float32,
float16, bfloat16); float32 arithmetic whatever the storage type, the result
rounded once (vLLM's RMSNorm contract, Liger's kernel shape). One program per
row with the whole row in registers (BLOCK_SIZE = the next power of two of
n), warps by Liger's calculate_settings. Rows of up to 64 KB are supported,
as there.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The dtypes the operator is defined for.
DTYPES = (torch.float32, torch.float16, torch.bfloat16)

#: Liger's limit: one row must fit one program's block.
MAX_FUSED_BYTES = 65536


@triton.jit
def rms_norm_kernel(y_ptr, x_ptr, w_ptr, x_row_stride, y_row_stride, n_cols, eps,
                    BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.rsqrt(mean_square + eps)
    tl.store(y_ptr + row * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty),
             mask=mask)


def calculate_settings(n: int) -> tuple[int, int]:
    """(BLOCK_SIZE, num_warps) as Liger picks them for a row of n elements."""
    block_size = triton.next_power_of_2(n)
    if block_size >= 32768:
        return block_size, 32
    if block_size >= 8192:
        return block_size, 16
    if block_size >= 2048:
        return block_size, 8
    return block_size, 4


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMS norm over the last dimension of a CUDA tensor, in its own dtype."""
    if x.dtype not in DTYPES:
        raise TypeError(f"rms_norm: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("rms_norm: the input must be a CUDA tensor")
    if x.dim() == 0:
        raise ValueError("rms_norm: the input needs a last dimension")
    n = x.shape[-1]
    if weight.shape != (n,) or weight.dtype != x.dtype or weight.device != x.device:
        raise ValueError(f"rms_norm: weight must be [{n}] of {x.dtype} on {x.device}")
    if n * x.element_size() > MAX_FUSED_BYTES:
        raise ValueError(f"rms_norm: rows of {n} elements are over {MAX_FUSED_BYTES} bytes")
    if x.numel() == 0:
        return torch.empty_like(x)
    rows = x.reshape(-1, n)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    weight = weight.contiguous()
    out = torch.empty((rows.shape[0], n), dtype=x.dtype, device=x.device)
    block_size, num_warps = calculate_settings(n)
    rms_norm_kernel[(rows.shape[0],)](
        out, rows, weight, rows.stride(0), out.stride(0), n, eps,
        BLOCK_SIZE=block_size, num_warps=num_warps)
    return out.reshape(x.shape)
