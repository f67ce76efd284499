"""Where in a job's run order A/A noise sits: per round of each side.

    python3 aa_positions.py RUNS_DIR [RUNS_DIR ...]

Each RUNS_DIR holds A/A jobs (<job>/verdict.json). For every config, each
round of each side is divided by the median of both sides' rounds; the geomean of
that over configs and jobs is printed per side and round (A1 B1 A2 B2 ...).
The gate ran them A1 B1 A2 B2 A3 B3 A4 B4 before 2026-12-04 and in
gates/bench_order's order (A1 B1 A2 B2 B3 A3 B4 A4) since. With no position
effect every figure is ~0; a run order that puts one side in a slot the
other does not share shows as a bias there.
"""

import glob
import json
import math
import statistics
import sys


def positions(runs_dir: str) -> list[list[float]]:
    """Log deviations per position (A1, B1, A2, ...), over configs and jobs."""
    acc: list[list[float]] = []
    for f in sorted(glob.glob(runs_dir + "/*/verdict.json")):
        with open(f) as fh:
            rows = json.load(fh)["perf"]["configs"]
        for row in rows:
            a, b = row["ref_rounds_ns"], row["cand_rounds_ns"]
            if len(a) != len(b) or not a:
                continue  # a cut-short config has no round in every slot
            med = statistics.median(a + b)
            while len(acc) < 2 * len(a):
                acc.append([])
            for i, (ta, tb) in enumerate(zip(a, b)):
                acc[2 * i].append(math.log(ta / med))
                acc[2 * i + 1].append(math.log(tb / med))
    return acc


def main() -> None:
    for d in sys.argv[1:]:
        cells = [f"{'AB'[k % 2]}{k // 2 + 1}:{100 * (math.exp(statistics.mean(v)) - 1):+.2f}%"
                 for k, v in enumerate(positions(d)) if v]
        print(d, " ".join(cells))


if __name__ == "__main__":
    main()
