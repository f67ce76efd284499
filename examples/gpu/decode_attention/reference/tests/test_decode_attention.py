"""The real test suite of decode attention, for the reference and for a port.

The implementation under test is chosen by decode_attention_select
(KPORT_IMPL, else KPORT_SIDE, else the reference). The oracle is computed here
in float64 with plain torch ops (einsum, exp, sum: no attention kernel, so a
candidate run shows no reference kernel).

Tolerance per element: atol + rtol * |want| with (rtol, atol) from
kport_bench.testing.tolerances (KPORT_RTOL / KPORT_ATOL widened for the
float16 / bfloat16 output), plus 2 * u * A, where u is the storage type's unit
roundoff (2**-11, 2**-8) and A = sum_j p_j |v_j| / sum_j p_j the
softmax-weighted mean of |v|: the reference rounds the probabilities to the
storage type before the p @ v product (as SGLang does), which moves the
output by at most u * A; the port keeps them in float32.
"""

from __future__ import annotations

import math
import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import decode_attention_select  # noqa: E402

from kport_bench.testing import poison, require_cuda  # noqa: E402
from kport_bench import testing  # noqa: E402

DEVICE = require_cuda("decode_attention")
IMPL_NAME = decode_attention_select.selected_impl()
impl = decode_attention_select.load(IMPL_NAME)

DTYPES = [torch.float16, torch.bfloat16]
DTYPE_IDS = ["f16", "bf16"]
#: Unit roundoff of the storage types (half an ulp at 1).
UNIT_ROUNDOFF = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def oracle(q, k_cache, v_cache, seq_lens, sm_scale=None):
    """(out, A) in float64: the attention output and the weighted mean of |v|."""
    batch, heads, head_dim = q.shape
    max_len, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = heads // kv_heads
    scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else sm_scale
    k64 = k_cache.double().repeat_interleave(group, dim=2)
    v64 = v_cache.double().repeat_interleave(group, dim=2)
    scores = torch.einsum("bhd,blhd->bhl", q.double(), k64) * scale
    beyond = torch.arange(max_len, device=q.device)[None, :] >= seq_lens.long()[:, None]
    scores = scores.masked_fill(beyond[:, None, :], float("-inf"))
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    total = weights.sum(dim=-1, keepdim=True)
    # Rows past seq_len may hold anything (NaN too): only weights 0 reach them.
    v_seen = v64.masked_fill(beyond[:, :, None, None], 0.0)
    out = torch.einsum("bhl,blhd->bhd", weights, v_seen) / total
    mean_abs = torch.einsum("bhl,blhd->bhd", weights, v_seen.abs()) / total
    return out, mean_abs


def assert_attention_close(got, q, k_cache, v_cache, seq_lens, sm_scale=None):
    want, mean_abs = oracle(q, k_cache, v_cache, seq_lens, sm_scale)
    assert got.shape == q.shape, (tuple(got.shape), tuple(q.shape))
    assert got.dtype == q.dtype and got.device.type == "cuda", (got.dtype, got.device)
    rtol, atol = testing.tolerances(q.dtype)
    bound = atol + rtol * want.abs() + 2 * UNIT_ROUNDOFF[q.dtype] * mean_abs
    err = (got.double() - want).abs()
    bad = ~(err <= bound)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        pytest.fail(f"{int(bad.sum())} of {got.numel()} elements off; first at {idx} "
                    f"(batch, head, dim): got {float(got[idx])}, want {float(want[idx])}, "
                    f"bound {float(bound[idx]):.3g}")


def make_case(batch, heads, kv_heads, max_len, head_dim, dtype, seed, *, full=False,
              q_scale=1.0):
    """q, k_cache, v_cache (normal values) and seq_lens in [1, max_len], the
    first sequence full length; cache rows past a sequence's length are NaN,
    which only a kernel that reads them can notice."""
    g = torch.Generator(device=DEVICE)
    g.manual_seed(seed)
    q = torch.randn((batch, heads, head_dim), generator=g, device=DEVICE) * q_scale
    shape = (batch, max_len, kv_heads, head_dim)
    k = torch.randn(shape, generator=g, device=DEVICE)
    v = torch.randn(shape, generator=g, device=DEVICE)
    if full:
        seq_lens = torch.full((batch,), max_len, dtype=torch.int32, device=DEVICE)
    else:
        seq_lens = torch.randint(1, max_len + 1, (batch,), generator=g, device=DEVICE,
                                 dtype=torch.int32)
        seq_lens[0] = max_len
    beyond = torch.arange(max_len, device=DEVICE)[None, :] >= seq_lens.long()[:, None]
    k = k.masked_fill(beyond[:, :, None, None], float("nan"))
    v = v.masked_fill(beyond[:, :, None, None], float("nan"))
    return q.to(dtype), k.to(dtype), v.to(dtype), seq_lens


def poisoned_call(q, k_cache, v_cache, seq_lens, sm_scale=None):
    poison((q.shape, q.dtype))
    if sm_scale is None:
        return impl.decode_attention(q, k_cache, v_cache, seq_lens)
    return impl.decode_attention(q, k_cache, v_cache, seq_lens, sm_scale)


def test_selected_implementation_is_imported():
    folder = (decode_attention_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else decode_attention_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)
    assert tuple(impl.HEAD_DIMS) == (64, 128)


CASES = [
    # batch, heads, kv_heads, max_len, head_dim
    (1, 1, 1, 1, 64),
    (1, 8, 8, 17, 64),
    (2, 32, 8, 100, 128),
    (3, 12, 4, 333, 128),
    (2, 28, 4, 1000, 128),
    (4, 16, 1, 513, 64),
    (2, 64, 2, 700, 128),
    (16, 8, 2, 300, 128),
    (8, 32, 32, 2048, 64),
    (1, 32, 8, 8192, 128),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("batch,heads,kv_heads,max_len,head_dim", CASES,
                         ids=[f"b{b}-h{h}-kv{kv}-l{l}-d{d}" for b, h, kv, l, d in CASES])
def test_matches_float64_attention(batch, heads, kv_heads, max_len, head_dim, dtype):
    case = make_case(batch, heads, kv_heads, max_len, head_dim, dtype,
                     seed=batch * 7919 + heads * 104729 + max_len)
    assert_attention_close(poisoned_call(*case), *case)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_fresh_seeds(seed):
    case = make_case(6, 32, 8, 1500, 128, torch.bfloat16, seed=100 + seed)
    assert_attention_close(poisoned_call(*case), *case)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_full_length_sequences(dtype):
    case = make_case(4, 16, 4, 4096, 128, dtype, seed=7, full=True)
    assert_attention_close(poisoned_call(*case), *case)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_one_key_each(dtype):
    # seq_len 1: the output is the first value row of the sequence's kv head.
    q, k, v, _ = make_case(5, 8, 2, 64, 64, dtype, seed=8)
    seq_lens = torch.ones((5,), dtype=torch.int32, device=DEVICE)
    got = poisoned_call(q, k, v, seq_lens)
    want = v[:, 0].repeat_interleave(4, dim=1)
    assert torch.equal(got, want)


@pytest.mark.parametrize("sm_scale", [0.3, 1.0], ids=["scale0.3", "scale1"])
def test_explicit_scale(sm_scale):
    # sm_scale 1 on head_dim 128: scores of standard deviation 11, so the
    # softmax is peaked and needs the running max.
    case = make_case(3, 16, 4, 2000, 128, torch.float16, seed=9)
    assert_attention_close(poisoned_call(*case, sm_scale=sm_scale), *case, sm_scale=sm_scale)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_large_logits(dtype):
    # Scores in the hundreds: exp overflows float32 without the max shift.
    case = make_case(2, 8, 8, 777, 64, dtype, seed=10, q_scale=40.0)
    assert_attention_close(poisoned_call(*case), *case)


def test_strided_inputs():
    # q and both caches are slices of wider tensors: strides that are not the
    # shapes' own.
    q_wide, k_wide, v_wide, seq_lens = make_case(3, 16, 8, 600, 128, torch.float16, seed=11)
    q = q_wide[:, 4:12]
    k, v = k_wide[:, :, 2:4], v_wide[:, :, 2:4]
    assert not q.is_contiguous() and not k.is_contiguous()
    assert_attention_close(poisoned_call(q, k, v, seq_lens), q, k, v, seq_lens)


def test_inputs_not_mutated():
    case = make_case(4, 32, 8, 1024, 128, torch.bfloat16, seed=12)
    before = [t.clone() for t in case]
    poisoned_call(*case)
    torch.cuda.synchronize()
    for a, b in zip(case, before):
        assert torch.equal(a.nan_to_num(), b.nan_to_num()) and torch.equal(a.isnan(), b.isnan())


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    a = make_case(4, 32, 8, 512, 128, torch.float16, seed=13)
    b = make_case(4, 32, 8, 512, 128, torch.float16, seed=14)
    got_a = impl.decode_attention(*a)
    got_b = impl.decode_attention(*b)
    assert_attention_close(got_a, *a)
    assert_attention_close(got_b, *b)


def test_runs_on_the_current_stream():
    case = make_case(8, 32, 8, 4096, 128, torch.bfloat16, seed=15, full=True)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = impl.decode_attention(*case)
        # Consumed on the same stream: right only if the kernels ran there.
        copy = got.clone()
    stream.synchronize()
    assert_attention_close(copy, *case)


def test_float32_is_refused():
    q, k, v, seq_lens = make_case(1, 4, 4, 8, 64, torch.float16, seed=16)
    with pytest.raises(TypeError):
        impl.decode_attention(q.float(), k.float(), v.float(), seq_lens)


def test_int64_lengths_are_refused():
    q, k, v, seq_lens = make_case(1, 4, 4, 8, 64, torch.float16, seed=17)
    with pytest.raises(TypeError):
        impl.decode_attention(q, k, v, seq_lens.long())


def test_other_head_dims_are_refused():
    q, k, v, seq_lens = make_case(1, 4, 4, 8, 64, torch.float16, seed=18)
    with pytest.raises(ValueError):
        impl.decode_attention(q[..., :48], k[..., :48], v[..., :48], seq_lens)


def test_groups_past_16_must_be_multiples_of_16():
    q, k, v, seq_lens = make_case(1, 48, 2, 8, 64, torch.float16, seed=19)
    with pytest.raises(ValueError):
        impl.decode_attention(q, k, v, seq_lens)
