#!/usr/bin/env python3
"""Checks that both sides of every paired run stayed on one device, and
reports each device's busy time, from the gate reports of a kport runs dir.

    pair_devices.py RUNS_DIR      prints JSON; exit 1 if a pair was split
"""
import json
import pathlib
import sys

runs = pathlib.Path(sys.argv[1])
busy = {}
split = []
pairs = 0
for report in sorted(runs.glob("*/*-performance-*/report.json")):
    data = json.loads(report.read_text())
    devices = set()
    for run in data.get("runs", []):
        if not run.get("what", "").startswith("bench"):
            continue
        dev = run.get("device", "?")
        devices.add(dev)
        busy[dev] = busy.get(dev, 0) + run.get("wall_ns", 0) / 1e9
    pairs += 1
    if len(devices) != 1:
        split.append({"report": str(report), "devices": sorted(devices)})
print(json.dumps({"performance_gates": pairs, "split_pairs": split,
                  "bench_busy_s_per_device": busy}, indent=2))
sys.exit(1 if split else 0)
