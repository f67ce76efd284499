"""Quick timing of the softmax port against the Triton reference, without kport.

    python3 tools/compare_timing.py --workspace DIR [--kernel-names]

For each bench config: do_bench (min and median, its own L2 flush) of the
reference and of the candidate, alternated A B A B, best of the rounds per
side; ratio = t_ref / t_cand as the performance gate computes it, geomean
over configs. Also times the candidate at other elements-per-thread choices
(the port's one tuning knob). With --kernel-names, lists the kernels each
side launched as torch.profiler saw them (the names the spec's `kernels`
patterns must match); never run that under kport's injection library.
JSON on stdout, a table on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys

import torch
from triton.testing import do_bench

HERE = pathlib.Path(__file__).resolve().parent
REFERENCE = HERE.parent / "reference"
sys.path.insert(0, str(REFERENCE))
sys.path.insert(0, str(REFERENCE / "bench"))
import softmax_bench  # noqa: E402
import softmax_select  # noqa: E402


def _time(fn, rep_ms):
    """(min, median) in us."""
    try:
        samples = sorted(do_bench(fn, warmup=10, rep=rep_ms, return_mode="all"))
        return samples[0] * 1e3, samples[len(samples) // 2] * 1e3
    except (TypeError, ValueError, AssertionError):
        return (do_bench(fn, warmup=10, rep=rep_ms, return_mode="min") * 1e3,
                do_bench(fn, warmup=10, rep=rep_ms, return_mode="median") * 1e3)


def _kernel_names(fn, x):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(x)
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rep-ms", type=float, default=40.0)
    parser.add_argument("--variants", default="8,32", help="other elements per thread to try")
    parser.add_argument("--kernel-names", action="store_true")
    args = parser.parse_args(argv)
    ref = softmax_select.load("reference")
    cand = softmax_select.load("candidate", args.workspace)
    import softmax_port  # the launcher, imported from the workspace by the line above

    rows = []
    for config in softmax_bench.CONFIGS:
        generator = torch.Generator(device="cuda")
        generator.manual_seed(config.seed)
        (x,) = softmax_bench.make_inputs(config, generator)
        torch.testing.assert_close(cand.softmax(x).float(), ref.softmax(x).float(),
                                   rtol=1e-2, atol=1e-5)
        best = {"ref": [math.inf, math.inf], "cand": [math.inf, math.inf]}
        for _ in range(args.rounds):
            for side, fn in (("ref", ref.softmax), ("cand", cand.softmax)):
                t_min, t_med = _time(lambda: fn(x), args.rep_ms)
                best[side] = [min(best[side][0], t_min), min(best[side][1], t_med)]
        row = {"config": config.id,
               "ref_min_us": best["ref"][0], "cand_min_us": best["cand"][0],
               "ref_median_us": best["ref"][1], "cand_median_us": best["cand"][1],
               "ratio_min": best["ref"][0] / best["cand"][0],
               "ratio_median": best["ref"][1] / best["cand"][1]}
        out = torch.empty_like(x)
        for e in (int(v) for v in args.variants.split(",") if v):
            t_min, _ = _time(lambda: softmax_port.softmax_rows(x, out, e), args.rep_ms)
            row[f"cand_ept{e}_min_us"] = t_min
            torch.testing.assert_close(out.float(), ref.softmax(x).float(), rtol=1e-2, atol=1e-5)
        rows.append(row)
        print(f"{config.id:<18} ref {row['ref_min_us']:9.2f} us  cand {row['cand_min_us']:9.2f} us"
              f"  ratio(min) {row['ratio_min']:.3f}  ratio(median) {row['ratio_median']:.3f}  "
              + " ".join(f"{k}={v:.2f}" for k, v in row.items() if k.startswith("cand_ept")),
              file=sys.stderr, flush=True)
        del x, out
    geo = {mode: math.exp(sum(math.log(r[f"ratio_{mode}"]) for r in rows) / len(rows))
           for mode in ("min", "median")}
    print(f"geomean ratio(min) {geo['min']:.3f}  ratio(median) {geo['median']:.3f}",
          file=sys.stderr)
    report = {"device": torch.cuda.get_device_name(), "configs": rows, "geomean": geo}
    if args.kernel_names:
        x = torch.randn((64, 1024), device="cuda")
        report["kernel_names"] = {"reference": _kernel_names(ref.softmax, x),
                                  "candidate": _kernel_names(cand.softmax, x)}
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
