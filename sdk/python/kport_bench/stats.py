"""A/A statistics over per-config ratios: geomean and the spread of |r - 1|.

Pure Python (no torch), shared by aa_summary.py (kport's verdict.json) and
do_bench_aa.py (triton.testing.do_bench), so both figures mean the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values."""
    if not values:
        raise ValueError("geomean of no values")
    if any(v <= 0 or math.isnan(v) for v in values):
        raise ValueError("geomean needs positive values")
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def aa_summary(ratios: Sequence[float], ids: Sequence[str] | None = None) -> dict:
    """geomean, p95 and max of |r - 1| (and which config is worst) over A/A ratios."""
    deviations = [abs(r - 1) for r in ratios]
    worst = max(range(len(ratios)), key=deviations.__getitem__)
    return {
        "n": len(ratios),
        "geomean": geomean(ratios),
        "p95_abs_dev": percentile(deviations, 95),
        "max_abs_dev": deviations[worst],
        "worst": ids[worst] if ids else worst,
    }
