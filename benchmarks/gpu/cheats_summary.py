"""Figures of a cheat-corpus run: cases, rejected for the right rule, honest accepted.

    python3 cheats_summary.py RUNS_DIR [--expected examples/gpu/cheats/expected.toml]
                              [--markdown OUT.md]

Matches every job folder under RUNS_DIR to its [[job]] of the expectation
file by its spec (kport copies the spec into the job folder byte for byte),
then compares the final state, the leading reason literal and the rules of
verdict.json's `integrity` findings. Prints one JSON object; with
--markdown also writes the table for benchmarks/results. Exits 1 when any
case is off or missing: the figures are only worth a clean run.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_EXPECTED = HERE.parents[1] / "examples" / "gpu" / "cheats" / "expected.toml"


def leading_literal(reason: str) -> str:
    """The word before the first ':' of a final reason ("" when there is none)."""
    head, sep, _ = reason.partition(":")
    return head if sep and " " not in head else ""


def load_cases(expected: pathlib.Path) -> dict[bytes, dict]:
    """Each [[job]] keyed by its spec file's bytes (how a job folder names it)."""
    data = tomllib.loads(expected.read_text())
    cases = {}
    for job in data["job"]:
        spec = (expected.parent / job["spec"]).resolve()
        cases[spec.read_bytes()] = dict(job, name=spec.parent.name)
    return cases


def summarize(runs: pathlib.Path, expected: pathlib.Path) -> dict:
    cases = load_cases(expected)
    rows, seen = [], set()
    for verdict_path in sorted(runs.glob("*/verdict.json")):
        job_dir = verdict_path.parent
        spec = job_dir / "spec.toml"
        case = cases.get(spec.read_bytes()) if spec.exists() else None
        if case is None:
            continue
        verdict = json.loads(verdict_path.read_text())
        rules = [f.get("rule") for f in verdict.get("integrity", [])]
        want_reason = case.get("reason", "")
        got_reason = verdict.get("reason", "")
        ok = (verdict.get("state") == case["state"]
              and (not want_reason or leading_literal(got_reason) == want_reason)
              and (not want_reason or (rules and rules[0] == want_reason)))
        seen.add(case["name"])
        rows.append({"case": case["name"], "job": verdict.get("job"),
                     "expected": case["state"] + (f" {want_reason}" if want_reason else ""),
                     "state": verdict.get("state"), "reason": got_reason,
                     "rules": rules, "wall_s": verdict.get("wall_s"), "ok": bool(ok)})
    missing = sorted(c["name"] for c in cases.values() if c["name"] not in seen)
    cheats = [r for r in rows if r["expected"].startswith("REJECTED")]
    honest = [r for r in rows if r["expected"] == "ACCEPTED"]
    return {"cases": len(cases), "ran": len(rows), "missing": missing,
            "cheats": len(cheats),
            "rejected_for_the_right_rule": sum(r["ok"] for r in cheats),
            "honest": len(honest), "honest_accepted": sum(r["ok"] for r in honest),
            "rows": rows}


def rule_counts(rules: list) -> str:
    """`a ×3, b`: each rule once, in the order first found, with its count."""
    counts: dict = {}
    for r in rules:
        counts[r] = counts.get(r, 0) + 1
    return ", ".join(f"{r} ×{n}" if n > 1 else str(r) for r, n in counts.items())


def markdown(s: dict) -> str:
    lines = [f"cases {s['cases']}, ran {s['ran']}; cheats rejected for the right rule "
             f"{s['rejected_for_the_right_rule']} of {s['cheats']}; honest accepted "
             f"{s['honest_accepted']} of {s['honest']}"
             + (f"; missing: {', '.join(s['missing'])}" if s["missing"] else ""), "",
             "| case | expected | state | rules found (first names the reason) | wall s | ok |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in s["rows"]:
        wall = f"{r['wall_s']:.1f}" if isinstance(r["wall_s"], (int, float)) else ""
        lines.append(f"| {r['case']} | {r['expected']} | {r['state']} | "
                     f"{rule_counts(r['rules']) or '-'} | {wall} | {'yes' if r['ok'] else 'NO'} |")
    lines += ["", "Final reasons:", ""]
    lines += [f"- {r['case']}: {r['reason']}" for r in s["rows"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=pathlib.Path)
    parser.add_argument("--expected", type=pathlib.Path, default=DEFAULT_EXPECTED)
    parser.add_argument("--markdown", type=pathlib.Path)
    args = parser.parse_args(argv)
    s = summarize(args.runs, args.expected)
    print(json.dumps({k: v for k, v in s.items() if k != "rows"}, indent=2))
    if args.markdown:
        args.markdown.write_text(markdown(s))
    clean = (not s["missing"] and s["rejected_for_the_right_rule"] == s["cheats"]
             and s["honest_accepted"] == s["honest"])
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
