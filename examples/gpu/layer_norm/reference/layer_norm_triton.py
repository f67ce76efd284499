"""Reference: layer normalisation over the last dimension as a Triton kernel.

``layer_norm(x, weight, bias, eps)``: y = (x - mean) / sqrt(var + eps) * weight
+ bias per row, var the biased variance, for x of shape [..., n] and weight,
bias of shape [n] in x's dtype (float32, float16, bfloat16); float32
arithmetic whatever the storage type, the result rounded once. The kernel is
Liger's layer-norm forward (and the Triton tutorial's without its column
loop): one program per row with the whole row in registers
(BLOCK_SIZE = the next power of two of n), a centred two-pass variance, and
the block size / warp heuristic of Liger's calculate_settings. Rows of up to
64 KB are supported, as there.
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
def layer_norm_kernel(y_ptr, x_ptr, w_ptr, b_ptr, x_row_stride, y_row_stride,
                      n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = tl.rsqrt(var + eps)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


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


def _check(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> int:
    if x.dtype not in DTYPES:
        raise TypeError(f"layer_norm: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("layer_norm: the input must be a CUDA tensor")
    if x.dim() == 0:
        raise ValueError("layer_norm: the input needs a last dimension")
    n = x.shape[-1]
    for name, t in (("weight", weight), ("bias", bias)):
        if t.shape != (n,) or t.dtype != x.dtype or t.device != x.device:
            raise ValueError(f"layer_norm: {name} must be [{n}] of {x.dtype} on {x.device}")
    if n * x.element_size() > MAX_FUSED_BYTES:
        raise ValueError(f"layer_norm: rows of {n} elements are over {MAX_FUSED_BYTES} bytes")
    return n


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
               eps: float = 1e-5) -> torch.Tensor:
    """Layer norm over the last dimension of a CUDA tensor, in its own dtype."""
    n = _check(x, weight, bias)
    if x.numel() == 0:
        return torch.empty_like(x)
    rows = x.reshape(-1, n)
    if rows.stride(-1) != 1:
        rows = rows.contiguous()
    weight, bias = weight.contiguous(), bias.contiguous()
    out = torch.empty((rows.shape[0], n), dtype=x.dtype, device=x.device)
    block_size, num_warps = calculate_settings(n)
    layer_norm_kernel[(rows.shape[0],)](
        out, rows, weight, bias, rows.stride(0), out.stride(0), n, eps,
        BLOCK_SIZE=block_size, num_warps=num_warps)
    return out.reshape(x.shape)
