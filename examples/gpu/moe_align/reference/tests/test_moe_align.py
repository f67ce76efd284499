"""The real test suite of moe_align_block_size, for the reference and for a port.

The implementation under test is chosen by moe_align_select (KPORT_IMPL, else
KPORT_SIDE, else the reference). The check is exact: from the ids alone
(counted on the CPU with plain torch) it knows every expert's count, padded
length and first slot, and it checks each output element against that:
every flat index i = token * topk + k appears exactly once, inside the group
of its expert; each group is its ids followed by the padding value
topk_ids.numel() up to a multiple of block_size; every slot after the groups
holds the padding value; expert_ids names each block's expert; and
num_tokens_post_padded is the padded total. The order of the ids inside a
group is free (vLLM's CUDA kernel scatters with atomics).
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import moe_align_select  # noqa: E402

from kport_bench.testing import require_cuda  # noqa: E402

DEVICE = require_cuda("moe_align")
IMPL_NAME = moe_align_select.selected_impl()
impl = moe_align_select.load(IMPL_NAME)

#: Written into the allocator's free blocks before a call: a slot the kernel
#: never writes then reads this, not an earlier test's right answer.
POISON = 0x5EEDBEEF


def poison_ints(*sizes: int) -> None:
    blocks = [torch.full((n,), POISON, dtype=torch.int32, device=DEVICE) for n in sizes if n > 0]
    del blocks


def output_sizes(numel: int, num_experts: int, block_size: int) -> tuple[int, int]:
    max_padded = numel + num_experts * (block_size - 1)
    return max_padded, -(-max_padded // block_size)


def align(topk_ids: torch.Tensor, block_size: int, num_experts: int):
    max_padded, max_blocks = output_sizes(topk_ids.numel(), num_experts, block_size)
    poison_ints(max_padded, max_blocks, 1)
    return impl.moe_align_block_size(topk_ids, block_size, num_experts)


def check_alignment(topk_ids: torch.Tensor, block_size: int, num_experts: int, result) -> None:
    """Every element of the three outputs against what the ids imply."""
    sorted_ids, expert_ids, post_pad = result
    numel = topk_ids.numel()
    max_padded, max_blocks = output_sizes(numel, num_experts, block_size)
    for name, t, size in (("sorted_token_ids", sorted_ids, max_padded),
                          ("expert_ids", expert_ids, max_blocks),
                          ("num_tokens_post_padded", post_pad, 1)):
        assert t.dtype == torch.int32, (name, t.dtype)
        assert t.device.type == "cuda", (name, t.device)
        assert tuple(t.shape) == (size,), (name, tuple(t.shape), size)
    ids = topk_ids.reshape(-1).cpu().long()
    counts = torch.bincount(ids, minlength=num_experts)
    assert counts.numel() == num_experts, "an id lies outside [0, num_experts)"
    padded = (counts + block_size - 1) // block_size * block_size
    starts = torch.cumsum(padded, 0) - padded
    total = int(padded.sum())
    got_total = int(post_pad.cpu()[0])
    assert got_total == total, f"num_tokens_post_padded {got_total}, want {total}"

    slots = sorted_ids.cpu().long()
    tail = slots[total:]
    if (tail != numel).any():
        at = total + int((tail != numel).nonzero()[0])
        pytest.fail(f"slot {at} after the groups holds {int(slots[at])}, want padding {numel}")

    experts = torch.arange(num_experts)
    slot_expert = torch.repeat_interleave(experts, padded)
    slot_rank = torch.arange(total) - starts[slot_expert]
    is_id = slot_rank < counts[slot_expert]
    grouped = slots[:total]
    pads = grouped[~is_id]
    if (pads != numel).any():
        at = int((~is_id).nonzero()[int((pads != numel).nonzero()[0])])
        pytest.fail(f"slot {at} (padding of expert {int(slot_expert[at])}) holds "
                    f"{int(grouped[at])}, want {numel}")
    members = grouped[is_id]
    if ((members < 0) | (members >= numel)).any():
        at = int(is_id.nonzero()[int(((members < 0) | (members >= numel)).nonzero()[0])])
        pytest.fail(f"slot {at} of expert {int(slot_expert[at])} holds {int(grouped[at])}, "
                    f"not an index below {numel}")
    owner = slot_expert[is_id]
    wrong = ids[members] != owner
    if wrong.any():
        k = int(wrong.nonzero()[0])
        pytest.fail(f"index {int(members[k])} (expert {int(ids[members[k]])}) sits in the "
                    f"group of expert {int(owner[k])}")
    seen = torch.bincount(members, minlength=numel)
    if (seen != 1).any():
        i = int((seen != 1).nonzero()[0])
        pytest.fail(f"index {i} appears {int(seen[i])} times in sorted_token_ids")

    want_blocks = torch.repeat_interleave(experts, padded // block_size)
    got_blocks = expert_ids.cpu().long()[:total // block_size]
    if not torch.equal(got_blocks, want_blocks):
        b = int((got_blocks != want_blocks).nonzero()[0])
        pytest.fail(f"expert_ids[{b}] = {int(got_blocks[b])}, want {int(want_blocks[b])}")


def router_ids(tokens: int, topk: int, num_experts: int, seed: int,
               dtype: torch.dtype = torch.int32, hot: int = 0) -> torch.Tensor:
    """topk distinct experts per token, as a router's top-k gives them; `hot`
    experts get a large bias (a skewed load)."""
    g = torch.Generator(device=DEVICE)
    g.manual_seed(seed)
    logits = torch.rand((tokens, num_experts), generator=g, device=DEVICE)
    if hot:
        logits[:, :hot] += 0.75
    return logits.topk(topk, dim=1).indices.to(dtype)


def test_selected_implementation_is_imported():
    folder = (moe_align_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else moe_align_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.ID_DTYPES) == (torch.int32, torch.int64)


CASES = [
    # tokens, topk, experts, block_size
    (1, 1, 1, 1),
    (1, 2, 8, 16),
    (3, 2, 8, 16),
    (7, 1, 4, 4),
    (16, 2, 8, 16),
    (100, 2, 8, 64),
    (333, 6, 64, 64),
    (50, 3, 1000, 7),
    (10, 4, 1024, 32),
    (1024, 8, 128, 16),
    (2048, 6, 64, 128),
    (4096, 8, 256, 64),
    (5000, 8, 256, 128),
    (16384, 2, 8, 128),
    (20000, 8, 128, 64),
    (65536, 8, 256, 128),
]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=["i32", "i64"])
@pytest.mark.parametrize("tokens,topk,experts,block_size", CASES,
                         ids=[f"t{t}-k{k}-e{e}-bs{b}" for t, k, e, b in CASES])
def test_alignment_contract(tokens, topk, experts, block_size, dtype):
    ids = router_ids(tokens, topk, experts, seed=tokens * 131 + experts, dtype=dtype)
    check_alignment(ids, block_size, experts, align(ids, block_size, experts))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("tokens,topk,experts,block_size", [(777, 8, 64, 16), (9000, 2, 16, 256)],
                         ids=["t777-k8-e64-bs16", "t9000-k2-e16-bs256"])
def test_fresh_seeds(tokens, topk, experts, block_size, seed):
    ids = router_ids(tokens, topk, experts, seed=1000 + seed)
    check_alignment(ids, block_size, experts, align(ids, block_size, experts))


@pytest.mark.parametrize("tokens", [300, 30000], ids=["t300", "t30000"])
def test_skewed_load(tokens):
    # Two hot experts take most ids: long groups, many short or empty ones.
    ids = router_ids(tokens, 4, 64, seed=21, hot=2)
    check_alignment(ids, 32, 64, align(ids, 32, 64))


@pytest.mark.parametrize("tokens", [5, 3000, 40000], ids=["t5", "t3000", "t40000"])
def test_one_expert_takes_everything(tokens):
    # Every other expert is empty: an empty expert gets no block at all.
    ids = torch.full((tokens, 1), 5, dtype=torch.int32, device=DEVICE)
    result = align(ids, 64, 16)
    check_alignment(ids, 64, 16, result)
    assert int(result[2].cpu()[0]) == -(-tokens // 64) * 64


def test_groups_of_exactly_block_size_get_no_padding():
    experts, block_size = 32, 16
    ids = torch.arange(experts, device=DEVICE, dtype=torch.int32).repeat(block_size).reshape(-1, 2)
    result = align(ids, block_size, experts)
    check_alignment(ids, block_size, experts, result)
    assert int(result[2].cpu()[0]) == ids.numel()


def test_mostly_empty_experts():
    # 3 ids over 512 experts: 509 empty experts, each must take 0 slots.
    ids = torch.tensor([[7], [300], [7]], dtype=torch.int32, device=DEVICE)
    result = align(ids, 16, 512)
    check_alignment(ids, 16, 512, result)
    assert int(result[2].cpu()[0]) == 32


def test_no_tokens():
    ids = torch.empty((0, 2), dtype=torch.int32, device=DEVICE)
    sorted_ids, expert_ids, post_pad = align(ids, 16, 8)
    assert int(post_pad.cpu()[0]) == 0
    assert sorted_ids.shape == (8 * 15,) and (sorted_ids == 0).all()


def test_input_not_mutated():
    ids = router_ids(4096, 8, 64, seed=31)
    before = ids.clone()
    align(ids, 64, 64)
    torch.cuda.synchronize()
    assert torch.equal(ids, before)


def test_strided_input():
    # A column slice of a wider id matrix: not contiguous.
    wide = router_ids(2000, 8, 64, seed=32)
    ids = wide[:, 2:6]
    assert not ids.is_contiguous()
    check_alignment(ids, 32, 64, align(ids, 32, 64))


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other ids of the same shape.
    a = router_ids(2048, 4, 32, seed=41)
    b = router_ids(2048, 4, 32, seed=42)
    ra = impl.moe_align_block_size(a, 32, 32)
    rb = impl.moe_align_block_size(b, 32, 32)
    check_alignment(a, 32, 32, ra)
    check_alignment(b, 32, 32, rb)


def test_runs_on_the_current_stream():
    ids = router_ids(8192, 8, 128, seed=51)
    numel = ids.numel()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        result = impl.moe_align_block_size(ids, 64, 128)
        # Consumed on the same stream: right only if the kernels ran there.
        slot_sum = result[0].long().sum()
    stream.synchronize()
    # Every index once, every other slot (128 * 63 of them) the padding value.
    assert int(slot_sum.cpu()) == numel * (numel - 1) // 2 + 128 * 63 * numel
    check_alignment(ids, 64, 128, result)


def test_float_ids_are_refused():
    with pytest.raises(TypeError):
        impl.moe_align_block_size(torch.zeros((4, 2), device=DEVICE), 16, 8)


def test_flat_ids_are_refused():
    with pytest.raises(ValueError):
        impl.moe_align_block_size(torch.zeros((8,), dtype=torch.int32, device=DEVICE), 16, 8)


def test_too_many_experts_are_refused():
    with pytest.raises(ValueError):
        impl.moe_align_block_size(torch.zeros((4, 2), dtype=torch.int32, device=DEVICE), 16, 2048)
