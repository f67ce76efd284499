"""The real test suite of rms_norm, for the reference and for a port.

The implementation under test is chosen by rms_norm_select (KPORT_IMPL, else
KPORT_SIDE, else the reference). The oracle is float64 in plain torch (mean of
squares, sqrt: no RMS-norm kernel, so a candidate run shows no reference
kernel). Tolerances: kport_bench.testing.tolerances with the spec's
KPORT_RTOL / KPORT_ATOL (1e-5 / 1e-6 when unset), widened for float16 and
bfloat16.
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import rms_norm_select  # noqa: E402

from kport_bench import testing  # noqa: E402
from kport_bench.testing import DTYPE_IDS, DTYPES, poison, random_tensor, require_cuda  # noqa: E402

DEVICE = require_cuda("rms_norm")
IMPL_NAME = rms_norm_select.selected_impl()
impl = rms_norm_select.load(IMPL_NAME)


def oracle(x, weight, eps) -> torch.Tensor:
    x64 = x.double()
    mean_square = (x64 * x64).mean(dim=-1, keepdim=True)
    return x64 / torch.sqrt(mean_square + eps) * weight.double()


def weight_for(n: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    return random_tensor((n,), dtype, seed, scale=0.2, offset=1.0, device=DEVICE)


def check(x, weight, eps=1e-6) -> torch.Tensor:
    poison((x.shape, x.dtype))
    got = impl.rms_norm(x, weight, eps)
    testing.assert_close(got, oracle(x, weight, eps), *testing.tolerances(x.dtype), dtype=x.dtype)
    return got


SHAPES = [
    (1, 1), (1, 7), (4, 128), (3, 1000), (5, 768), (37, 1023), (64, 2048),
    (17, 4097), (16, 8192), (8, 16384), (2, 3, 515),
]


def test_selected_implementation_is_imported():
    folder = (rms_norm_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else rms_norm_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matches_float64_oracle(shape, dtype):
    seed = sum(shape) * 13 + len(shape)
    x = random_tensor(shape, dtype, seed, scale=2.0, offset=0.3, device=DEVICE)
    check(x, weight_for(shape[-1], dtype, seed + 1))


@pytest.mark.parametrize("n", [20000, 32768], ids=["20000", "32768"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_rows_up_to_64_kib(n, dtype):
    # 16-bit rows may reach 32768 elements: 32 per thread at 1024 threads.
    x = random_tensor((6, n), dtype, seed=n, device=DEVICE)
    check(x, weight_for(n, dtype, seed=n + 1))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("shape,dtype", [((129, 777), torch.float32),
                                         ((256, 4096), torch.bfloat16),
                                         ((96, 3000), torch.float16)],
                         ids=["129x777-f32", "256x4096-bf16", "96x3000-f16"])
def test_fresh_seeds(shape, dtype, seed):
    x = random_tensor(shape, dtype, 400 + seed, scale=0.5 + seed, device=DEVICE)
    check(x, weight_for(shape[-1], dtype, 500 + seed))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_zero_rows_stay_zero(dtype):
    # mean(x^2) = 0: eps alone keeps 1/sqrt finite; without it 0 * inf = NaN.
    x = random_tensor((16, 1024), dtype, seed=600, device=DEVICE)
    x[3] = 0
    x[11] = 0
    got = check(x, weight_for(1024, dtype, seed=601))
    assert (got[3] == 0).all() and (got[11] == 0).all()


@pytest.mark.parametrize("eps", [1e-6, 1e-3, 1.0])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_eps_is_used(eps, dtype):
    # Small inputs (mean square 1e-4): eps of 1e-3 or 1 changes every output.
    x = random_tensor((32, 1000), dtype, seed=602, scale=1e-2, device=DEVICE)
    check(x, weight_for(1000, dtype, seed=603), eps=eps)


def test_scale_invariant():
    # rms_norm(c x) = rms_norm(x) up to eps: a port that forgets the square
    # root or the mean fails here even where the random tests pass.
    x = random_tensor((64, 2048), torch.float32, seed=604, device=DEVICE)
    w = weight_for(2048, torch.float32, seed=605)
    a = impl.rms_norm(x, w, 1e-12)
    b = impl.rms_norm(x * 64.0, w, 1e-12)
    torch.testing.assert_close(a, b, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("start", [0, 1], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_strided_rows(start, dtype):
    # Rows of a wider matrix: row stride 1536, not n; start=1 also moves the
    # base pointer off 16-byte alignment.
    wide = random_tensor((64, 1536), dtype, seed=606, device=DEVICE)
    x = wide[:, start:start + 1024]
    assert x.stride() == (1536, 1)
    check(x, weight_for(1024, dtype, seed=607))


def test_non_contiguous_weight():
    x = random_tensor((8, 512), torch.float32, seed=608, device=DEVICE)
    w2 = random_tensor((512, 2), torch.float32, seed=609, offset=1.0, device=DEVICE)
    weight = w2[:, 1]
    assert weight.stride() == (2,)
    check(x, weight)


def test_inputs_not_mutated():
    x = random_tensor((128, 4096), torch.bfloat16, seed=610, device=DEVICE)
    testing.assert_not_mutated(lambda a, w: impl.rms_norm(a, w, 1e-6), x,
                               weight_for(4096, torch.bfloat16, seed=611))


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    w = weight_for(1024, torch.float32, seed=612)
    a = random_tensor((256, 1024), torch.float32, seed=613, device=DEVICE)
    b = random_tensor((256, 1024), torch.float32, seed=614, device=DEVICE)
    got_a = impl.rms_norm(a, w, 1e-6)
    got_b = impl.rms_norm(b, w, 1e-6)
    r, t = testing.tolerances(torch.float32)
    testing.assert_close(got_a, oracle(a, w, 1e-6), r, t)
    testing.assert_close(got_b, oracle(b, w, 1e-6), r, t)
    assert not torch.equal(got_a, got_b)


def test_runs_on_the_current_stream():
    x = random_tensor((2048, 2048), torch.float32, seed=615, device=DEVICE)
    w = torch.ones(2048, device=DEVICE)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = impl.rms_norm(x, w, 1e-6)
        # Consumed on the same stream: right only if the kernel ran there.
        # Unit weight: every output row has mean square 1.
        square_sum = (got.double() ** 2).sum()
    stream.synchronize()
    assert abs(float(square_sum) / got.numel() - 1.0) < 1e-4
    r, t = testing.tolerances(torch.float32)
    testing.assert_close(got, oracle(x, w, 1e-6), r, t)


@pytest.mark.parametrize("shape", [(0, 128), (16, 0)], ids=["no-rows", "no-cols"])
def test_empty_input(shape):
    x = torch.empty(shape, device=DEVICE)
    got = impl.rms_norm(x, torch.ones(shape[-1], device=DEVICE), 1e-6)
    assert got.shape == x.shape and got.dtype == x.dtype


def test_float64_is_refused():
    with pytest.raises(TypeError):
        impl.rms_norm(torch.zeros((2, 8), dtype=torch.float64, device=DEVICE),
                      torch.ones(8, dtype=torch.float64, device=DEVICE), 1e-6)


def test_weight_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError):
        impl.rms_norm(torch.zeros((2, 8), device=DEVICE), torch.ones(9, device=DEVICE), 1e-6)


def test_rows_over_64_kib_are_refused():
    with pytest.raises(ValueError):
        impl.rms_norm(torch.zeros((1, 32769), dtype=torch.float16, device=DEVICE),
                      torch.ones(32769, dtype=torch.float16, device=DEVICE), 1e-6)
