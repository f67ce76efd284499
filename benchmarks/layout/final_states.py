#!/usr/bin/env python3
"""Prints, per job of one runs folder, its final state, its reason (numbers
masked as #: geomeans are measurements and differ run to run) and its history
as `stage#attempt VERDICT -> next stage or final state`, from each job's verdict.json. Two runs
folders print the same text when their jobs took the same paths to the same
final states.
Usage: final_states.py RUNS_DIR"""
import glob
import json
import os
import re
import sys

for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "verdict.json"))):
    v = json.load(open(path))
    job = os.path.basename(os.path.dirname(path))
    reason = re.sub(r"\d+(\.\d+)?", "#", v.get("reason", ""))
    print(f"{job} {v['state']}: {reason}")
    for h in v["history"]:
        # At def1c10 the last step names the final state in `next`; at
        # 097c82b it has no `next` and names it in `final` instead.
        nxt = h.get("next", h.get("final"))
        print(f"  {h['stage']}#{h['attempt']} {h['verdict']} -> {nxt}")
