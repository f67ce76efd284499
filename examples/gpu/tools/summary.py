"""Per-operator summary of a `kport run` over the GPU corpus: a table on stdout, summary.html beside it.

    python3 summary.py RUNS_DIR [--out DIR] [--wall-s SECONDS] [--kport-log FILE]

Reads every job folder of RUNS_DIR (the evidence bundles `kport run
--runs-dir` writes: README "The evidence bundle"): verdict.json for the final
state, reason and attempts; the last performance attempt's report.json for
the per-config ratios (verdict.json's perf table when there is none). A job
that has no verdict.json yet (the sweep was stopped) is listed as
INCOMPLETE with the attempts its folders show. --kport-log adds whether each
job ended as `--expect` said (kport prints one `kport: JOB: ...` line per
mismatch). Writes DIR/summary.html (the table and, when matplotlib is
importable, a per-config ratio plot as an embedded PNG) and
DIR/summary.json; DIR defaults to $OUT, else RUNS_DIR.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import html
import io
import json
import math
import os
import pathlib
import re
import sys

_ATTEMPT_DIR = re.compile(r"^(\d+)-([a-z_]+)-(\d+)$")
_STAGE_ORDER = ("analyze", "translate", "integrate", "structure", "correctness",
                "performance", "diagnose_ir", "diagnose_perf")


@dataclasses.dataclass
class ConfigRatio:
    """One bench config of a job's last performance attempt."""

    config: str
    ratio: float
    t_ref_ns: float
    t_cand_ns: float


@dataclasses.dataclass
class JobSummary:
    """What the table shows of one job."""

    job: str
    operator: str
    state: str
    reason: str
    attempts: dict[str, int]
    geomean: float | None = None
    floor: float | None = None
    configs: list[ConfigRatio] = dataclasses.field(default_factory=list)
    tests_executed: int | None = None
    expected: str = ""

    @property
    def ratio_range(self) -> tuple[float, float] | None:
        ratios = [c.ratio for c in self.configs if c.ratio > 0]
        return (min(ratios), max(ratios)) if ratios else None

    def attempts_text(self) -> str:
        order = {s: i for i, s in enumerate(_STAGE_ORDER)}
        stages = sorted(self.attempts, key=lambda s: (order.get(s, len(order)), s))
        return " ".join(f"{s}={self.attempts[s]}" for s in stages)


def _read_json(path: pathlib.Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _attempt_dirs(job_dir: pathlib.Path) -> list[tuple[int, str, int, pathlib.Path]]:
    found = []
    for child in job_dir.iterdir():
        m = _ATTEMPT_DIR.match(child.name)
        if m and child.is_dir():
            found.append((int(m[1]), m[2], int(m[3]), child))
    return sorted(found)


def _operator(job_dir: pathlib.Path) -> str:
    """The operator of the job's spec copy; the job name's stem without one."""
    try:
        import tomllib
        return tomllib.loads((job_dir / "spec.toml").read_text())["operator"]
    except (ImportError, OSError, KeyError, ValueError):
        return job_dir.name.rsplit("-", 1)[0]


def _configs(perf: dict | None) -> list[ConfigRatio]:
    if not perf:
        return []
    return [ConfigRatio(c.get("config", "?"), float(c.get("ratio", 0.0)),
                        float(c.get("t_ref_ns", 0.0)), float(c.get("t_cand_ns", 0.0)))
            for c in perf.get("configs", [])]


def read_job(job_dir: pathlib.Path) -> JobSummary:
    """The summary of one evidence bundle."""
    attempts_seen = _attempt_dirs(job_dir)
    performance = [a for a in attempts_seen if a[1] == "performance"]
    report = _read_json(performance[-1][3] / "report.json") if performance else None
    verdict = _read_json(job_dir / "verdict.json")
    if verdict is None:
        counts: dict[str, int] = {}
        for _, stage, attempt, _ in attempts_seen:
            counts[stage] = max(counts.get(stage, 0), attempt)
        last = attempts_seen[-1] if attempts_seen else None
        summary = JobSummary(job_dir.name, _operator(job_dir),
                             "INCOMPLETE", f"stopped during {last[1]}/{last[2]}" if last
                             else "no stage ran", counts)
    else:
        counts = {a["stage"]: int(a.get("attempts", 0)) for a in verdict.get("attempts", [])}
        summary = JobSummary(verdict.get("job", job_dir.name), verdict.get("operator", "?"),
                             verdict.get("state", "?"), verdict.get("reason", ""), counts,
                             tests_executed=(verdict.get("tests") or {}).get("executed"))
        perf = verdict.get("perf") or {}
        if perf.get("configs"):
            summary.geomean = perf.get("geomean")
            summary.floor = perf.get("floor")
    report_perf = (report or {}).get("perf") or {}
    if report_perf.get("configs"):
        summary.configs = _configs(report_perf)
        summary.geomean = report_perf.get("geomean", summary.geomean)
        summary.floor = report_perf.get("floor", summary.floor)
    elif verdict is not None:
        summary.configs = _configs(verdict.get("perf"))
    return summary


def read_runs(runs_dir: pathlib.Path) -> list[JobSummary]:
    """Every job folder of a runs dir (folders with a spec copy or attempt folders)."""
    jobs = []
    for child in sorted(runs_dir.iterdir()):
        if not child.is_dir() or child.name == "schemas":
            continue
        if (child / "verdict.json").exists() or (child / "spec.toml").exists() \
                or _attempt_dirs(child):
            jobs.append(read_job(child))
    return jobs


def apply_kport_log(jobs: list[JobSummary], log_text: str) -> None:
    """Marks each job with its --expect result from kport's stderr."""
    mismatches: dict[str, list[str]] = {}
    checked = "every job ended as expected" in log_text or "did not end as expected" in log_text
    for line in log_text.splitlines():
        m = re.match(r"^kport: ([^:\s]+): (.*)$", line)
        if m:
            mismatches.setdefault(m[1], []).append(m[2])
    for job in jobs:
        if job.job in mismatches:
            job.expected = "MISMATCH: " + "; ".join(mismatches[job.job])
        elif checked:
            job.expected = "as expected"


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def table(jobs: list[JobSummary], wall_s: float | None = None) -> str:
    """The per-operator table, one job a row and its reason below it."""
    header = ("job", "operator", "state", "configs", "geomean", "min", "max", "attempts")
    rows = []
    for j in jobs:
        rr = j.ratio_range
        rows.append((j.job, j.operator, j.state, str(len(j.configs)) if j.configs else "-",
                     _fmt(j.geomean), _fmt(rr[0]) if rr else "-", _fmt(rr[1]) if rr else "-",
                     j.attempts_text()))
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for j, r in zip(jobs, rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if j.reason:
            lines.append(f"    reason: {j.reason}")
        if j.expected:
            lines.append(f"    expect: {j.expected}")
    states = {}
    for j in jobs:
        states[j.state] = states.get(j.state, 0) + 1
    total = sum(len(j.configs) for j in jobs)
    tail = f"{len(jobs)} jobs ({', '.join(f'{n} {s}' for s, n in sorted(states.items()))}), " \
           f"{total} paired configs"
    if wall_s is not None:
        tail += f", sweep wall time {wall_s:.1f} s"
    lines.append(tail)
    return "\n".join(lines) + "\n"


def ratio_plot_png(jobs: list[JobSummary]) -> tuple[bytes | None, str]:
    """A PNG of every config's ratio, grouped by job, or None and why not."""
    with_configs = [j for j in jobs if j.configs]
    if not with_configs:
        return None, "no job reached a performance table"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None, "matplotlib is not importable here"
    fig, ax = plt.subplots(figsize=(max(8.0, 0.12 * sum(len(j.configs) for j in with_configs)), 4.5))
    x = 0
    ticks, labels = [], []
    for j in with_configs:
        xs = list(range(x, x + len(j.configs)))
        ax.scatter(xs, [c.ratio for c in j.configs], s=18, label=f"{j.operator} ({j.state})")
        ticks.append(x + (len(j.configs) - 1) / 2)
        labels.append(j.operator)
        x += len(j.configs) + 2
    floors = {j.floor for j in with_configs if j.floor}
    for f in floors:
        ax.axhline(f, color="red", linewidth=0.8, linestyle="--")
    ax.axhline(1.0, color="grey", linewidth=0.6)
    ax.set_yscale("log")
    ax.set_ylabel("t_ref / t_cand (CUPTI, best of rounds)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.legend(fontsize=7, loc="best")
    ax.set_title("per-config ratio; dashed: the floor")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue(), ""


def html_page(jobs: list[JobSummary], png: bytes | None, wall_s: float | None,
              no_plot: str = "") -> str:
    """summary.html: the table, the plot (or why there is none) and each job's configs."""
    e = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>kport GPU corpus</title>",
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}"
           ".ACCEPTED{color:#070}.REJECTED{color:#a00}.BLOCKED,.INCOMPLETE{color:#a60}</style>",
           "</head><body><h1>kport GPU corpus</h1>"]
    if wall_s is not None:
        out.append(f"<p>sweep wall time {wall_s:.1f} s, {len(jobs)} jobs</p>")
    out.append("<table><tr><th>job</th><th>operator</th><th>state</th><th>configs</th>"
               "<th>geomean</th><th>min</th><th>max</th><th>attempts</th><th>reason</th>"
               "<th>expected</th></tr>")
    for j in jobs:
        rr = j.ratio_range
        out.append(f"<tr><td>{e(j.job)}</td><td>{e(j.operator)}</td>"
                   f"<td class='{e(j.state)}'>{e(j.state)}</td>"
                   f"<td>{len(j.configs) or '-'}</td><td>{_fmt(j.geomean)}</td>"
                   f"<td>{_fmt(rr[0]) if rr else '-'}</td><td>{_fmt(rr[1]) if rr else '-'}</td>"
                   f"<td>{e(j.attempts_text())}</td><td>{e(j.reason)}</td>"
                   f"<td>{e(j.expected)}</td></tr>")
    out.append("</table>")
    if png:
        out.append("<h2>Per-config ratio</h2><img alt='per-config ratio' src='data:image/png;base64,"
                   + base64.b64encode(png).decode() + "'>")
    else:
        out.append(f"<p>No plot: {e(no_plot)}.</p>")
    for j in jobs:
        if not j.configs:
            continue
        out.append(f"<h3>{e(j.job)}</h3><table><tr><th>config</th><th>t_ref ns</th>"
                   "<th>t_cand ns</th><th>ratio</th></tr>")
        for c in j.configs:
            out.append(f"<tr><td>{e(c.config)}</td><td>{c.t_ref_ns:.0f}</td>"
                       f"<td>{c.t_cand_ns:.0f}</td><td>{c.ratio:.3f}</td></tr>")
        out.append("</table>")
    out.append("</body></html>\n")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="where summary.html and summary.json go (default $OUT, else RUNS_DIR)")
    parser.add_argument("--wall-s", type=float, default=None, help="the sweep's wall time")
    parser.add_argument("--kport-log", type=pathlib.Path, default=None,
                        help="kport run's stderr, for the --expect results")
    args = parser.parse_args(argv)
    if not args.runs_dir.is_dir():
        parser.error(f"{args.runs_dir} is not a folder")
    out = args.out or pathlib.Path(os.environ.get("OUT") or args.runs_dir)
    out.mkdir(parents=True, exist_ok=True)
    jobs = read_runs(args.runs_dir)
    if args.kport_log and args.kport_log.exists():
        apply_kport_log(jobs, args.kport_log.read_text(errors="replace"))
    sys.stdout.write(table(jobs, args.wall_s))
    png, no_plot = ratio_plot_png(jobs)
    (out / "summary.html").write_text(html_page(jobs, png, args.wall_s, no_plot))
    (out / "summary.json").write_text(json.dumps(
        {"wall_s": args.wall_s, "jobs": [dataclasses.asdict(j) for j in jobs]}, indent=1) + "\n")
    print(f"summary: {out / 'summary.html'}" + ("" if png else f" (no plot: {no_plot})"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
