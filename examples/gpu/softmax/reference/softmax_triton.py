"""Reference: row softmax as a Triton kernel (float32, float16, bfloat16).

One program per row holds the whole row in registers (BLOCK_SIZE = the next
power of two of the row length), subtracts the row max, exponentiates, and
divides by the row sum; the arithmetic is float32 whatever the storage type.
This is the shape of Triton's fused-softmax tutorial, without its persistent
grid.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The dtypes the operator is defined for.
DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask,
                other=-float("inf")).to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    y = numerator / denominator
    tl.store(out_ptr + row * out_row_stride + cols,
             y.to(out_ptr.dtype.element_ty), mask=mask)


def _num_warps(block_size: int) -> int:
    # The tutorial's choice: more warps for longer rows keeps the per-thread
    # register footprint (BLOCK_SIZE / threads values) bounded.
    if block_size >= 4096:
        return 16
    if block_size >= 2048:
        return 8
    return 4


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a CUDA tensor, in its own dtype."""
    if x.dtype not in DTYPES:
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
    block_size = triton.next_power_of_2(n_cols)
    softmax_kernel[(rows.shape[0],)](
        out, rows, rows.stride(0), out.stride(0), n_cols,
        BLOCK_SIZE=block_size, num_warps=_num_warps(block_size))
    return out.reshape(shape)
