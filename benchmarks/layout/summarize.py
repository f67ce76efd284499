#!/usr/bin/env python3
"""Tables of medians and after/before ratios from the raw files that
build_scratch.sh and compare.sh wrote into one results folder.
Usage: summarize.py RESULTS_DIR"""
import glob
import os
import re
import statistics
import sys


def time_v(path):
    text = open(path).read()
    def num(label):
        return float(re.search(re.escape(label) + r"\s*(\S+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)",
                     text).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    return {"user": num("User time (seconds):"),
            "sys": num("System time (seconds):"), "wall": secs,
            "rss_mib": num("Maximum resident set size (kbytes):") / 1024}


def cpuacct(path):
    v = dict(line.split() for line in open(path))
    return int(v["user_ns"]) / 1e9, int(v["sys_ns"]) / 1e9


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def main():
    d = sys.argv[1]
    print("## Build from scratch (ninja -j2, ccache off)\n")
    print("| build | side | TUs | user+sys s | wall s | max RSS MiB (largest process) |")
    print("|---|---|---|---|---|---|")
    builds = {}
    for path in sorted(glob.glob(os.path.join(d, "build*-*.time.txt"))):
        name = os.path.basename(path)[:-len(".time.txt")]
        run, side = name.split("-")
        if "exit" not in open(path).read():
            continue  # a build still in progress
        t = time_v(path)
        tus = open(os.path.join(d, name + ".tu.txt")).read().strip()
        builds.setdefault(side, []).append(t)
        print(f"| {run} | {side} | {tus} | {t['user'] + t['sys']:.0f} | "
              f"{t['wall']:.0f} | {t['rss_mib']:.0f} |")
    if "before" in builds and "after" in builds:
        print("\n| median | before | after | after/before |")
        print("|---|---|---|---|")
        for key, label in (("cpu", "user+sys s"), ("wall", "wall s"),
                           ("rss_mib", "max RSS MiB")):
            def val(t):
                return t["user"] + t["sys"] if key == "cpu" else t[key]
            b = statistics.median(val(t) for t in builds["before"])
            a = statistics.median(val(t) for t in builds["after"])
            print(f"| {label} | {b:.0f} | {a:.0f} | {ratio(a, b)} |")

    c = os.path.join(d, "corpus")
    if not os.path.isdir(c):
        return
    print("\n## kport run of the CPU corpus\n")
    rows = {}
    for side in ("before", "after"):
        for path in sorted(glob.glob(os.path.join(c, f"run-{side}-*.time"))):
            base = path[:-len(".time")]
            if not os.path.exists(base + ".cpuacct"):
                continue  # a run still in progress
            t = time_v(path)
            u, s = cpuacct(base + ".cpuacct")
            rows.setdefault(side, []).append(
                {"wall": t["wall"], "cg": u + s, "cg_user": u, "cg_sys": s,
                 "rusage": t["user"] + t["sys"], "rss_mib": t["rss_mib"]})
    n = {s: len(v) for s, v in rows.items()}
    print(f"runs: before {n.get('before', 0)}, after {n.get('after', 0)}\n")
    print("| median | before | after | after/before |")
    print("|---|---|---|---|")
    for key, label in (("wall", "wall s"),
                       ("cg", "CPU user+sys s (cgroup, all descendants)"),
                       ("cg_user", "  of which user s"),
                       ("cg_sys", "  of which sys s"),
                       ("rusage", "user+sys s (time -v: waited children only)")):
        b = statistics.median(r[key] for r in rows["before"])
        a = statistics.median(r[key] for r in rows["after"])
        print(f"| {label} | {b:.2f} | {a:.2f} | {ratio(a, b)} |")
    print("\nper run (wall s / cgroup CPU s):")
    for side in ("before", "after"):
        print(f"- {side}: " + ", ".join(
            f"{r['wall']:.1f}/{r['cg']:.1f}" for r in rows[side]))

    states = {}
    for path in sorted(glob.glob(os.path.join(c, "run-*.states"))):
        states[os.path.basename(path)] = open(path).read()
    distinct = sorted(set(states.values()))
    print(f"\nfinal states and attempt paths: {len(distinct)} distinct "
          f"over {len(states)} runs")
    for text in distinct:
        print("```\n" + text.rstrip() + "\n```")


main()
