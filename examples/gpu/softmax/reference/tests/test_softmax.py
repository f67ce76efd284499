"""The real test suite of the softmax operator, for the reference and for a port.

The implementation under test is chosen by softmax_select (KPORT_IMPL, else
KPORT_SIDE, else the reference). The oracle is computed here in float64 with
plain torch ops (max, exp, sum: no softmax kernel, so a candidate run shows no
reference kernel). Tolerances: float32 takes KPORT_RTOL / KPORT_ATOL (defaults
1e-5 / 1e-6); float16 and bfloat16 add their output rounding (2**-11 and 2**-8
relative) on top.
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import softmax_select  # noqa: E402

from kport_bench.testing import DTYPE_IDS, DTYPES, poison, random_tensor, require_cuda  # noqa: E402
from kport_bench import testing  # noqa: E402

DEVICE = require_cuda("softmax")
IMPL_NAME = softmax_select.selected_impl()
impl = softmax_select.load(IMPL_NAME)


def tolerances(dtype: torch.dtype) -> tuple[float, float]:
    return testing.tolerances(dtype)


def oracle(x: torch.Tensor) -> torch.Tensor:
    x64 = x.double()
    shifted = x64 - x64.amax(dim=-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


def poisoned_call(x: torch.Tensor) -> torch.Tensor:
    poison((x.shape, x.dtype))
    return impl.softmax(x)


def assert_close(got: torch.Tensor, x: torch.Tensor) -> None:
    testing.assert_close(got, oracle(x), *tolerances(x.dtype), dtype=x.dtype)


def random_logits(shape, dtype, seed, scale=4.0, offset=0.0) -> torch.Tensor:
    return random_tensor(shape, dtype, seed, scale, offset, device=DEVICE)


SHAPES = [
    (1, 1), (1, 7), (4, 128), (3, 1000), (37, 1023), (64, 2048),
    (17, 4097), (16, 8192), (8, 16384), (4, 20000), (2, 3, 515),
]


def test_selected_implementation_is_imported():
    folder = (softmax_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else softmax_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matches_float64_softmax(shape, dtype):
    x = random_logits(shape, dtype, seed=hash(shape) & 0xFFFF)
    assert_close(poisoned_call(x), x)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("shape,dtype", [((129, 777), torch.float32),
                                         ((256, 4096), torch.bfloat16),
                                         ((96, 3000), torch.float16)],
                         ids=["129x777-f32", "256x4096-bf16", "96x3000-f16"])
def test_fresh_seeds(shape, dtype, seed):
    x = random_logits(shape, dtype, seed=1000 + seed, scale=1.0 + seed)
    assert_close(poisoned_call(x), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_large_logits_need_the_max_shift(dtype):
    # exp(80..120) overflows float32: without the row max the sum is inf.
    g = torch.Generator(device=DEVICE)
    g.manual_seed(7)
    x = (torch.rand((64, 1024), generator=g, device=DEVICE) * 40 + 80).to(dtype)
    assert_close(poisoned_call(x), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_very_negative_logits(dtype):
    # Without the shift every exp underflows to 0 and rows come out 0/0.
    g = torch.Generator(device=DEVICE)
    g.manual_seed(8)
    x = (torch.rand((32, 2048), generator=g, device=DEVICE) * 100 - 1000).to(dtype)
    assert_close(poisoned_call(x), x)


@pytest.mark.parametrize("shape,dtype", [((64, 1024), torch.float32),
                                         ((4, 20000), torch.float32),
                                         ((33, 2048), torch.float16)],
                         ids=["64x1024-f32", "4x20000-f32", "33x2048-f16"])
def test_masked_entries_are_zero(shape, dtype):
    # -inf entries (attention masks) contribute exp(-inf) = 0, not NaN.
    x = random_logits(shape, dtype, seed=9)
    g = torch.Generator(device=DEVICE)
    g.manual_seed(10)
    mask = torch.rand(shape, generator=g, device=DEVICE) < 0.3
    mask[:, 0] = False
    x = x.masked_fill(mask, float("-inf"))
    got = poisoned_call(x)
    assert_close(got, x)
    assert (got[mask] == 0).all()


def test_constant_rows_are_uniform():
    x = torch.full((16, 1000), 3.5, device=DEVICE)
    got = poisoned_call(x)
    torch.testing.assert_close(got, torch.full_like(x, 1e-3), rtol=1e-6, atol=0.0)


def test_rows_sum_to_one():
    x = random_logits((512, 2048), torch.float32, seed=11)
    sums = poisoned_call(x).double().sum(dim=-1)
    assert (sums - 1).abs().max() < 1e-5


@pytest.mark.parametrize("start", [0, 1], ids=["aligned", "unaligned"])
def test_strided_rows(start):
    # Rows of a wider matrix: row stride 1536, not the row length; start=1
    # also moves the base pointer off 16-byte alignment.
    wide = random_logits((64, 1536), torch.float32, seed=12)
    x = wide[:, start:start + 1000]
    assert x.stride() == (1536, 1)
    assert_close(poisoned_call(x), x)


def test_input_not_mutated():
    x = random_logits((128, 4096), torch.float16, seed=13)
    before = x.clone()
    poisoned_call(x)
    torch.cuda.synchronize()
    assert torch.equal(x, before)


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    a = random_logits((256, 1024), torch.float32, seed=14)
    b = random_logits((256, 1024), torch.float32, seed=15)
    got_a = impl.softmax(a)
    got_b = impl.softmax(b)
    assert_close(got_a, a)
    assert_close(got_b, b)
    assert not torch.equal(got_a, got_b)


def test_runs_on_the_current_stream():
    x = random_logits((2048, 2048), torch.float32, seed=16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = impl.softmax(x)
        # Consumed on the same stream: right only if the kernel ran there.
        total = got.double().sum()
    stream.synchronize()
    assert abs(float(total) - 2048) < 1e-3
    assert_close(got, x)


@pytest.mark.parametrize("shape", [(0, 128), (16, 0)], ids=["no-rows", "no-cols"])
def test_empty_input(shape):
    x = torch.empty(shape, device=DEVICE)
    got = impl.softmax(x)
    assert got.shape == x.shape and got.dtype == x.dtype


def test_float64_is_refused():
    with pytest.raises(TypeError):
        impl.softmax(torch.zeros((2, 8), dtype=torch.float64, device=DEVICE))
