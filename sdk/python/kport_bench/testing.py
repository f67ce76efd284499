"""Helpers the example suites share: tolerances, poisoned outputs, comparisons.

Needs torch and pytest. Every suite compares against a float64 oracle written
in plain torch ops (no kernel of the operator itself, so a candidate run shows
no reference kernel) at dtype-appropriate tolerances.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
import torch

#: Output rounding of the low-precision dtypes, added to the spec's tolerance.
_DTYPE_TOLERANCE = {
    torch.float16: (2e-3, 1e-5),
    torch.bfloat16: (1e-2, 1e-5),
}

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DTYPE_IDS = ["f32", "f16", "bf16"]


def require_cuda(suite: str) -> torch.device:
    """The CUDA device, or ends the run with exit code 3 (no device, not a failure)."""
    if not torch.cuda.is_available():
        pytest.exit(f"no CUDA device: the {suite} suite needs one", returncode=3)
    return torch.device("cuda")


def tolerances(dtype: torch.dtype, rtol: float | None = None,
               atol: float | None = None) -> tuple[float, float]:
    """(rtol, atol): the spec's (KPORT_RTOL / KPORT_ATOL, else the defaults given,
    else 1e-5 / 1e-6), widened for float16 and bfloat16."""
    rtol = float(os.environ.get("KPORT_RTOL", rtol if rtol is not None else 1e-5))
    atol = float(os.environ.get("KPORT_ATOL", atol if atol is not None else 1e-6))
    low_r, low_a = _DTYPE_TOLERANCE.get(dtype, (0.0, 0.0))
    return max(rtol, low_r), max(atol, low_a)


def poison(*shapes_dtypes: tuple[tuple[int, ...], torch.dtype],
           device: torch.device | str = "cuda") -> None:
    """Leaves NaN in the allocator's free blocks of these sizes: an output
    element a kernel never writes then most likely reads NaN, not an earlier
    test's right answer."""
    blocks = [torch.full(shape, float("nan"), dtype=dtype, device=device)
              for shape, dtype in shapes_dtypes]
    del blocks


def random_tensor(shape, dtype: torch.dtype, seed: int, scale: float = 1.0,
                  offset: float = 0.0, device: torch.device | str = "cuda") -> torch.Tensor:
    """Normal values (times `scale`, plus `offset`) from a generator seeded by `seed`."""
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    x = torch.randn(shape, generator=g, device=device, dtype=torch.float32) * scale + offset
    return x.to(dtype)


def assert_close(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float,
                 *, dtype: torch.dtype | None = None) -> None:
    """`got` within atol + rtol * |want| of the oracle everywhere (NaN fails),
    with shape, dtype and device checked first."""
    assert got.shape == want.shape, (tuple(got.shape), tuple(want.shape))
    if dtype is not None:
        assert got.dtype == dtype, (got.dtype, dtype)
    assert got.device.type == "cuda", got.device
    want64 = want.to(device=got.device, dtype=torch.float64)
    err = (got.double() - want64).abs()
    bad = ~(err <= atol + rtol * want64.abs())
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        pytest.fail(f"{int(bad.sum())} of {got.numel()} elements off "
                    f"(rtol={rtol}, atol={atol}); first at {idx}: got "
                    f"{float(got[idx])}, want {float(want64[idx])}")


def assert_not_mutated(fn: Callable[..., Any], *inputs: torch.Tensor) -> Any:
    """Calls fn(*inputs) and checks that no input tensor changed."""
    before = [t.clone() for t in inputs if isinstance(t, torch.Tensor)]
    result = fn(*inputs)
    torch.cuda.synchronize()
    after = [t for t in inputs if isinstance(t, torch.Tensor)]
    for i, (b, a) in enumerate(zip(before, after)):
        assert torch.equal(a, b), f"input {i} was changed by the call"
    return result
