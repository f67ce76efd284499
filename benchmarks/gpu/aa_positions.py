"""Where in a job's run order A/A noise sits: per round of each side.

    python3 aa_positions.py RUNS_DIR [RUNS_DIR ...]

Each RUNS_DIR holds A/A jobs (<job>/verdict.json). For every config, each
round of each side is divided by the median of all 8 rounds; the geomean of
that over configs and jobs is printed per position, in run order (A1 B1 A2
B2 A3 B3 A4 B4). With no position effect every figure is ~0; a run order
that puts one side in a slot the others do not share shows as a bias there.
"""

import glob
import json
import math
import statistics
import sys


def positions(runs_dir: str) -> list[list[float]]:
    acc: list[list[float]] = [[] for _ in range(8)]
    for f in sorted(glob.glob(runs_dir + "/*/verdict.json")):
        for row in json.load(open(f))["perf"]["configs"]:
            a, b = row["ref_rounds_ns"], row["cand_rounds_ns"]
            if len(a) != 4 or len(b) != 4:
                continue
            med = statistics.median(a + b)
            for i in range(4):
                acc[2 * i].append(math.log(a[i] / med))
                acc[2 * i + 1].append(math.log(b[i] / med))
    return acc


for d in sys.argv[1:]:
    acc = positions(d)
    cells = [f"{'AB'[k % 2]}{k // 2 + 1}:{100 * (math.exp(statistics.mean(v)) - 1):+.2f}%"
             for k, v in enumerate(acc) if v]
    print(d, " ".join(cells))
