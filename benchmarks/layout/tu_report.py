#!/usr/bin/env python3
"""Per translation unit report of one build: the N slowest compile steps from
ninja's .ninja_log (wall time of each step, so it carries the machine's load),
and from `ninja -t deps` which object files include a CAF header (directly or
through other headers), to tell whether CAF still leaks into widely included
headers.
Usage: tu_report.py BUILD_DIR NINJA_LOG_COPY [N]"""
import subprocess
import sys


def slowest(log_path, n):
    steps = {}
    with open(log_path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _mtime, target, _hash = line.rstrip("\n").split("\t")
            steps[target] = int(end) - int(start)  # last entry wins
    objs = [(ms, t) for t, ms in steps.items() if t.endswith((".o", ".gch"))]
    objs.sort(reverse=True)
    return objs[:n], objs


def caf_objects(build):
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], check=True,
                         capture_output=True, text=True).stdout
    result, current = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            current = line.split(":")[0]
            result[current] = False
        elif current and "/caf/" in line:
            result[current] = True
    return result


def main():
    build, log = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    top, objs = slowest(log, n)
    caf = caf_objects(build)
    total = sum(ms for ms, _ in objs)
    with_caf = [t for t, v in caf.items() if v and t.endswith(".o")]
    all_o = [t for t in caf if t.endswith(".o")]
    caf_ms = sum(ms for ms, t in objs if caf.get(t))
    print(f"compile steps: {len(objs)}, sum of their wall times: {total/1000:.0f} s")
    print(f"objects including a CAF header: {len(with_caf)} of {len(all_o)}; "
          f"their steps' wall time: {caf_ms/1000:.0f} s "
          f"({100*caf_ms/max(total,1):.0f}% of the sum)")
    print(f"\n{n} slowest compile steps (wall s, CAF?, target):")
    for ms, t in top:
        print(f"{ms/1000:8.1f}  {'caf' if caf.get(t) else '-  '}  {t}")
    print("\nobjects including a CAF header:")
    for t in sorted(with_caf):
        print(f"  {t}")


main()
