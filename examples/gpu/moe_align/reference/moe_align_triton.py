"""Reference: MoE token-to-expert alignment as Triton kernels, as in vLLM.

The fused MoE GEMM walks tokens in blocks of `block_size` rows that all go to
one expert. `moe_align_block_size` builds that order from the router's
`topk_ids` [tokens, topk]:

- `sorted_token_ids`: the flat indices i = token * topk + k grouped by
  expert, each expert's group padded with the value `topk_ids.numel()` up to
  a multiple of `block_size`; every slot after the last group holds the
  padding value too;
- `expert_ids`: the expert of each block of `block_size` slots (only the
  first num_tokens_post_padded / block_size entries are defined);
- `num_tokens_post_padded`: the padded length, one int32.

This is vLLM's Triton version (moe_align_block_size_triton, four stages):
stage 1 counts each program's share of the ids per expert, stage 2 turns the
counts into per-program prefix sums, stage 3 pads each expert's total to the
block size and prefix-sums those, stage 4 writes expert_ids and scatters the
ids. One difference: the element count and the share per program are run-time
arguments here (vLLM makes them constexpr), so one compilation serves every
token count. The order inside an expert's group is the ids' order; the
contract does not require it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

#: The dtypes topk_ids may have.
ID_DTYPES = (torch.int32, torch.int64)


@triton.jit
def moe_align_block_size_stage1(topk_ids_ptr, tokens_cnts_ptr, numel,
                                tokens_per_thread, num_experts: tl.constexpr):
    pid = tl.program_id(0)
    start_idx = pid * tokens_per_thread
    off_c = (pid + 1) * num_experts
    for i in range(tokens_per_thread):
        if start_idx + i < numel:
            idx = tl.load(topk_ids_ptr + start_idx + i)
            token_cnt = tl.load(tokens_cnts_ptr + off_c + idx)
            tl.store(tokens_cnts_ptr + off_c + idx, token_cnt + 1)


@triton.jit
def moe_align_block_size_stage2(tokens_cnts_ptr, num_experts: tl.constexpr):
    pid = tl.program_id(0)
    last_cnt = 0
    for i in range(1, num_experts + 1):
        token_cnt = tl.load(tokens_cnts_ptr + i * num_experts + pid)
        last_cnt = last_cnt + token_cnt
        tl.store(tokens_cnts_ptr + i * num_experts + pid, last_cnt)


@triton.jit
def moe_align_block_size_stage3(total_tokens_post_pad_ptr, tokens_cnts_ptr, cumsum_ptr,
                                num_experts: tl.constexpr, block_size: tl.constexpr):
    last_cumsum = 0
    off_cnt = num_experts * num_experts
    for i in range(1, num_experts + 1):
        token_cnt = tl.load(tokens_cnts_ptr + off_cnt + i - 1)
        last_cumsum = last_cumsum + tl.cdiv(token_cnt, block_size) * block_size
        tl.store(cumsum_ptr + i, last_cumsum)
    tl.store(total_tokens_post_pad_ptr, last_cumsum)


@triton.jit
def moe_align_block_size_stage4(topk_ids_ptr, sorted_token_ids_ptr, expert_ids_ptr,
                                tokens_cnts_ptr, cumsum_ptr, numel, tokens_per_thread,
                                num_experts: tl.constexpr, block_size: tl.constexpr):
    pid = tl.program_id(0)
    start_idx = tl.load(cumsum_ptr + pid)
    end_idx = tl.load(cumsum_ptr + pid + 1)
    for i in range(start_idx, end_idx, block_size):
        tl.store(expert_ids_ptr + i // block_size, pid)
    first = pid * tokens_per_thread
    off_t = pid * num_experts
    for i in range(first, tl.minimum(first + tokens_per_thread, numel)):
        expert_id = tl.load(topk_ids_ptr + i)
        token_cnt = tl.load(tokens_cnts_ptr + off_t + expert_id)
        rank_post_pad = token_cnt + tl.load(cumsum_ptr + expert_id)
        tl.store(sorted_token_ids_ptr + rank_post_pad, i)
        tl.store(tokens_cnts_ptr + off_t + expert_id, token_cnt + 1)


def output_sizes(numel: int, num_experts: int, block_size: int) -> tuple[int, int]:
    """(slots of sorted_token_ids, entries of expert_ids): the worst case, every
    expert one id past a multiple of the block size."""
    max_padded = numel + num_experts * (block_size - 1)
    return max_padded, triton.cdiv(max_padded, block_size)


def check_arguments(topk_ids: torch.Tensor, block_size: int, num_experts: int) -> None:
    """The contract both implementations share; raises on what it excludes."""
    if topk_ids.dtype not in ID_DTYPES:
        raise TypeError(f"moe_align_block_size: topk_ids must be int32 or int64, not {topk_ids.dtype}")
    if not topk_ids.is_cuda:
        raise ValueError("moe_align_block_size: topk_ids must be a CUDA tensor")
    if topk_ids.dim() != 2:
        raise ValueError("moe_align_block_size: topk_ids must be [tokens, topk]")
    if not 1 <= num_experts <= 1024:
        raise ValueError("moe_align_block_size: num_experts must be within 1..1024")
    if block_size < 1:
        raise ValueError("moe_align_block_size: block_size must be positive")
    if topk_ids.numel() + num_experts * block_size >= 1 << 31:
        raise ValueError("moe_align_block_size: more slots than int32 ids can index")


def moe_align_block_size(topk_ids: torch.Tensor, block_size: int, num_experts: int):
    """(sorted_token_ids, expert_ids, num_tokens_post_padded) for `topk_ids`,
    every id within [0, num_experts)."""
    check_arguments(topk_ids, block_size, num_experts)
    device = topk_ids.device
    ids = topk_ids.contiguous()
    numel = ids.numel()
    max_padded, max_blocks = output_sizes(numel, num_experts, block_size)
    sorted_ids = torch.empty((max_padded,), dtype=torch.int32, device=device)
    sorted_ids.fill_(numel)
    expert_ids = torch.empty((max_blocks,), dtype=torch.int32, device=device)
    num_tokens_post_pad = torch.empty((1,), dtype=torch.int32, device=device)
    if numel == 0:
        num_tokens_post_pad.zero_()
        return sorted_ids, expert_ids, num_tokens_post_pad
    tokens_cnts = torch.zeros((num_experts + 1, num_experts), dtype=torch.int32, device=device)
    cumsum = torch.zeros((num_experts + 1,), dtype=torch.int32, device=device)
    tokens_per_thread = triton.cdiv(numel, num_experts)
    grid = (num_experts,)
    moe_align_block_size_stage1[grid](ids, tokens_cnts, numel, tokens_per_thread, num_experts)
    moe_align_block_size_stage2[grid](tokens_cnts, num_experts)
    moe_align_block_size_stage3[(1,)](num_tokens_post_pad, tokens_cnts, cumsum, num_experts,
                                      block_size)
    moe_align_block_size_stage4[grid](ids, sorted_ids, expert_ids, tokens_cnts, cumsum, numel,
                                      tokens_per_thread, num_experts, block_size)
    return sorted_ids, expert_ids, num_tokens_post_pad
