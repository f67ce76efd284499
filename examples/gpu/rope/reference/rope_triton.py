"""Reference: rotary position embedding (neox style) on q and k, as a Triton kernel.

``rope(positions, q, k, cos_cache, sin_cache) -> (q_out, k_out)``, out of
place: q is [tokens, q_heads, head_dim], k is [tokens, k_heads, head_dim]
(same dtype: float32, float16 or bfloat16), the caches are float32
[max_position, rotary_dim / 2] and positions int64 [tokens]. Per token t and
head, with c = cos_cache[positions[t]], s = sin_cache[positions[t]] and half
= rotary_dim / 2 (neox: the rotated pairs are (i, i + half), not (2i, 2i+1)):

    out[i]        = x[i] * c[i] - x[i + half] * s[i]
    out[i + half] = x[i + half] * c[i] + x[i] * s[i]        for i < half
    out[j]        = x[j]                                     for j >= rotary_dim

(partial rotary, GPT-NeoX's rotary_pct < 1, copies the rest). float32
arithmetic, one rounding. None of the inputs is written: vLLM rotates q and k
in place, but out of place the bench's inputs stay what they were and every
input can be checked unchanged.

The kernel is written as vLLM's and LightLLM's Triton rotary kernels are: a
program per (token, block of heads), the cos/sin row loaded once per program
and broadcast over the heads, q and k in the same program.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The dtypes of q and k the operator is defined for.
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: The caches' dtype.
CACHE_DTYPE = torch.float32
#: Heads one program rotates.
BLOCK_H = 8


@triton.jit
def _rotate_heads(src, dst, heads, n_heads, src_head_stride, head_dim, half, d, d_mask,
                  cos, sin, HAS_PASS: tl.constexpr, BLOCK_P: tl.constexpr):
    head_mask = (heads < n_heads)[:, None]
    mask = head_mask & d_mask[None, :]
    src_rows = src + heads[:, None] * src_head_stride
    dst_rows = dst + heads[:, None] * head_dim
    x1 = tl.load(src_rows + d[None, :], mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(src_rows + half + d[None, :], mask=mask, other=0.0).to(tl.float32)
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    tl.store(dst_rows + d[None, :], o1.to(dst.dtype.element_ty), mask=mask)
    tl.store(dst_rows + half + d[None, :], o2.to(dst.dtype.element_ty), mask=mask)
    if HAS_PASS:
        p = 2 * half + tl.arange(0, BLOCK_P)
        p_mask = head_mask & (p < head_dim)[None, :]
        rest = tl.load(src_rows + p[None, :], mask=p_mask)
        tl.store(dst_rows + p[None, :], rest, mask=p_mask)


@triton.jit
def rope_kernel(q_ptr, k_ptr, q_out_ptr, k_out_ptr, pos_ptr, cos_ptr, sin_ptr,
                q_token_stride, q_head_stride, k_token_stride, k_head_stride,
                cache_stride, n_q_heads, n_k_heads, head_dim, half,
                BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr, HAS_PASS: tl.constexpr,
                BLOCK_P: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, BLOCK_D)
    d_mask = d < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * cache_stride + d, mask=d_mask, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * cache_stride + d, mask=d_mask, other=0.0)[None, :]
    _rotate_heads(q_ptr + token * q_token_stride, q_out_ptr + token * n_q_heads * head_dim,
                  heads, n_q_heads, q_head_stride, head_dim, half, d, d_mask, cos, sin,
                  HAS_PASS, BLOCK_P)
    _rotate_heads(k_ptr + token * k_token_stride, k_out_ptr + token * n_k_heads * head_dim,
                  heads, n_k_heads, k_head_stride, head_dim, half, d, d_mask, cos, sin,
                  HAS_PASS, BLOCK_P)


def check_arguments(positions, q, k, cos_cache, sin_cache) -> int:
    """Refuses what the contract does not cover; returns half the rotary dim."""
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
    """Neox-style rotary embedding of q and k at `positions`; new tensors, inputs untouched."""
    half = check_arguments(positions, q, k, cos_cache, sin_cache)
    tokens, n_q_heads, head_dim = q.shape
    n_k_heads = k.shape[1]
    q_out = torch.empty((tokens, n_q_heads, head_dim), dtype=q.dtype, device=q.device)
    k_out = torch.empty((tokens, n_k_heads, head_dim), dtype=k.dtype, device=k.device)
    if tokens == 0 or (n_q_heads == 0 and n_k_heads == 0):
        return q_out, k_out
    positions = positions.contiguous()
    if q.stride(-1) != 1:
        q = q.contiguous()
    if k.stride(-1) != 1:
        k = k.contiguous()
    if cos_cache.stride(-1) != 1 or sin_cache.stride() != cos_cache.stride():
        cos_cache, sin_cache = cos_cache.contiguous(), sin_cache.contiguous()
    rest = head_dim - 2 * half
    grid = (tokens, triton.cdiv(max(n_q_heads, n_k_heads), BLOCK_H))
    rope_kernel[grid](
        q, k, q_out, k_out, positions, cos_cache, sin_cache,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), cos_cache.stride(0),
        n_q_heads, n_k_heads, head_dim, half,
        BLOCK_H=BLOCK_H, BLOCK_D=triton.next_power_of_2(half), HAS_PASS=rest > 0,
        BLOCK_P=triton.next_power_of_2(max(rest, 1)), num_warps=4)
    return q_out, k_out
