#!/usr/bin/env python3
"""Checks that every `#include "..."` of kport's sources points at its own
layer or a layer listed before it, and that CAF stays in actors/ and engine/.

The order is read from the top-level CMakeLists.txt (its `foreach(layer ...)`
list), so the build and this check cannot disagree. include/kport/ (the
installed API) comes before every layer and includes only itself; sdk/cpp
(the bench helpers users compile) includes only the installed API.

    check_layers.py ROOT          exit 0 clean, 1 with one line per violation
    check_layers.py --self-test   builds a small tree with a bad include and
                                  checks that it is caught
"""
import pathlib
import re
import sys
import tempfile

SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".cu"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)
CAF_LAYERS = {"actors", "engine"}


def layer_order(root):
    text = (root / "CMakeLists.txt").read_text()
    m = re.search(r"foreach\(layer\s+([^)]*)\)", text)
    if not m:
        raise SystemExit("check_layers: no `foreach(layer ...)` in CMakeLists.txt")
    return ["include"] + m.group(1).split()


def layer_of(rel, order):
    """The layer a path (relative to ROOT) belongs to, or None."""
    parts = rel.parts
    if not parts:
        return None
    if parts[0] == "sdk":
        return "sdk"
    return parts[0] if parts[0] in order else None


def resolve(root, includer_rel, target):
    """The file an include names, relative to ROOT; None when outside the tree."""
    candidates = [pathlib.Path(target), pathlib.Path("include") / target,
                  pathlib.Path("sdk/cpp") / target, includer_rel.parent / target]
    for c in candidates:
        if (root / c).is_file():
            return pathlib.Path(*(root / c).resolve().relative_to(root.resolve()).parts)
    # flatc's output lives in the build tree: messages/<name>_generated.h
    if target.startswith("messages/") and target.endswith("_generated.h"):
        return pathlib.Path(target)
    return None


def check(root):
    root = pathlib.Path(root)
    order = layer_order(root)
    rank = {name: i for i, name in enumerate(order)}
    problems = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(root)
        if rel.parts[0] in ("build", "tests", "benchmarks", "examples") or \
                rel.parts[0].startswith(("build-", ".")):
            continue
        own = layer_of(rel, order)
        if own is None:
            continue
        text = path.read_text(errors="replace")
        for m in SYSTEM_INCLUDE.finditer(text):
            if m.group(1).startswith("caf/") and own not in CAF_LAYERS:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{rel}:{line}: includes <{m.group(1)}>: CAF belongs "
                                f"in {' and '.join(sorted(CAF_LAYERS))}/ only")
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            found = resolve(root, rel, target)
            if found is None:
                problems.append(f"{rel}:{line}: includes \"{target}\", which is no "
                                "file of the tree")
                continue
            theirs = layer_of(found, order)
            if theirs is None:
                problems.append(f"{rel}:{line}: includes \"{target}\" ({found}), "
                                "which belongs to no layer")
            elif own == "sdk":
                if theirs not in ("sdk", "include"):
                    problems.append(f"{rel}:{line}: the SDK includes \"{target}\" "
                                    f"({theirs}/); it may use only include/kport")
            elif theirs == "sdk":
                problems.append(f"{rel}:{line}: includes the SDK header \"{target}\"; "
                                "layers do not depend on the bench helpers")
            elif rank[theirs] > rank[own]:
                problems.append(f"{rel}:{line}: {own}/ includes \"{target}\" of "
                                f"{theirs}/, a later layer (order: "
                                f"{' < '.join(order)})")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "CMakeLists.txt").write_text("foreach(layer core gates)\nendforeach()\n")
        (root / "include/kport").mkdir(parents=True)
        (root / "include/kport/error.hpp").write_text("#pragma once\n")
        (root / "core").mkdir()
        (root / "gates").mkdir()
        (root / "gates/gate.hpp").write_text('#include "kport/error.hpp"\n')
        (root / "core/clean.hpp").write_text('#include "kport/error.hpp"\n')
        if check(root):
            print("self-test: a clean tree was reported:", check(root))
            return 1
        (root / "core/bad.cpp").write_text('#include "gates/gate.hpp"\n#include <caf/all.hpp>\n')
        found = check(root)
        want = ["core/bad.cpp:1: core/ includes \"gates/gate.hpp\" of gates/",
                "core/bad.cpp:2: includes <caf/all.hpp>"]
        for w in want:
            if not any(p.startswith(w) for p in found):
                print(f"self-test: `{w}...` not reported; got {found}")
                return 1
    print("self-test: a later layer's include and CAF outside actors/ are caught")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if not problems:
        print(f"check_layers: every include points at its own or an earlier layer "
              f"({' < '.join(layer_order(pathlib.Path(argv[1])))})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
