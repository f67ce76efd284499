#!/usr/bin/env python3
"""Checks trace.json files against the Chrome trace event format as kport
writes it: a {"traceEvents": [...]} object; every event has ph, ts, pid and
tid; complete events ("X") have a dur >= 0; and on each (pid, tid) track the
spans nest (a span that starts inside another ends inside it).

    check_chrome_trace.py --kport KPORT BUNDLE   copies a recorded runs
        folder, removes its trace.json files, has `kport trace` write each
        job's anew and checks them
    check_chrome_trace.py FILE...                checks the files
    check_chrome_trace.py --self-test            checks that a bad nesting
                                                 and a missing field are caught
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile


def problems_of(doc):
    out = []
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        return ["no traceEvents array"]
    tracks = {}
    for i, e in enumerate(events):
        for k in ("ph", "ts", "pid", "tid"):
            if k not in e:
                out.append(f"event {i} ({e.get('name')}) has no `{k}`")
        if e.get("ph") == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                out.append(f"event {i} ({e.get('name')}) has no dur >= 0")
                continue
            # In integer ns: kport writes microseconds with 3 decimals, and
            # adjacent spans share a boundary that floats would blur.
            b = round(float(e["ts"]) * 1000)
            tracks.setdefault((e.get("pid"), e.get("tid")), []).append(
                (b, b + round(float(e["dur"]) * 1000), e.get("name")))
    for track, spans in tracks.items():
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for b, e, name in spans:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and e > stack[-1][1]:
                out.append(f"track {track}: `{name}` [{b}, {e}] overlaps "
                           f"`{stack[-1][2]}` [{stack[-1][0]}, {stack[-1][1]}] "
                           "without nesting")
            stack.append((b, e, name))
    return out


def check_files(paths):
    bad = 0
    for p in paths:
        probs = problems_of(json.loads(pathlib.Path(p).read_text()))
        for q in probs:
            print(f"{p}: {q}")
        bad += bool(probs)
        if not probs:
            n = len(json.loads(pathlib.Path(p).read_text())["traceEvents"])
            print(f"{p}: {n} events, every track nests")
    return 1 if bad else 0


def self_test():
    good = {"traceEvents": [
        {"ph": "X", "name": "a", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
        {"ph": "X", "name": "b", "ts": 2, "dur": 3, "pid": 1, "tid": 1}]}
    crossing = {"traceEvents": [
        {"ph": "X", "name": "a", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
        {"ph": "X", "name": "b", "ts": 5, "dur": 10, "pid": 1, "tid": 1}]}
    missing = {"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": 1,
                                "pid": 1}]}
    if problems_of(good):
        print("self-test: a good trace was refused:", problems_of(good))
        return 1
    if not problems_of(crossing) or not problems_of(missing):
        print("self-test: a crossing span or a missing tid was not caught")
        return 1
    print("self-test: crossing spans and missing fields are caught")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) == 4 and argv[1] == "--kport":
        kport, bundle = argv[2], pathlib.Path(argv[3])
        with tempfile.TemporaryDirectory() as d:
            runs = pathlib.Path(d) / "runs"
            shutil.copytree(bundle, runs)
            paths = []
            for job in sorted(p.parent for p in runs.glob("*/verdict.json")):
                (job / "trace.json").unlink(missing_ok=True)
                out = subprocess.run([kport, "trace", str(job)], check=True,
                                     capture_output=True, text=True)
                paths.append(out.stdout.strip())
            if not paths:
                print(f"no job in {bundle}")
                return 1
            return check_files(paths)
    if len(argv) < 2:
        print(__doc__)
        return 2
    return check_files(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
