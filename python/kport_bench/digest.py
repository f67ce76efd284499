"""Digests of a bench's outputs, for kport's integrity rule (KPORT_CHECK).

A digest is small enough to write per config on every run, and enough to see
that the candidate computed the reference's function on the same inputs:
shape, dtype, sums in float64, counts of NaN and Inf, and a sample of
elements at indices drawn from the config's seed (the same indices on both
sides).
"""

from __future__ import annotations

import math
import random
from typing import Any

#: Elements sampled per output tensor.
SAMPLE_SIZE = 16


def sample_indices(numel: int, seed: int, count: int = SAMPLE_SIZE) -> list[int]:
    """`count` flat indices in [0, numel), sorted, from `seed` alone.

    The first and last element are always in: writes that miss a tail or a
    head show there first.
    """
    if numel <= 0:
        return []
    if numel <= count:
        return list(range(numel))
    rng = random.Random(seed)
    picked = {0, numel - 1}
    while len(picked) < count:
        picked.add(rng.randrange(numel))
    return sorted(picked)


def _json_number(value: float) -> float | str:
    """Floats as JSON allows them: NaN and infinities become strings."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _tensors(output: Any) -> list[Any]:
    import torch

    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (list, tuple)):
        return [t for item in output for t in _tensors(item)]
    if isinstance(output, dict):
        return [t for key in sorted(output) for t in _tensors(output[key])]
    return []


def output_digest(output: Any, seed: int) -> list[dict[str, Any]]:
    """One digest per tensor in `output` (a tensor, or nested lists/tuples/dicts)."""
    import torch

    digests = []
    for tensor in _tensors(output):
        flat = tensor.detach().reshape(-1)
        numel = flat.numel()
        digest: dict[str, Any] = {
            "shape": list(tensor.shape),
            "dtype": str(tensor.dtype).removeprefix("torch."),
            "numel": numel,
        }
        if numel and not flat.is_complex():
            values = flat.double()
            finite = torch.isfinite(values)
            index = sample_indices(numel, seed)
            sample = values[torch.tensor(index, device=values.device)].cpu().tolist()
            digest.update({
                "sum": _json_number(float(torch.where(finite, values, 0.0).sum())),
                "abs_sum": _json_number(float(torch.where(finite, values.abs(), 0.0).sum())),
                "nan": int(torch.isnan(values).sum()),
                "inf": int(torch.isinf(values).sum()),
                "sample_index": index,
                "sample": [_json_number(v) for v in sample],
            })
        digests.append(digest)
    return digests
