#!/usr/bin/env python3
"""Per translation unit report of one build: the N slowest compile steps from
ninja's .ninja_log (wall time of each step, so it carries the machine's load),
and which object files include a CAF header (directly or
through other headers), to tell whether CAF still leaks into widely included
headers.
Usage: tu_report.py BUILD_DIR NINJA_LOG_COPY [N]"""
import json
import os
import re
import shlex
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


INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def reaches_caf(path, dirs, seen):
    """True when path includes a caf/ header, directly or through the
    project's own headers (resolved against its folder and the -I dirs)."""
    if path in seen:
        return False
    seen.add(path)
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return False
    for kind, name in INCLUDE.findall(text):
        if name.startswith("caf/"):
            return True
        for d in ([os.path.dirname(path)] if kind == '"' else []) + dirs:
            cand = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(cand):
                if reaches_caf(cand, dirs, seen):
                    return True
                break
    return False


def caf_objects(build):
    """object -> (includes a CAF header through its own includes, compiled
    with the CAF precompiled header forced in by -include)."""
    src_root = os.path.dirname(os.path.abspath(build))
    db = json.loads(subprocess.run(["ninja", "-C", build, "-t", "compdb"],
                                   check=True, capture_output=True,
                                   text=True).stdout)
    result = {}
    for e in db:
        args = shlex.split(e["command"])
        if "-o" not in args:
            continue
        out = args[args.index("-o") + 1]
        # Only the project's own include folders: system folders hold CAF
        # itself, which is what we look for.
        dirs = [a[2:] for a in args if a.startswith("-I")
                and a[2:].startswith(src_root)]
        pch = any(a.endswith("cmake_pch.hxx") for a in args)
        result[out] = (reaches_caf(e["file"], dirs, set()), pch)
    return result


def main():
    build, log = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    top, objs = slowest(log, n)
    caf = caf_objects(build)
    total = sum(ms for ms, _ in objs)
    with_caf = [t for t, v in caf.items() if v[0] and t.endswith(".o")]
    with_pch = [t for t, v in caf.items() if v[1] and t.endswith(".o")]
    all_o = [t for t in caf if t.endswith(".o")]
    caf_ms = sum(ms for ms, t in objs if t in with_caf)
    print(f"compile steps: {len(objs)}, sum of their wall times: {total/1000:.0f} s")
    print(f"objects including a CAF header: {len(with_caf)} of {len(all_o)}; "
          f"their steps' wall time: {caf_ms/1000:.0f} s "
          f"({100*caf_ms/max(total,1):.0f}% of the sum)")
    print(f"objects compiled with the CAF precompiled header: {len(with_pch)}"
          f" (of which include no CAF header: "
          f"{len(set(with_pch) - set(with_caf))})")
    print(f"\n{n} slowest compile steps (wall s, CAF?, target):")
    for ms, t in top:
        print(f"{ms/1000:8.1f}  {'pch' if t.endswith('.gch') else 'caf' if caf.get(t, (0, 0))[0] else '-  '}  {t}")
    print("\nobjects including a CAF header:")
    for t in sorted(with_caf):
        print(f"  {t}")
    print("\nobjects compiled with the CAF precompiled header that include no"
          " CAF header:")
    for t in sorted(set(with_pch) - set(with_caf)):
        print(f"  {t}")


main()
