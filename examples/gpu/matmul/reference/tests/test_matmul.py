"""The real test suite of the matmul operator, for the reference and for a port.

The implementation under test is chosen by matmul_select (KPORT_IMPL, else
KPORT_SIDE, else the reference). The oracle is A @ B in float64 (the products
of float16 / bfloat16 values are exact there).

Tolerance per element: atol + rtol * |want| with (rtol, atol) from
kport_bench.testing.tolerances (KPORT_RTOL / KPORT_ATOL widened for the
output's rounding), plus 2**-16 * (|A| @ |B|) for float32 accumulation over
K on tensor cores: their adds may truncate, so the bound grows with the sum
of the magnitudes, not with the result (it is about 0.04 at K = 4096 for
normal inputs, where one missing 16-deep slice moves a result by about 4).
Small-integer inputs, where every implementation must be exact, pin the
layout without any tolerance.
"""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import matmul_select  # noqa: E402

from kport_bench.testing import poison, random_tensor, require_cuda  # noqa: E402
from kport_bench import testing  # noqa: E402

DEVICE = require_cuda("matmul")
IMPL_NAME = matmul_select.selected_impl()
impl = matmul_select.load(IMPL_NAME)

DTYPES = [torch.float16, torch.bfloat16]
DTYPE_IDS = ["f16", "bf16"]
ACCUMULATION = 2.0 ** -16


def assert_product_close(got: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    a64, b64 = a.double(), b.double()
    want = a64 @ b64
    magnitude = a64.abs() @ b64.abs()
    assert got.shape == want.shape, (tuple(got.shape), tuple(want.shape))
    assert got.dtype == a.dtype and got.device.type == "cuda", (got.dtype, got.device)
    rtol, atol = testing.tolerances(a.dtype)
    bound = atol + rtol * want.abs() + ACCUMULATION * magnitude
    err = (got.double() - want).abs()
    bad = ~(err <= bound)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        pytest.fail(f"{int(bad.sum())} of {got.numel()} elements off; first at {idx}: got "
                    f"{float(got[idx])}, want {float(want[idx])}, bound {float(bound[idx]):.3g}")


def operands(m, n, k, dtype, seed, scale=1.0):
    return (random_tensor((m, k), dtype, seed, scale, device=DEVICE),
            random_tensor((k, n), dtype, seed + 1, scale, device=DEVICE))


def poisoned_call(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    poison(((a.shape[0], b.shape[1]), a.dtype))
    return impl.matmul(a, b)


def test_selected_implementation_is_imported():
    folder = (matmul_select.REFERENCE_DIR if IMPL_NAME == "reference"
              else matmul_select.workspace_dir())
    assert pathlib.Path(impl.__file__).resolve().parent == folder
    assert tuple(impl.DTYPES) == tuple(DTYPES)


SHAPES = [
    # M, N, K: every tile family, edges in each dimension, odd sizes.
    (1, 1, 1),
    (17, 33, 65),
    (16, 64, 64),
    (48, 1000, 1000),
    (64, 4096, 512),
    (32, 256, 8192),
    (200, 300, 400),
    (999, 1001, 1003),
    (1000, 1000, 1000),
    (2500, 3000, 500),
    (2048, 4096, 256),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("m,n,k", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
def test_matches_float64_product(m, n, k, dtype):
    a, b = operands(m, n, k, dtype, seed=m * 31 + n * 17 + k)
    assert_product_close(poisoned_call(a, b), a, b)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_fresh_seeds(seed):
    a, b = operands(256, 512, 384, torch.float16, seed=1000 + 2 * seed, scale=1.0 + seed)
    assert_product_close(poisoned_call(a, b), a, b)


@pytest.mark.parametrize("m,n,k", [(128, 256, 64), (40, 72, 64), (300, 520, 96)],
                         ids=["128x256x64", "40x72x64", "300x520x96"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_small_integers_are_exact(m, n, k, dtype):
    # Integers in [-2, 2], K <= 96: every product and partial sum is exact in
    # float32, so every result the output type can hold (all of them in
    # float16, |C| <= 256 or even in bfloat16) must come out exact: a
    # misplaced element shows as a mismatch, with no tolerance to hide in.
    g = torch.Generator(device=DEVICE)
    g.manual_seed(m + n + k)
    a = torch.randint(-2, 3, (m, k), generator=g, device=DEVICE).to(dtype)
    b = torch.randint(-2, 3, (k, n), generator=g, device=DEVICE).to(dtype)
    want = (a.double() @ b.double())
    exact = want.to(dtype).double() == want
    got = poisoned_call(a, b)
    assert torch.equal(got.double()[exact], want[exact])
    assert_product_close(got, a, b)


def test_large_values():
    # Inputs of magnitude ~8 over K = 1024: results in the thousands.
    a, b = operands(512, 512, 1024, torch.float16, seed=7, scale=8.0)
    assert_product_close(poisoned_call(a, b), a, b)


def test_transposed_and_sliced_operands():
    # B as the transpose of a row-major matrix (column-major), A as a column
    # slice (row stride 1032, base not 16-byte aligned).
    wide = random_tensor((384, 1032), torch.bfloat16, 8, device=DEVICE)
    a = wide[:, 3:515]
    b_t = random_tensor((640, 512), torch.bfloat16, 9, device=DEVICE)
    b = b_t.t()
    assert not a.is_contiguous() and not b.is_contiguous()
    assert_product_close(poisoned_call(a, b), a, b)


def test_empty_k_gives_zeros():
    a = torch.empty((5, 0), dtype=torch.float16, device=DEVICE)
    b = torch.empty((0, 7), dtype=torch.float16, device=DEVICE)
    got = poisoned_call(a, b)
    assert got.shape == (5, 7) and (got == 0).all()


@pytest.mark.parametrize("shape", [((0, 16), (16, 8)), ((8, 16), (16, 0))], ids=["no-rows", "no-cols"])
def test_empty_output(shape):
    a = torch.empty(shape[0], dtype=torch.float16, device=DEVICE)
    b = torch.empty(shape[1], dtype=torch.float16, device=DEVICE)
    got = impl.matmul(a, b)
    assert got.shape == (shape[0][0], shape[1][1]) and got.dtype == torch.float16


def test_inputs_not_mutated():
    a, b = operands(300, 400, 500, torch.float16, seed=10)
    testing.assert_not_mutated(impl.matmul, a, b)


def test_fresh_inputs_give_fresh_outputs():
    # Against caching: the second call sees other data of the same shape.
    a1, b1 = operands(512, 256, 128, torch.bfloat16, seed=11)
    a2, b2 = operands(512, 256, 128, torch.bfloat16, seed=13)
    got1 = impl.matmul(a1, b1)
    got2 = impl.matmul(a2, b2)
    assert_product_close(got1, a1, b1)
    assert_product_close(got2, a2, b2)


def test_runs_on_the_current_stream():
    a, b = operands(2048, 2048, 1024, torch.float16, seed=15)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        got = impl.matmul(a, b)
        # Consumed on the same stream: right only if the kernel ran there.
        copy = got.clone()
    stream.synchronize()
    assert_product_close(copy, a, b)


def test_float32_is_refused():
    with pytest.raises(TypeError):
        impl.matmul(torch.zeros((4, 4), device=DEVICE), torch.zeros((4, 4), device=DEVICE))


def test_mixed_dtypes_are_refused():
    with pytest.raises(TypeError):
        impl.matmul(torch.zeros((4, 4), dtype=torch.float16, device=DEVICE),
                    torch.zeros((4, 4), dtype=torch.bfloat16, device=DEVICE))


def test_shapes_that_do_not_chain_are_refused():
    with pytest.raises(ValueError):
        impl.matmul(torch.zeros((4, 5), dtype=torch.float16, device=DEVICE),
                    torch.zeros((4, 5), dtype=torch.float16, device=DEVICE))
