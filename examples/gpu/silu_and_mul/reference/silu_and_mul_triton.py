"""Reference: SiLU-and-multiply (the gated activation of SwiGLU MLPs) as a Triton kernel.

``silu_and_mul(x)`` takes x of shape [..., 2d] and returns
silu(x[..., :d]) * x[..., d:] of shape [..., d], in x's dtype (float32,
float16, bfloat16); the arithmetic is float32 whatever the storage type and
the result is rounded once. This is vLLM's ``silu_and_mul`` contract, written
the way Liger's SwiGLU kernel is: the gate and the up projection are the two
halves of one row, a program covers one row and one block of columns, and
sigmoid is tl.sigmoid on float32.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The dtypes the operator is defined for.
DTYPES = (torch.float32, torch.float16, torch.bfloat16)

#: Columns of the output one program computes (Liger uses the next power of
#: two of the row, vLLM's CUDA kernel one block of 1024 threads per row; a
#: fixed block with a 2-D grid keeps decode shapes (one token, d = 14336)
#: spread over many SMs).
BLOCK_SIZE = 1024


@triton.jit
def silu_and_mul_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, d,
                        BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < d
    x_row = in_ptr + row * in_row_stride
    gate = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_row + d + cols, mask=mask, other=0.0).to(tl.float32)
    y = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + row * out_row_stride + cols,
             y.to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    """silu(x[..., :d]) * x[..., d:] for a CUDA tensor x of shape [..., 2d]."""
    if x.dtype not in DTYPES:
        raise TypeError(f"silu_and_mul: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("silu_and_mul: the input must be a CUDA tensor")
    if x.dim() == 0 or x.shape[-1] % 2:
        raise ValueError("silu_and_mul: the last dimension must be even (gate and up halves)")
    d = x.shape[-1] // 2
    out_shape = (*x.shape[:-1], d)
    if x.numel() == 0:
        return torch.empty(out_shape, dtype=x.dtype, device=x.device)
    rows = x.reshape(-1, 2 * d)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    out = torch.empty((rows.shape[0], d), dtype=x.dtype, device=x.device)
    grid = (rows.shape[0], triton.cdiv(d, BLOCK_SIZE))
    silu_and_mul_kernel[grid](out, rows, rows.stride(0), out.stride(0), d,
                              BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out.reshape(out_shape)
