"""How often an A/A round strays from its config, per lease mode.

    python3 aa_outliers.py DIR [DIR ...] [--by-config]

Reads every A/A verdict under the DIRs: `<mode>-<job>.verdict.json` files
(benchmarks/results) or `aa_triton-lease-<mode>/<job>/verdict.json` runs
(a gpu-check tarball). For each config every round of both sides is divided
by the median of all of them; a round more than 1.5 % away is an outlier.
Prints, per mode: rounds, the share of outliers, and the 95th and 99th
percentile of |round / median - 1|. --by-config splits the share by config
(lease off and narrow against every other mode), which shows where the
outliers sit.
"""

import collections
import glob
import json
import re
import statistics
import sys

LIMIT = 0.015


def verdicts(dirs: list[str]) -> list[tuple[str, dict]]:
    out = []
    for d in dirs:
        for f in sorted(glob.glob(d + "/*verdict.json") +
                        glob.glob(d + "/*/aa_*-*/verdict.json")):
            m = re.search(r"lease-(\w+?)[-/]aa_", f)
            if not m:
                continue
            with open(f) as fh:
                out.append((m.group(1), json.load(fh)))
    return out


def deviations(v: dict):
    """(config, |round / median - 1|) for every round of both sides."""
    for row in v["perf"]["configs"]:
        rounds = row["ref_rounds_ns"] + row["cand_rounds_ns"]
        med = statistics.median(rounds)
        for t in rounds:
            yield row["config"], abs(t / med - 1)


def by_mode(found) -> None:
    acc = collections.defaultdict(list)
    for mode, v in found:
        acc[mode].extend(d for _, d in deviations(v))
    for mode, ds in sorted(acc.items()):
        ds.sort()
        out = sum(d > LIMIT for d in ds)
        print(f"{mode:15s} rounds {len(ds):5d}  >1.5 %: {out:4d} "
              f"({100 * out / len(ds):5.2f} %)  p95 {100 * ds[int(0.95 * len(ds))]:.2f} %"
              f"  p99 {100 * ds[int(0.99 * len(ds))]:.2f} %")


def by_config(found) -> None:
    acc = collections.defaultdict(lambda: collections.defaultdict(list))
    for mode, v in found:
        group = "off" if mode in ("off", "narrow") else "lease"
        for config, d in deviations(v):
            acc[config][group].append(d > LIMIT)
    for config in sorted(acc):
        cells = [f"{g}: {100 * statistics.mean(acc[config][g]):5.1f} %"
                 for g in ("off", "lease") if acc[config][g]]
        print(f"{config:32s} " + "  ".join(cells))


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    found = verdicts(args)
    if not found:
        sys.exit("aa_outliers: no A/A verdicts under " + " ".join(args))
    by_config(found) if "--by-config" in sys.argv else by_mode(found)


if __name__ == "__main__":
    main()
