"""Reference: decode attention over a contiguous KV cache, as Triton kernels.

One decode step: every sequence b of the batch has one new query token with
H heads, q [B, H, D], and attends over its first seq_lens[b] cached keys and
values, k_cache / v_cache [B, L_max, H_kv, D] (contiguous, not paged: the
cache of sequence b is rows [0, seq_lens[b]) of its slice). Grouped-query
attention: query head h reads kv head h // (H / H_kv). out = softmax(q k^T *
sm_scale) v, in q's dtype (float16 or bfloat16), head_dim 64 or 128.

The kernels are SGLang's Triton decode attention (decode_attention.py:
_fwd_grouped_kernel_stage1 and _fwd_kernel_stage2) with the page table taken
out: stage 1 splits each sequence's keys into num_kv_splits pieces, and one
program per (sequence, group of query heads sharing a kv head, split) runs an
online softmax over its piece with tl.dot (the query heads padded to 16 rows)
and writes the piece's normalised output and log-sum-exp in float32; stage 2,
one program per (sequence, head), merges the pieces.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

#: The dtypes the operator is defined for.
DTYPES = (torch.float16, torch.bfloat16)
#: head_dim values the operator is defined for.
HEAD_DIMS = (64, 128)

#: Query heads one stage-1 program holds (tl.dot needs 16 rows at least).
BLOCK_H = 16
#: Keys per step of the stage-1 loop.
BLOCK_N = 32


@triton.jit
def decode_attention_stage1_kernel(
        q_ptr, k_ptr, v_ptr, seq_lens_ptr, mid_o_ptr, mid_lse_ptr, sm_scale, num_kv_splits,
        stride_qb, stride_qh, stride_kb, stride_kl, stride_kh, stride_vb, stride_vl, stride_vh,
        stride_mid_b, stride_mid_h, stride_mid_s, stride_lse_b, stride_lse_h,
        kv_group_num: tl.constexpr, q_head_num: tl.constexpr, VALID_BLOCK_H: tl.constexpr,
        BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr):
    cur_batch = tl.program_id(0)
    cur_head_id = tl.program_id(1)
    split_kv_id = tl.program_id(2)
    cur_kv_head = cur_head_id // tl.cdiv(kv_group_num, BLOCK_H)

    cur_head = cur_head_id * VALID_BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = cur_head < (cur_head_id + 1) * VALID_BLOCK_H
    mask_h = mask_h & (cur_head < q_head_num)

    offs_d = tl.arange(0, BLOCK_DMODEL)
    cur_batch_seq_len = tl.load(seq_lens_ptr + cur_batch)
    offs_q = cur_batch * stride_qb + cur_head[:, None] * stride_qh + offs_d[None, :]
    q = tl.load(q_ptr + offs_q, mask=mask_h[:, None], other=0.0)

    kv_len_per_split = tl.cdiv(cur_batch_seq_len, num_kv_splits)
    split_kv_start = kv_len_per_split * split_kv_id
    split_kv_end = tl.minimum(split_kv_start + kv_len_per_split, cur_batch_seq_len)

    e_max = tl.zeros([BLOCK_H], dtype=tl.float32) - float("inf")
    e_sum = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DMODEL], dtype=tl.float32)

    if split_kv_end > split_kv_start:
        k_base = k_ptr + cur_batch * stride_kb + cur_kv_head * stride_kh
        v_base = v_ptr + cur_batch * stride_vb + cur_kv_head * stride_vh
        for start_n in range(split_kv_start, split_kv_end, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            mask_n = offs_n < split_kv_end
            k = tl.load(k_base + offs_n[None, :] * stride_kl + offs_d[:, None],
                        mask=mask_n[None, :], other=0.0)
            qk = tl.dot(q, k.to(q.dtype))
            qk *= sm_scale
            qk = tl.where(mask_h[:, None] & mask_n[None, :], qk, float("-inf"))
            v = tl.load(v_base + offs_n[:, None] * stride_vl + offs_d[None, :],
                        mask=mask_n[:, None], other=0.0)
            n_e_max = tl.maximum(tl.max(qk, 1), e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            acc *= re_scale[:, None]
            acc += tl.dot(p.to(v.dtype), v)
            e_sum = e_sum * re_scale + tl.sum(p, 1)
            e_max = n_e_max

        offs_mid_o = (cur_batch * stride_mid_b + cur_head[:, None] * stride_mid_h
                      + split_kv_id * stride_mid_s + offs_d[None, :])
        tl.store(mid_o_ptr + offs_mid_o, acc / e_sum[:, None], mask=mask_h[:, None])
        offs_mid_lse = cur_batch * stride_lse_b + cur_head * stride_lse_h + split_kv_id
        tl.store(mid_lse_ptr + offs_mid_lse, e_max + tl.log(e_sum), mask=mask_h)


@triton.jit
def decode_attention_stage2_kernel(
        mid_o_ptr, mid_lse_ptr, o_ptr, seq_lens_ptr, num_kv_splits,
        stride_mid_b, stride_mid_h, stride_mid_s, stride_lse_b, stride_lse_h,
        stride_ob, stride_oh, BLOCK_DV: tl.constexpr):
    cur_batch = tl.program_id(0)
    cur_head = tl.program_id(1)
    cur_batch_seq_len = tl.load(seq_lens_ptr + cur_batch)

    offs_d = tl.arange(0, BLOCK_DV)
    e_sum = 0.0
    e_max = -float("inf")
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)

    offs_v = cur_batch * stride_mid_b + cur_head * stride_mid_h + offs_d
    offs_lse = cur_batch * stride_lse_b + cur_head * stride_lse_h
    kv_len_per_split = tl.cdiv(cur_batch_seq_len, num_kv_splits)
    for split_kv_id in range(0, num_kv_splits):
        split_kv_start = kv_len_per_split * split_kv_id
        split_kv_end = tl.minimum(split_kv_start + kv_len_per_split, cur_batch_seq_len)
        if split_kv_end > split_kv_start:
            tv = tl.load(mid_o_ptr + offs_v + split_kv_id * stride_mid_s)
            tlogic = tl.load(mid_lse_ptr + offs_lse + split_kv_id)
            n_e_max = tl.maximum(tlogic, e_max)
            old_scale = tl.exp(e_max - n_e_max)
            acc *= old_scale
            exp_logic = tl.exp(tlogic - n_e_max)
            acc += exp_logic * tv
            e_sum = e_sum * old_scale + exp_logic
            e_max = n_e_max

    tl.store(o_ptr + cur_batch * stride_ob + cur_head * stride_oh + offs_d,
             (acc / e_sum).to(o_ptr.dtype.element_ty))


def check_arguments(q, k_cache, v_cache, seq_lens) -> None:
    """The contract both implementations share; raises on what it excludes."""
    if q.dtype not in DTYPES:
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
    if group > BLOCK_H and group % BLOCK_H:
        # SGLang's grouped kernel: a program's 16 heads must share one kv head.
        raise ValueError(f"decode_attention: H / H_kv must be at most {BLOCK_H} or a multiple of it")


def num_kv_splits(batch: int, programs_per_split: int, max_len: int, num_sms: int) -> int:
    """Splits per sequence: enough programs for about four per multiprocessor,
    at most one split per 256 keys (SGLang picks a fixed 8 by default; this
    adapts the same idea to the batch)."""
    want = -(-4 * num_sms // max(1, batch * programs_per_split))
    return max(1, min(want, -(-max_len // 256), 64))


def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     seq_lens: torch.Tensor, sm_scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * sm_scale) v per sequence over its first seq_lens[b] keys
    (1 <= seq_lens[b] <= L_max); sm_scale defaults to 1/sqrt(D)."""
    check_arguments(q, k_cache, v_cache, seq_lens)
    batch, heads, head_dim = q.shape
    max_len, kv_heads = k_cache.shape[1], k_cache.shape[2]
    if q.stride(2) != 1:
        q = q.contiguous()
    if k_cache.stride(3) != 1 or v_cache.stride(3) != 1:
        k_cache, v_cache = k_cache.contiguous(), v_cache.contiguous()
    scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else float(sm_scale)
    group = heads // kv_heads
    valid_block_h = min(BLOCK_H, group)
    head_programs = heads // valid_block_h
    sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    splits = num_kv_splits(batch, head_programs, max_len, sms)

    out = torch.empty((batch, heads, head_dim), dtype=q.dtype, device=q.device)
    mid_o = torch.empty((batch, heads, splits, head_dim), dtype=torch.float32, device=q.device)
    mid_lse = torch.empty((batch, heads, splits), dtype=torch.float32, device=q.device)
    decode_attention_stage1_kernel[(batch, head_programs, splits)](
        q, k_cache, v_cache, seq_lens, mid_o, mid_lse, scale, splits,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        mid_o.stride(0), mid_o.stride(1), mid_o.stride(2), mid_lse.stride(0), mid_lse.stride(1),
        kv_group_num=group, q_head_num=heads, VALID_BLOCK_H=valid_block_h,
        BLOCK_DMODEL=head_dim, BLOCK_N=BLOCK_N, BLOCK_H=BLOCK_H, num_warps=4, num_stages=2)
    decode_attention_stage2_kernel[(batch, heads)](
        mid_o, mid_lse, out, seq_lens, splits,
        mid_o.stride(0), mid_o.stride(1), mid_o.stride(2), mid_lse.stride(0), mid_lse.stride(1),
        out.stride(0), out.stride(1), BLOCK_DV=head_dim, num_warps=4, num_stages=2)
    return out
