"""A/A noise of triton.testing.do_bench on the A/A benches' configs, for comparison
with kport's CUPTI figure.

    python3 do_bench_aa.py [--set all|triton|cuda] [--warmup-ms 25] [--rep-ms 100]

Times every config twice in one process (all configs, then all again: drift
between the passes counts, as it does between kport's rounds), each time with
do_bench's own L2 flush, and reads both of do_bench's figures from the same
samples: min (return_mode="min") and mean (return_mode="mean"). Per config the
A/A ratio is pass 1 / pass 2. Prints JSON on stdout: per config both figures
of both passes and the ratios, then per mode the geomean, p95 and max of
|r - 1| (kport_bench.stats). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import statistics
import sys
import time

import torch
import triton
from triton.testing import do_bench

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from aa_common import kport_bench  # noqa: E402
from kport_bench import stats  # noqa: E402


def _bench_sets(name: str):
    sets = []
    if name in ("all", "triton"):
        import aa_triton_bench
        sets.append(("triton", aa_triton_bench))
    if name in ("all", "cuda"):
        import aa_cuda_bench
        sets.append(("cuda", aa_cuda_bench))
    return sets


def _figures(fn, warmup_ms: float, rep_ms: float) -> dict[str, float]:
    """do_bench's min and mean figures (ms), from one set of samples where it can."""
    try:
        samples = list(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all"))
        return {"min_ms": min(samples), "mean_ms": statistics.fmean(samples),
                "samples": len(samples)}
    except (TypeError, ValueError, AssertionError):
        # A do_bench without return_mode="all": one call per mode.
        return {"min_ms": do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="min"),
                "mean_ms": do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="mean"),
                "samples": 0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=["all", "triton", "cuda"], default="all")
    parser.add_argument("--warmup-ms", type=float, default=25.0)
    parser.add_argument("--rep-ms", type=float, default=100.0)
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args(argv)

    entries = []  # (set name, module, config)
    for set_name, module in _bench_sets(args.set):
        for config in kport_bench.select(module.CONFIGS, args.only):
            entries.append((set_name, module, config))
    # Keyed by set and id: both sets have configs of the same name (add-f32-*).
    figures: dict[tuple[str, str], list[dict[str, float]]] = {
        (s, c.id): [] for s, _, c in entries}
    started = time.monotonic()
    for run_index in range(2):
        for set_name, module, config in entries:
            generator = torch.Generator(device="cuda")
            generator.manual_seed(config.seed)
            inputs = module.make_inputs(config, generator)
            figures[(set_name, config.id)].append(
                _figures(lambda: module.call(*inputs), args.warmup_ms, args.rep_ms))
            del inputs
            print(f"do_bench pass {run_index + 1} {config.id:<32} "
                  f"min={figures[(set_name, config.id)][-1]['min_ms'] * 1e3:10.2f} us "
                  f"mean={figures[(set_name, config.id)][-1]['mean_ms'] * 1e3:10.2f} us",
                  file=sys.stderr, flush=True)

    configs = []
    ratios = {"min": [], "mean": []}
    for set_name, _, config in entries:
        first, second = figures[(set_name, config.id)]
        row = {"config": config.id, "set": set_name,
               "min_ms": [first["min_ms"], second["min_ms"]],
               "mean_ms": [first["mean_ms"], second["mean_ms"]],
               "samples": [first["samples"], second["samples"]]}
        for mode in ratios:
            r = first[f"{mode}_ms"] / second[f"{mode}_ms"]
            row[f"ratio_{mode}"] = r
            ratios[mode].append(r)
        configs.append(row)
    report = {
        "tool": "triton.testing.do_bench",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__, "triton": triton.__version__,
        "python": platform.python_version(),
        "warmup_ms": args.warmup_ms, "rep_ms": args.rep_ms,
        "wall_s": round(time.monotonic() - started, 1),
        "configs": configs,
        "summary": {mode: stats.aa_summary(values, [e[2].id for e in entries])
                    for mode, values in ratios.items()},
    }
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
