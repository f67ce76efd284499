#!/usr/bin/env python3
"""Checks that include/kport/config.hpp gives its settings no default values:
kport's defaults live only in config/kport.default.toml (embedded, merged
under the user's files), and a second copy in C++ would drift from it.

A member may be value-initialised (`int max_jobs{};`, `std::string dir;`),
never given a value (`int max_jobs = 16;`, `std::chrono::seconds t{600};`).

    check_config_defaults.py ROOT          exit 0 clean, 1 with one line per
                                           member that carries a default
    check_config_defaults.py --self-test   checks that `int max_jobs = 16;`
                                           and `seconds t{600};` are caught
"""
import pathlib
import re
import sys

HEADER = pathlib.Path("include/kport/config.hpp")
# A data member declaration with an initializer: `= value;` or `{value};`
# (an empty `{}` is value-initialisation, which is allowed).
ASSIGNED = re.compile(r"^\s*[\w:<>, *&]+?\s+(\w+)\s*=\s*[^;]+;")
BRACED = re.compile(r"^\s*[\w:<>, *&]+?\s+(\w+)\s*\{\s*[^}\s][^}]*\}\s*;")
STRUCT = re.compile(r"^\s*struct\s+\w+\s*\{")


def strip_comment(line):
    return line.split("//", 1)[0]


def check_text(text, name=str(HEADER)):
    """Lines of `text` (a header) whose struct members carry a default."""
    problems = []
    depth = 0  # inside a struct body while > 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw)
        if depth == 0:
            if STRUCT.match(line):
                depth = 1
            continue
        m = ASSIGNED.match(line) or BRACED.match(line)
        if m and "(" not in line:  # functions and their defaults are not data
            problems.append(
                f"{name}:{n}: `{m.group(1)}` has a default in C++ "
                f"({raw.strip()}); give it in config/kport.default.toml and "
                "value-initialise the member (`{}`)")
        depth += line.count("{") - line.count("}")
    return problems


def self_test():
    clean = "struct runtime_settings {\n  int max_jobs{};\n  std::string d;\n};\n"
    if check_text(clean):
        print("self-test: a clean header was reported:", check_text(clean))
        return 1
    for bad in ("  int max_jobs = 16;", "  std::chrono::seconds test_timeout{600};",
                "  std::string runs_dir = \"runs\"; ///< doc"):
        text = "struct runtime_settings {\n" + bad + "\n};\n"
        if not check_text(text):
            print(f"self-test: `{bad.strip()}` was not reported")
            return 1
    print("self-test: literal defaults in config.hpp are caught")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    path = pathlib.Path(argv[1]) / HEADER
    problems = check_text(path.read_text())
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
