"""Figures of one corpus sweep for the device-lease benchmark (issue 8).

    python3 lease_sweep.py LABEL KPORT_JSON RUNS_DIR [STOPPED_AFTER_S]

KPORT_JSON is what `kport run --json` printed for the sweep; RUNS_DIR its
--runs-dir. A sweep stopped at a time limit printed no summary: its wall time
is then gpu-demo's (summary.json beside RUNS_DIR) or, for a plain `kport
run`, STOPPED_AFTER_S; the states of its jobs are then unknown. Reads every
gate report's measured runs (RunRecord: wall, starting, waiting, leased and
kernel time) and prints one JSON line:
the sweep's wall time, the device busy fraction (kernel time of every run,
L2 flushes included, over the wall time), and the ratio of wall time to
(slowest start-up + sum of GPU phases), where a run's GPU phase is the time
it held the lease; with the lease off, the whole run is its GPU phase.
`by_gate` splits the runs by the gate that made them (structure: IR dumps,
correctness: test suites, performance: benches): how long each kind held
the device and how much of that its kernels filled.
"""

import glob
import json
import os
import sys


def gate_of(report_path):
    """The gate of an attempt folder named <NN>-<gate>-<attempt>."""
    parts = os.path.basename(os.path.dirname(report_path)).split("-")
    return parts[1] if len(parts) >= 3 else "?"


def runs_of(runs_dir):
    for path in sorted(glob.glob(os.path.join(runs_dir, "*", "*", "report.json"))):
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        for run in report.get("runs", []):
            yield dict(run, gate=gate_of(path))


def by_gate(runs):
    out = {}
    for r in runs:
        g = out.setdefault(r["gate"], {"runs": 0, "wall_s": 0.0, "leased_s": 0.0,
                                       "kernel_s": 0.0})
        g["runs"] += 1
        g["wall_s"] += r.get("wall_ns", 0) / 1e9
        g["leased_s"] += r.get("leased_ns", 0) / 1e9
        g["kernel_s"] += r.get("kernel_ns", 0) / 1e9
    for g in out.values():
        held = g["leased_s"] or g["wall_s"]
        g["kernel_share_of_held"] = round(g["kernel_s"] / held, 4) if held else None
        for k in ("wall_s", "leased_s", "kernel_s"):
            g[k] = round(g[k], 3)
    return out


def main(argv):
    label, summary_path, runs_dir = argv[1:4]
    stopped_after = float(argv[4]) if len(argv) > 4 else None
    with open(summary_path, encoding="utf-8") as f:
        text = f.read()
    # The log may hold log lines around the JSON summary. A sweep stopped at
    # its time limit has none (see the docstring).
    start = text.find('{"jobs": [')
    demo_summary = os.path.join(os.path.dirname(os.path.abspath(runs_dir)), "summary.json")
    if start >= 0:
        summary, _ = json.JSONDecoder().raw_decode(text[start:])
        summary["complete"] = True
    elif os.path.exists(demo_summary):
        with open(demo_summary, encoding="utf-8") as f:
            demo = json.load(f)
        summary = {"wall_s": demo["wall_s"], "complete": False,
                   "jobs": [{"state": j.get("state", "INCOMPLETE")} for j in demo["jobs"]]}
    elif stopped_after is not None:
        jobs = [d for d in os.listdir(runs_dir) if os.path.isdir(os.path.join(runs_dir, d))
                and d != "schemas"]
        summary = {"wall_s": stopped_after, "complete": False,
                   "jobs": [{"state": "INCOMPLETE"} for _ in jobs]}
    else:
        print(f"lease_sweep: {summary_path} holds no summary (was the sweep stopped?) and "
              f"there is no {demo_summary}: pass the seconds after which it was stopped",
              file=sys.stderr)
        return 2
    runs = list(runs_of(runs_dir))
    wall_s = summary["wall_s"]
    kernel_s = sum(r.get("kernel_ns", 0) for r in runs) / 1e9
    leased_s = sum(r.get("leased_ns", 0) for r in runs) / 1e9
    lease_on = leased_s > 0
    starting = [r.get("starting_ns", 0) / 1e9 for r in runs]
    run_wall = [r.get("wall_ns", 0) / 1e9 for r in runs]
    gpu_phases = leased_s if lease_on else sum(run_wall)
    slowest_start = max(starting, default=0.0) if lease_on else 0.0
    bound = slowest_start + gpu_phases
    states = {}
    for job in summary.get("jobs", []):
        states[job["state"]] = states.get(job["state"], 0) + 1
    print(json.dumps({
        "label": label,
        "jobs": len(summary.get("jobs", [])),
        "complete": summary["complete"],
        "states": states,
        "measured_runs": len(runs),
        "wall_s": round(wall_s, 3),
        "kernel_s": round(kernel_s, 3),
        "busy_fraction": round(kernel_s / wall_s, 4) if wall_s else None,
        "leased_s": round(leased_s, 3),
        "slowest_startup_s": round(slowest_start, 3),
        "sum_gpu_phases_s": round(gpu_phases, 3),
        "wall_over_bound": round(wall_s / bound, 3) if bound else None,
        "by_gate": by_gate(runs),
        "devices": summary.get("devices"),
    }, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
