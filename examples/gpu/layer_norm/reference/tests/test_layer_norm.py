"""The real test suite of layer_norm, for the reference and for a port.

The implementation under test is chosen by layer_norm_select (KPORT_IMPL, else
KPORT_SIDE, else the reference). The oracle is float64 in plain torch (mean,
biased variance, sqrt: no layer-norm kernel, so a candidate run shows no
reference kernel). Tolerances: kport_bench.testing.tolerances with the spec's
KPORT_RTOL / KPORT_ATOL (1e-5 / 1e-5 when unset: a float32 row mean carries
about 1e-6 of absolute error into every output), widened for float16 and
bfloat16.
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import layer_norm_select  # noqa: E402

from kport_bench import testing  # noqa: E402
from kport_bench.testing import DTYPE_IDS, DTYPES, poison, random_tensor, require_cuda  # noqa: E402

DEVICE = require_cuda("layer_norm")
IMPL_NAME = layer_norm_select.selected_impl()
impl = layer_norm_select.load(IMPL_NAME)


def tolerances(dtype: torch.dtype) -> tuple[float, float]:
    return testing.tolerances(dtype, rtol=1e-5, atol=1e-5)


def oracle(x, weight, bias, eps) -> torch.Tensor:
    x64 = x.double()
    mean = x64.mean(dim=-1, keepdim=True)
    var = ((x64 - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x64 - mean) / torch.sqrt(var + eps) * weight.double() + bias.double()


def params(n: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Weight near 1 and bias near 0, as trained layer norms have them."""
    weight = random_tensor((n,), dtype, seed, scale=0.2, offset=1.0, device=DEVICE)
    bias = random_tensor((n,), dtype, seed + 1, scale=0.1, device=DEVICE)
    return weight, bias


def poisoned_call(x, weight, bias, eps=1e-5) -> torch.Tensor:
    poison((x.shape, x.dtype))
    return impl.layer_norm(x, weight, bias, eps)


def check(x, weight, bias, eps=1e-5, rtol=None, atol=None) -> torch.Tensor:
    got = poisoned_call(x, weight, bias, eps)
    r, a = tolerances(x.dtype)
    testing.assert_close(got, oracle(x, weight, bias, eps), rtol or r, atol or a, dtype=x.dtype)
    return got


SHAPES = [
    (1, 1), (1, 7), (4, 128), (3, 1000), (5, 768), (37, 1023), (64, 2048),
    (17, 4097), (16, 8192), (8, 16384), (2, 3, 515),
]


def test_selected_implementation_is_imported():
    folder = (layer_norm_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else layer_norm_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matches_float64_oracle(shape, dtype):
    seed = sum(shape) * 7 + len(shape)
    x = random_tensor(shape, dtype, seed, scale=2.0, offset=0.5, device=DEVICE)
    check(x, *params(shape[-1], dtype, seed + 2))


@pytest.mark.parametrize("n", [20000, 32768], ids=["20000", "32768"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_rows_up_to_64_kib(n, dtype):
    # 16-bit rows may reach 32768 elements: more than a block holds in
    # registers at 16 per thread.
    x = random_tensor((6, n), dtype, seed=n, device=DEVICE)
    check(x, *params(n, dtype, seed=n + 1))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("shape,dtype", [((129, 777), torch.float32),
                                         ((256, 4096), torch.bfloat16),
                                         ((96, 3000), torch.float16)],
                         ids=["129x777-f32", "256x4096-bf16", "96x3000-f16"])
def test_fresh_seeds(shape, dtype, seed):
    x = random_tensor(shape, dtype, 200 + seed, scale=1.0 + seed, offset=seed - 2.0, device=DEVICE)
    check(x, *params(shape[-1], dtype, 300 + seed))


def test_large_mean_needs_a_centred_variance():
    # Rows around 100 with unit spread: E[x^2] - E[x]^2 in float32 loses
    # about 3 digits of the variance (outputs off by ~1e-3); the centred
    # two-pass variance stays within the mean's own rounding (~1e-5).
    x = random_tensor((64, 2048), torch.float32, seed=11, offset=100.0, device=DEVICE)
    check(x, *params(2048, torch.float32, seed=12), atol=3e-4)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_constant_rows_give_the_bias(dtype):
    # Zero variance: eps alone keeps rstd finite; the output is the bias,
    # up to the mean's rounding amplified by 1/sqrt(eps).
    x = torch.full((16, 1024), 2.0, device=DEVICE, dtype=dtype)
    weight, bias = params(1024, dtype, seed=13)
    got = poisoned_call(x, weight, bias)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got.double(), bias.double().expand(16, -1), rtol=0.0,
                               atol=1e-3 + tolerances(dtype)[0] * float(bias.abs().max()))


@pytest.mark.parametrize("eps", [1e-6, 0.1, 1.0])
def test_eps_is_used(eps):
    # Small spread (variance 1e-4): an eps of 0.1 or 1 changes every output.
    x = random_tensor((32, 1000), torch.float32, seed=14, scale=1e-2, device=DEVICE)
    check(x, *params(1000, torch.float32, seed=15), eps=eps)


@pytest.mark.parametrize("start", [0, 1], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_strided_rows(start, dtype):
    # Rows of a wider matrix: row stride 1536, not n; start=1 also moves the
    # base pointer off 16-byte alignment.
    wide = random_tensor((64, 1536), dtype, seed=16, device=DEVICE)
    x = wide[:, start:start + 1024]
    assert x.stride() == (1536, 1)
    check(x, *params(1024, dtype, seed=17))


def test_non_contiguous_weight():
    x = random_tensor((8, 512), torch.float32, seed=18, device=DEVICE)
    w2 = random_tensor((512, 2), torch.float32, seed=19, offset=1.0, device=DEVICE)
    b2 = random_tensor((512, 2), torch.float32, seed=20, device=DEVICE)
    weight, bias = w2[:, 1], b2[:, 0]
    assert weight.stride() == (2,)
    check(x, weight, bias)


def test_inputs_not_mutated():
    x = random_tensor((128, 4096), torch.float16, seed=21, device=DEVICE)
    weight, bias = params(4096, torch.float16, seed=22)
    testing.assert_not_mutated(lambda a, w, b: impl.layer_norm(a, w, b, 1e-5), x, weight, bias)


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    weight, bias = params(1024, torch.float32, seed=23)
    a = random_tensor((256, 1024), torch.float32, seed=24, device=DEVICE)
    b = random_tensor((256, 1024), torch.float32, seed=25, device=DEVICE)
    got_a = impl.layer_norm(a, weight, bias, 1e-5)
    got_b = impl.layer_norm(b, weight, bias, 1e-5)
    r, t = tolerances(torch.float32)
    testing.assert_close(got_a, oracle(a, weight, bias, 1e-5), r, t)
    testing.assert_close(got_b, oracle(b, weight, bias, 1e-5), r, t)
    assert not torch.equal(got_a, got_b)


def test_runs_on_the_current_stream():
    x = random_tensor((2048, 2048), torch.float32, seed=26, device=DEVICE)
    weight = torch.ones(2048, device=DEVICE)
    bias = torch.zeros(2048, device=DEVICE)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = impl.layer_norm(x, weight, bias, 1e-5)
        # Consumed on the same stream: right only if the kernel ran there.
        # Unit weight, zero bias: every row has mean 0 and mean square ~1.
        square_sum = (got.double() ** 2).sum()
    stream.synchronize()
    assert abs(float(square_sum) / got.numel() - 1.0) < 1e-3
    r, t = tolerances(torch.float32)
    testing.assert_close(got, oracle(x, weight, bias, 1e-5), r, t)


@pytest.mark.parametrize("shape", [(0, 128), (16, 0)], ids=["no-rows", "no-cols"])
def test_empty_input(shape):
    x = torch.empty(shape, device=DEVICE)
    n = shape[-1]
    got = impl.layer_norm(x, torch.ones(n, device=DEVICE), torch.zeros(n, device=DEVICE), 1e-5)
    assert got.shape == x.shape and got.dtype == x.dtype


def test_float64_is_refused():
    x = torch.zeros((2, 8), dtype=torch.float64, device=DEVICE)
    with pytest.raises(TypeError):
        impl.layer_norm(x, torch.ones(8, dtype=torch.float64, device=DEVICE),
                        torch.zeros(8, dtype=torch.float64, device=DEVICE), 1e-5)


def test_weight_of_the_wrong_length_is_refused():
    x = torch.zeros((2, 8), device=DEVICE)
    with pytest.raises(ValueError):
        impl.layer_norm(x, torch.ones(7, device=DEVICE), torch.zeros(8, device=DEVICE), 1e-5)


def test_rows_over_64_kib_are_refused():
    x = torch.zeros((1, 16385), device=DEVICE)
    with pytest.raises(ValueError):
        impl.layer_norm(x, torch.ones(16385, device=DEVICE), torch.zeros(16385, device=DEVICE), 1e-5)
