"""The real test suite of the rotary embedding (rope), for the reference and for a port.

The implementation under test is chosen by rope_select (KPORT_IMPL, else
KPORT_SIDE, else the reference). The contract is out of place: q_out and
k_out are new tensors and no input (q, k, positions, the caches) is written;
the suite checks every input unchanged after every call that could touch it.
The oracle is float64 in plain torch (gather the cache rows, rotate the
halves: no rope kernel, so a candidate run shows no reference kernel).
Tolerances from kport_bench.testing.tolerances (the spec's KPORT_RTOL /
KPORT_ATOL for float32, widened for float16 and bfloat16).
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import rope_select  # noqa: E402

from kport_bench import testing  # noqa: E402
from kport_bench.testing import DTYPE_IDS, DTYPES, poison, random_tensor, require_cuda  # noqa: E402

DEVICE = require_cuda("rope")
IMPL_NAME = rope_select.selected_impl()
impl = rope_select.load(IMPL_NAME)

MAX_POSITION = 4096


def caches(half: int, max_position: int = MAX_POSITION, base: float = 10000.0):
    """cos and sin of position * base^(-i / half), float32 [max_position, half]."""
    inv_freq = base ** (-torch.arange(half, dtype=torch.float64, device=DEVICE) / half)
    angles = torch.arange(max_position, dtype=torch.float64, device=DEVICE)[:, None] * inv_freq
    return angles.cos().float(), angles.sin().float()


def random_positions(tokens: int, seed: int, max_position: int = MAX_POSITION):
    g = torch.Generator(device=DEVICE)
    g.manual_seed(seed)
    return torch.randint(0, max_position, (tokens,), generator=g, device=DEVICE)


def oracle(positions, x, cos_cache, sin_cache) -> torch.Tensor:
    half = cos_cache.shape[1]
    c = cos_cache[positions].double()[:, None, :]
    s = sin_cache[positions].double()[:, None, :]
    x64 = x.double()
    x1, x2 = x64[..., :half], x64[..., half:2 * half]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s, x64[..., 2 * half:]], dim=-1)


def call(positions, q, k, cos_cache, sin_cache):
    """Calls the implementation with poisoned output memory and checks that no
    input changed."""
    poison((q.shape, q.dtype), (k.shape, k.dtype))
    return testing.assert_not_mutated(impl.rope, positions, q, k, cos_cache, sin_cache)


def check(positions, q, k, cos_cache, sin_cache):
    q_out, k_out = call(positions, q, k, cos_cache, sin_cache)
    tol = testing.tolerances(q.dtype)
    testing.assert_close(q_out, oracle(positions, q, cos_cache, sin_cache), *tol, dtype=q.dtype)
    testing.assert_close(k_out, oracle(positions, k, cos_cache, sin_cache), *tol, dtype=k.dtype)
    return q_out, k_out


def make(tokens, q_heads, k_heads, head_dim, rotary_dim, dtype, seed):
    q = random_tensor((tokens, q_heads, head_dim), dtype, seed, device=DEVICE)
    k = random_tensor((tokens, k_heads, head_dim), dtype, seed + 1, device=DEVICE)
    return (random_positions(tokens, seed + 2), q, k, *caches(rotary_dim // 2))


#: (tokens, q heads, k heads, head_dim, rotary_dim): one token to prefill, GQA
#: and MHA, partial rotary (GPT-NeoX's 25 %, and 64 of 96), half = 40 (8-wide
#: vectors for 16-bit, 4-wide for float32), odd halves (33, 31: no vectors).
SHAPES = [
    (1, 1, 1, 64, 64), (7, 4, 1, 64, 64), (33, 8, 2, 128, 128), (64, 32, 8, 128, 128),
    (5, 3, 3, 80, 80), (9, 2, 2, 128, 32), (17, 6, 2, 96, 64), (3, 2, 1, 66, 66),
    (4, 2, 2, 64, 62), (2, 1, 1, 256, 256),
]


def test_selected_implementation_is_imported():
    folder = (rope_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else rope_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)
    assert impl.CACHE_DTYPE == torch.float32


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matches_float64_oracle(shape, dtype):
    check(*make(*shape, dtype, seed=sum(shape) * 17))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_fresh_seeds(seed, dtype):
    check(*make(129, 16, 4, 128, 128, dtype, seed=700 + seed))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_pass_through_dims_are_copied_exactly(dtype):
    positions, q, k, cos_cache, sin_cache = make(31, 4, 2, 128, 32, dtype, seed=710)
    q_out, k_out = check(positions, q, k, cos_cache, sin_cache)
    assert torch.equal(q_out[..., 32:], q[..., 32:])
    assert torch.equal(k_out[..., 32:], k[..., 32:])


def test_position_zero_is_the_identity():
    _, q, k, cos_cache, sin_cache = make(16, 4, 4, 128, 128, torch.float32, seed=711)
    positions = torch.zeros(16, dtype=torch.int64, device=DEVICE)
    q_out, k_out = call(positions, q, k, cos_cache, sin_cache)
    assert torch.equal(q_out, q) and torch.equal(k_out, k)


def test_rotation_keeps_pair_norms():
    # A rotation: |(x_i, x_{i+half})| is kept for every pair; a port that
    # pairs (2i, 2i+1) (GPT-J style) keeps other norms and fails here too.
    positions, q, k, cos_cache, sin_cache = make(64, 8, 8, 128, 128, torch.float32, seed=712)
    q_out, _ = call(positions, q, k, cos_cache, sin_cache)
    norm_in = q[..., :64] ** 2 + q[..., 64:] ** 2
    norm_out = q_out[..., :64] ** 2 + q_out[..., 64:] ** 2
    torch.testing.assert_close(norm_out, norm_in, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_q_and_k_as_views_of_a_fused_qkv(dtype):
    # vLLM's q and k are slices of one qkv projection: token stride
    # (32 + 2 * 8) * 128, not heads * head_dim.
    tokens, q_heads, k_heads, head_dim = 40, 32, 8, 128
    qkv = random_tensor((tokens, (q_heads + 2 * k_heads) * head_dim), dtype, 713, device=DEVICE)
    q = qkv[:, :q_heads * head_dim].view(tokens, q_heads, head_dim)
    k = qkv[:, q_heads * head_dim:(q_heads + k_heads) * head_dim].view(tokens, k_heads, head_dim)
    assert q.stride(0) == k.stride(0) == qkv.stride(0) and not q.is_contiguous()
    before = qkv.clone()
    check(random_positions(tokens, 714), q, k, *caches(head_dim // 2))
    assert torch.equal(qkv, before)


def test_unaligned_heads():
    # Head starts off 16-byte alignment: a view one element into a buffer.
    buf = random_tensor((8 * 4 * 64 + 1,), torch.float16, 715, device=DEVICE)
    q = buf[1:].view(8, 4, 64)
    k = random_tensor((8, 2, 64), torch.float16, 716, device=DEVICE)
    check(random_positions(8, 717), q, k, *caches(32))


def test_strided_caches_and_positions():
    cos_wide, sin_wide = caches(96)
    cos_cache, sin_cache = cos_wide[:, :64], sin_wide[:, :64]
    assert cos_cache.stride() == (96, 1)
    positions = random_positions(64, 718)[::2]
    _, q, k, _, _ = make(32, 4, 2, 128, 128, torch.bfloat16, seed=719)
    check(positions, q, k, cos_cache, sin_cache)


def test_large_positions():
    # 128k context: the angles' float32 rounding is the cache's, both sides
    # read the same cache.
    cos_cache, sin_cache = caches(64, max_position=131072, base=500000.0)
    positions = random_positions(48, 720, max_position=131072)
    _, q, k, _, _ = make(48, 8, 2, 128, 128, torch.float32, seed=721)
    check(positions, q, k, cos_cache, sin_cache)


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    a = make(128, 8, 2, 128, 128, torch.float32, seed=722)
    b = make(128, 8, 2, 128, 128, torch.float32, seed=723)
    qa, _ = check(*a)
    qb, _ = check(*b)
    assert not torch.equal(qa, qb)


def test_runs_on_the_current_stream():
    positions, q, k, cos_cache, sin_cache = make(2048, 32, 8, 128, 128, torch.float32, 724)
    want = (q.double() ** 2).sum() + (k.double() ** 2).sum()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        q_out, k_out = impl.rope(positions, q, k, cos_cache, sin_cache)
        # Consumed on the same stream: right only if the kernel ran there.
        # A rotation keeps the sum of squares.
        got = (q_out.double() ** 2).sum() + (k_out.double() ** 2).sum()
    stream.synchronize()
    assert abs(float(got) / float(want) - 1.0) < 1e-5
    tol = testing.tolerances(torch.float32)
    testing.assert_close(q_out, oracle(positions, q, cos_cache, sin_cache), *tol)


def test_no_tokens():
    positions, q, k, cos_cache, sin_cache = make(0, 4, 2, 64, 64, torch.float16, seed=725)
    q_out, k_out = impl.rope(positions, q, k, cos_cache, sin_cache)
    assert q_out.shape == (0, 4, 64) and k_out.shape == (0, 2, 64)
    assert q_out.dtype == k_out.dtype == torch.float16


def test_float64_is_refused():
    positions, q, k, cos_cache, sin_cache = make(2, 1, 1, 64, 64, torch.float32, seed=726)
    with pytest.raises(TypeError):
        impl.rope(positions, q.double(), k.double(), cos_cache, sin_cache)


def test_half_precision_caches_are_refused():
    positions, q, k, cos_cache, sin_cache = make(2, 1, 1, 64, 64, torch.float16, seed=727)
    with pytest.raises(TypeError):
        impl.rope(positions, q, k, cos_cache.half(), sin_cache.half())


def test_rotary_dim_over_head_dim_is_refused():
    positions, q, k, _, _ = make(2, 1, 1, 64, 64, torch.float32, seed=728)
    with pytest.raises(ValueError):
        impl.rope(positions, q, k, *caches(40))
