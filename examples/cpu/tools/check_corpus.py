#!/usr/bin/env python3
"""Checks the CPU corpus by hand, without kport.

For every job of expected.toml it replays the recording the way kport's
replay agent serves it (the files of a stage attempt are copied into the job's
workspace, an attempt without a recording replays the last recorded attempt
before it), runs the spec's commands with kport's substitutions and
environment, emulates the default pipeline's routes and caps, and compares the
path it takes with expected.toml. The performance gate is emulated as DESIGN.md
section 5 describes it (A B A B rounds, median over iterations, best over
rounds, geomean of t_ref / t_cand), with the NVTX ranges timed by
tools/nvtx_timer.cpp; it is repeated --repeats times to show the spread.
It also validates every result.json with flatc and checks that flatc refuses
broken copies. Everything it builds goes under --work (default /tmp).

  python3 examples/cpu/tools/check_corpus.py [--repeats 5] [--work DIR]
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent
MESSAGES = CORPUS.parent.parent / "messages"
# kport's defaults live in one file; the spec's [perf] overrides them.
DEFAULTS = CORPUS.parent.parent / "config" / "kport.default.toml"
ENUM_FIELDS = {"verdict", "owner", "failure_class"}
# GoogleTest's summary lines, the figures kport counts.
RAN = re.compile(r"^\[==========\] (\d+) tests? from .* ran\.", re.M)
PASSED = re.compile(r"^\[  PASSED  \] (\d+) tests?\.", re.M)
FAILED = re.compile(r"^\[  FAILED  \] (\d+) tests?, listed below:", re.M)


def run(argv, cwd, env, log):
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    wall = time.monotonic() - start
    log.write_text(proc.stdout)
    return proc.returncode, proc.stdout, wall


def substitute(argv, subst):
    out = []
    for arg in argv:
        for key, value in subst.items():
            arg = arg.replace("{" + key + "}", str(value))
        out.append(arg)
    return out


def test_counts(text):
    ran = RAN.search(text)
    passed = PASSED.search(text)
    failed = FAILED.search(text)
    return (int(ran.group(1)) if ran else 0, int(passed.group(1)) if passed
            else 0, int(failed.group(1)) if failed else 0)


# ---- artifacts -------------------------------------------------------------

def flatc_ok(stage, path, out):
    proc = subprocess.run(["flatc", "--strict-json", "-b", "-o", str(out),
                           f"{stage}.fbs", str(path)], cwd=MESSAGES,
                          capture_output=True, text=True)
    return proc.returncode == 0, proc.stderr.strip() or proc.stdout.strip()


def numeric_enums(value):
    """flatc accepts an enum given as a number; kport must not (DESIGN 7)."""
    if isinstance(value, dict):
        return any((k in ENUM_FIELDS and not isinstance(v, str))
                   or numeric_enums(v) for k, v in value.items())
    if isinstance(value, list):
        return any(numeric_enums(v) for v in value)
    return False


def check_artifacts(work):
    failures = 0
    out = work / "flatc"
    out.mkdir(parents=True, exist_ok=True)
    results = sorted(CORPUS.glob("*/recording*/*/*/result.json"))
    for path in results:
        stage = path.parent.parent.name
        ok, msg = flatc_ok(stage, path, out)
        doc = json.loads(path.read_text())
        enums_named = not numeric_enums(doc)
        # Broken copies flatc must refuse: a required field missing, an
        # unknown field, an unknown verdict name.
        required = "diagnosis" if "diagnosis" in doc else "summary"
        broken = {
            "missing " + required: {k: v for k, v in doc.items()
                                    if k != required},
            "unknown field": dict(doc, confidence="high"),
            "bad verdict": dict(doc, verdict="LOOKS_GOOD"),
        }
        refused = []
        for what, copy in broken.items():
            bad = work / "broken" / path.relative_to(CORPUS)
            bad.parent.mkdir(parents=True, exist_ok=True)
            bad.write_text(json.dumps(copy))
            accepted, _ = flatc_ok(stage, bad, out)
            refused.append(not accepted)
        good = ok and enums_named and all(refused)
        failures += not good
        print(f"  {'ok ' if good else 'BAD'} {path.relative_to(CORPUS)}"
              f"{'' if ok else ': ' + msg}"
              f"{'' if enums_named else ': enum as a number'}"
              f"{'' if all(refused) else ': a broken copy was accepted'}")
    return failures


# ---- replay ----------------------------------------------------------------

class job:
    def __init__(self, spec_path, work):
        self.spec_path = spec_path
        self.spec = tomllib.loads(spec_path.read_text())
        base = spec_path.parent
        self.reference = (base / self.spec["reference"]["dir"]).resolve()
        self.recording = (base / self.spec["agents"]["recording"]).resolve()
        self.root = work / spec_path.relative_to(CORPUS).with_suffix("")
        shutil.rmtree(self.root, ignore_errors=True)
        self.workspace = self.root / "workspace"
        self.out = self.root / "out"
        self.evidence = self.root / "job"
        for d in (self.workspace, self.out, self.evidence):
            d.mkdir(parents=True)
        tol = self.spec.get("tolerance", {})
        self.subst = {"reference": self.reference, "workspace": self.workspace,
                      "out": self.out, "job": self.evidence}
        self.env = dict(os.environ, KPORT_REFERENCE=str(self.reference),
                        KPORT_WORKSPACE=str(self.workspace),
                        KPORT_OUT=str(self.out),
                        KPORT_RTOL=repr(tol.get("rtol", 1e-5)),
                        KPORT_ATOL=repr(tol.get("atol", 1e-6)))
        self.attempts = {}
        self.path = []
        self.logs = 0

    def command(self, side, what, log_name):
        argv = substitute(self.spec[side][what], self.subst)
        cwd = self.reference if side == "reference" else self.workspace
        self.logs += 1
        log = self.evidence / f"{self.logs:02d}-{log_name}.log"
        return run(argv, cwd, self.env, log)

    def agent(self, stage):
        """Serves stage's next attempt as the replay agent does."""
        attempt = self.attempts.get(stage, 0) + 1
        self.attempts[stage] = attempt
        recorded = [int(p.name) for p in (self.recording / stage).glob("*")
                    if p.name.isdigit() and int(p.name) <= attempt]
        if not recorded:
            raise SystemExit(f"{self.spec_path}: no recording for {stage}")
        src = self.recording / stage / str(max(recorded))
        if (src / "files").is_dir():
            shutil.copytree(src / "files", self.workspace, dirs_exist_ok=True)
        result = json.loads((src / "result.json").read_text())
        return attempt, result

    def step(self, stage, attempt, verdict, note=""):
        self.path.append(f"{stage}/{attempt} {verdict}")
        print(f"    {stage}/{attempt}: {verdict}{'  ' + note if note else ''}")


def bench_ranges(job_, side, timer, tag):
    env_extra = {"NVTX_INJECTION64_PATH": str(timer)}
    fd, out = tempfile.mkstemp(prefix="ranges-", dir=job_.root)
    os.close(fd)
    env_extra["KPORT_TIMER_OUT"] = out
    saved = job_.env
    job_.env = dict(saved, **env_extra)
    try:
        rc, _, wall = job_.command(side, "bench", f"bench-{tag}")
    finally:
        job_.env = saved
    ranges = {}
    for line in Path(out).read_text().splitlines():
        name, ns = line.split("\t")
        ranges.setdefault(name, []).append(int(ns))
    os.unlink(out)
    if rc != 0:
        raise SystemExit(f"{job_.spec_path}: {side} bench exited {rc}")
    return ranges, wall


def performance(job_, timer, repeats):
    rounds = job_.spec.get("perf", {}).get("rounds", 4)
    geomeans, per_config, walls = [], {}, {"reference": [], "target": []}
    for rep in range(repeats):
        best = {"reference": {}, "target": {}}
        for r in range(rounds):
            for side in ("reference", "target"): # A B A B
                ranges, wall = bench_ranges(job_, side, timer, f"{side}-{rep}-{r}")
                walls[side].append(wall)
                for cfg, ns in ranges.items():
                    med = statistics.median(ns)
                    prev = best[side].get(cfg)
                    best[side][cfg] = med if prev is None else min(prev, med)
        if set(best["reference"]) != set(best["target"]):
            raise SystemExit(f"{job_.spec_path}: config ids differ between sides")
        ratios = {c: best["reference"][c] / best["target"][c]
                  for c in best["reference"]}
        for c, x in ratios.items():
            per_config.setdefault(c, []).append(x)
        geomeans.append(math.exp(statistics.fmean(math.log(x)
                                                  for x in ratios.values())))
    return geomeans, per_config, walls


def default_floor():
    with open(DEFAULTS, "rb") as f:
        return tomllib.load(f)["perf"]["floor"]


def run_job(entry, timer, repeats, work):
    j = job(CORPUS / entry["spec"], work)
    print(f"\n== {entry['spec']}")
    floor = j.spec.get("perf", {}).get("floor", default_floor())
    if "build" in j.spec["reference"]:
        rc, _, wall = j.command("reference", "build", "reference-build")
        print(f"    reference build: exit {rc} ({wall:.1f} s)")
    rc, text, wall = j.command("reference", "test", "reference-test")
    print(f"    reference test: exit {rc}, ran/passed/failed "
          f"{test_counts(text)} ({wall:.2f} s)")
    caps = {"diagnose_perf": 1, "translate": 2, "integrate": 2}
    stage, state, reason = "analyze", None, ""
    measured = []
    while state is None:
        if stage in caps and j.attempts.get(stage, 0) >= caps[stage]:
            state, reason = "REJECTED", f"cap: {stage} over {caps[stage]}"
            break
        if stage in ("analyze", "translate", "integrate", "diagnose_ir",
                     "diagnose_perf"):
            attempt, result = j.agent(stage)
            verdict = result["verdict"]
            owner = result.get("diagnosis", {}).get("owner", "")
            j.step(stage, attempt, verdict, owner)
            nxt = {("analyze", "PASS"): "translate",
                   ("translate", "COMPILED"): "integrate",
                   ("integrate", "INTEGRATED"): "structure",
                   ("diagnose_perf", "FIXABLE"): "translate"}.get((stage, verdict))
            if stage == "diagnose_ir" and verdict == "FAIL_FIXABLE":
                nxt = {"kernel": "translate", "host": "integrate"}.get(owner)
            if nxt is None:
                state, reason = "REJECTED", f"{stage} {verdict}"
            stage = nxt
        elif stage == "structure":
            j.attempts["structure"] = j.attempts.get("structure", 0) + 1
            j.step("structure", j.attempts["structure"], "PASS_WITH_NOTES",
                   "no IR commands")
            stage = "correctness"
        elif stage == "correctness":
            n = j.attempts["correctness"] = j.attempts.get("correctness", 0) + 1
            rc_b, _, wall_b = j.command("target", "build", "target-build")
            rc, text, wall = j.command("target", "test", "target-test")
            ran, passed, failed = test_counts(text)
            ok = rc_b == 0 and rc == 0 and ran > 0 and failed == 0
            summary = (PASSED.findall(text) and f"[  PASSED  ] {passed} tests.")
            if failed:
                summary += f"  [  FAILED  ] {failed} tests, listed below"
            j.step("correctness", n, "ALL_PASS" if ok else "FAIL",
                   f"build {wall_b:.1f} s, test {wall:.2f} s: {summary}")
            stage = "performance" if ok else ("diagnose_ir" if ran else None)
            if stage is None:
                state, reason = "BLOCKED", "no tests ran"
        elif stage == "performance":
            n = j.attempts["performance"] = j.attempts.get("performance", 0) + 1
            geomeans, per_config, walls = performance(j, timer, repeats)
            med = statistics.median(geomeans)
            measured.append((j.attempts["translate"], geomeans, per_config, walls))
            verdict = "DONE" if med >= floor else "INVESTIGATE"
            j.step("performance", n, verdict,
                   f"geomean t_ref/t_cand median {med:.2f} over {repeats} "
                   f"(min {min(geomeans):.2f}, max {max(geomeans):.2f})")
            for c, xs in per_config.items():
                print(f"        {c:12s} ratio median {statistics.median(xs):6.2f}"
                      f"  [{min(xs):.2f} .. {max(xs):.2f}]")
            print(f"        bench wall: reference median "
                  f"{statistics.median(walls['reference']):.3f} s (max "
                  f"{max(walls['reference']):.3f}), candidate median "
                  f"{statistics.median(walls['target']):.3f} s (max "
                  f"{max(walls['target']):.3f})")
            if verdict == "DONE":
                state, reason = "ACCEPTED", "performance DONE"
            else:
                stage = "diagnose_perf"
    want = entry["state"]
    got_attempts = {k: v for k, v in j.attempts.items()
                    if k in entry.get("attempts", {})}
    ok = (state == want and got_attempts == entry.get("attempts", {})
          and entry.get("reason_contains", "") in reason
          and j.path == entry.get("path", j.path))
    print(f"    => {state} ({reason}); expected {want}: "
          f"{'ok' if ok else 'MISMATCH'}")
    if not ok:
        print(f"       attempts {j.attempts}\n       path {j.path}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "kport-cpu-check")
    parser.add_argument("--only", help="spec path substring")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    timer = args.work / "nvtx_timer.so"
    subprocess.run(["c++", "-O2", "-std=c++17", "-shared", "-fPIC",
                    "-I" + os.environ.get("NVTX_INCLUDE", "/usr/local/cuda/include"),
                    "-o", str(timer), str(HERE / "nvtx_timer.cpp")], check=True)
    print("artifacts (flatc --strict-json, enum names, broken copies refused):")
    bad = check_artifacts(args.work)
    expected = tomllib.loads((CORPUS / "expected.toml").read_text())
    ok = True
    for entry in expected["job"]:
        if args.only and args.only not in entry["spec"]:
            continue
        ok &= run_job(entry, timer, args.repeats, args.work)
    print(f"\n{'all jobs as expected' if ok and not bad else 'FAILURES'}")
    return 0 if ok and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
