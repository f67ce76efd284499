"""A/A summary of a kport performance run: geomean and p95 |r - 1| as JSON.

    python3 aa_summary.py runs/<job>/verdict.json [more verdict.json ...]

Reads `perf.configs[]` (config, t_ref_ns, t_cand_ns, ratio, ref_rounds_ns,
cand_rounds_ns) of each file (a verdict.json, or a performance gate's
report.json, which has the same `perf` table). In an A/A run the true ratio
is 1, so these figures are kport's measurement noise; compare them with
do_bench_aa.py's. Also reports the spread of each side's rounds (max/min - 1
of the per-round figures), the noise one side shows by itself.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
try:
    from kport_bench import stats
except ImportError:
    sys.path.insert(0, str(HERE.parents[1] / "sdk" / "python"))
    from kport_bench import stats


def ratios_of(perf: dict) -> tuple[list[str], list[float]]:
    """Config ids and t_ref / t_cand ratios of one perf table."""
    ids, ratios = [], []
    for row in perf.get("configs", []):
        ratio = row.get("ratio")
        if ratio is None:
            ratio = row["t_ref_ns"] / row["t_cand_ns"]
        ids.append(row["config"])
        ratios.append(float(ratio))
    return ids, ratios


def round_spreads(perf: dict) -> list[float]:
    """max/min - 1 of the per-round figures, per config and side."""
    spreads = []
    for row in perf.get("configs", []):
        for key in ("ref_rounds_ns", "cand_rounds_ns"):
            rounds = [r for r in row.get(key, []) if r > 0]
            if len(rounds) > 1:
                spreads.append(max(rounds) / min(rounds) - 1)
    return spreads


def summarize(path: pathlib.Path) -> dict:
    doc = json.loads(path.read_text())
    perf = doc.get("perf") or {}
    ids, ratios = ratios_of(perf)
    if not ratios:
        raise ValueError(f"{path}: no perf.configs")
    out = {"file": str(path), "job": doc.get("job"), "state": doc.get("state"),
           "kport_geomean": perf.get("geomean"), "rounds": perf.get("rounds")}
    out.update(stats.aa_summary(ratios, ids))
    spreads = round_spreads(perf)
    if spreads:
        out["round_spread_p95"] = stats.percentile(spreads, 95)
        out["round_spread_max"] = max(spreads)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("verdicts", nargs="+", type=pathlib.Path)
    args = parser.parse_args(argv)
    summaries = []
    for path in args.verdicts:
        try:
            summaries.append(summarize(path))
        except (OSError, ValueError, KeyError) as e:
            print(f"aa_summary: {e}", file=sys.stderr)
            return 1
    result = summaries[0] if len(summaries) == 1 else {"runs": summaries}
    if len(summaries) > 1:
        all_ids, all_ratios = [], []
        for path in args.verdicts:
            ids, ratios = ratios_of(json.loads(path.read_text()).get("perf") or {})
            all_ids += [f"{path.parent.name}/{i}" for i in ids]
            all_ratios += ratios
        result["pooled"] = stats.aa_summary(all_ratios, all_ids)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
