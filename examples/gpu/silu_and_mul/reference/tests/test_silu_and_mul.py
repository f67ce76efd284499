"""The real test suite of silu_and_mul, for the reference and for a port.

The implementation under test is chosen by silu_and_mul_select (KPORT_IMPL,
else KPORT_SIDE, else the reference). The oracle is float64 in plain torch
(g / (1 + exp(-g)) * u: no kernel of the operator, so a candidate run shows no
reference kernel). Tolerances come from kport_bench.testing.tolerances:
float32 takes KPORT_RTOL / KPORT_ATOL, float16 and bfloat16 add their output
rounding.
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import silu_and_mul_select  # noqa: E402

from kport_bench import testing  # noqa: E402
from kport_bench.testing import DTYPE_IDS, DTYPES, poison, random_tensor, require_cuda  # noqa: E402

DEVICE = require_cuda("silu_and_mul")
IMPL_NAME = silu_and_mul_select.selected_impl()
impl = silu_and_mul_select.load(IMPL_NAME)


def oracle(x: torch.Tensor) -> torch.Tensor:
    x64 = x.double()
    d = x.shape[-1] // 2
    gate, up = x64[..., :d], x64[..., d:]
    return gate / (1.0 + torch.exp(-gate)) * up


def poisoned_call(x: torch.Tensor) -> torch.Tensor:
    poison(((*x.shape[:-1], x.shape[-1] // 2), x.dtype))
    return impl.silu_and_mul(x)


def assert_close(got: torch.Tensor, x: torch.Tensor) -> None:
    testing.assert_close(got, oracle(x), *testing.tolerances(x.dtype), dtype=x.dtype)


def random_input(shape, dtype, seed, scale=2.0) -> torch.Tensor:
    return random_tensor(shape, dtype, seed, scale, device=DEVICE)


#: [..., 2d]: d from 1 to 14336, odd d (no vector path), 3-D.
SHAPES = [
    (1, 2), (1, 14), (7, 256), (3, 1000), (16, 8192), (5, 8194),
    (33, 22016), (2, 28672), (64, 2 * 515), (2, 3, 2 * 4097),
]


def test_selected_implementation_is_imported():
    folder = (silu_and_mul_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else silu_and_mul_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matches_float64_oracle(shape, dtype):
    x = random_input(shape, dtype, seed=sum(shape) * 31 + len(shape))
    got = poisoned_call(x)
    assert got.shape == (*shape[:-1], shape[-1] // 2)
    assert_close(got, x)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("shape,dtype", [((129, 2 * 777), torch.float32),
                                         ((256, 2 * 4096), torch.bfloat16),
                                         ((96, 2 * 3000), torch.float16)],
                         ids=["129x1554-f32", "256x8192-bf16", "96x6000-f16"])
def test_fresh_seeds(shape, dtype, seed):
    x = random_input(shape, dtype, seed=100 + seed, scale=1.0 + seed)
    assert_close(poisoned_call(x), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_large_gates_saturate(dtype):
    # exp(-g) overflows float32 for g < -88 and underflows for g > 88:
    # silu must go to -0 and to g, never NaN (inf / inf).
    g = torch.Generator(device=DEVICE)
    g.manual_seed(5)
    gate = (torch.rand((32, 512), generator=g, device=DEVICE) * 400 - 200)
    up = torch.randn((32, 512), generator=g, device=DEVICE)
    x = torch.cat([gate, up], dim=-1).to(dtype)
    got = poisoned_call(x)
    assert torch.isfinite(got).all()
    assert_close(got, x)


@pytest.mark.parametrize("start", [0, 1], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_strided_rows(start, dtype):
    # Rows of a wider matrix (a fused projection's output): row stride 4352,
    # not 2d; start=1 also moves the base pointer off 16-byte alignment.
    wide = random_input((64, 4352), dtype, seed=6)
    x = wide[:, start:start + 4096]
    assert x.stride() == (4352, 1)
    assert_close(poisoned_call(x), x)


def test_non_contiguous_last_dim():
    x = random_input((512, 64), torch.float32, seed=7).t()
    assert x.stride(-1) != 1
    assert_close(poisoned_call(x), x)


def test_input_not_mutated():
    x = random_input((128, 8192), torch.bfloat16, seed=8)
    testing.assert_not_mutated(impl.silu_and_mul, x)


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    a = random_input((256, 2048), torch.float32, seed=9)
    b = random_input((256, 2048), torch.float32, seed=10)
    got_a = impl.silu_and_mul(a)
    got_b = impl.silu_and_mul(b)
    assert_close(got_a, a)
    assert_close(got_b, b)
    assert not torch.equal(got_a, got_b)


def test_runs_on_the_current_stream():
    x = random_input((4096, 4096), torch.float32, seed=11)
    want = oracle(x)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = impl.silu_and_mul(x)
        # Consumed on the same stream: right only if the kernel ran there.
        total = got.double().sum()
    stream.synchronize()
    assert abs(float(total) - float(want.sum())) < 1e-6 * float(want.abs().sum()) + 1e-3
    assert_close(got, x)


@pytest.mark.parametrize("shape", [(0, 256), (16, 0), (4, 0, 8)], ids=["no-rows", "no-cols", "3d-empty"])
def test_empty_input(shape):
    x = torch.empty(shape, device=DEVICE)
    got = impl.silu_and_mul(x)
    assert got.shape == (*shape[:-1], shape[-1] // 2) and got.dtype == x.dtype


def test_odd_last_dimension_is_refused():
    with pytest.raises(ValueError):
        impl.silu_and_mul(torch.zeros((2, 7), device=DEVICE))


def test_float64_is_refused():
    with pytest.raises(TypeError):
        impl.silu_and_mul(torch.zeros((2, 8), dtype=torch.float64, device=DEVICE))
