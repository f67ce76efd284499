"""Merges `kport run --expect` files into one, for a run over several corpora.

    python3 merge_expected.py EXPECTED.toml... > merged.toml

`kport run` takes one --expect file, and each file names its specs relative
to its own folder. The merged file names every spec by its absolute path (a
TOML [[job]] table per job, keys as they were), so it can live anywhere:
scripts/gpu-demo merges examples/gpu/expected.toml with
examples/gpu/cheats/expected.toml when that corpus exists.
"""

from __future__ import annotations

import json
import pathlib
import sys
import tomllib


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string is a JSON string
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise ValueError(f"unsupported value {v!r} in an expected job")


def merge(paths: list[pathlib.Path]) -> str:
    """The merged TOML text: every [[job]] of every file, specs made absolute."""
    out = ["# Merged by examples/gpu/tools/merge_expected.py from:"]
    out += [f"#   {p.resolve()}" for p in paths]
    for path in paths:
        data = tomllib.loads(path.read_text())
        jobs = data.get("job")
        if not isinstance(jobs, list):
            raise ValueError(f"{path}: no [[job]] tables")
        for job in jobs:
            if "spec" not in job:
                raise ValueError(f"{path}: a [[job]] without `spec`")
            out.append("")
            out.append("[[job]]")
            tables = []
            for key, v in job.items():
                if key == "spec":
                    v = str((path.resolve().parent / v).resolve())
                if isinstance(v, dict):
                    tables.append((key, v))
                else:
                    out.append(f"{key} = {_value(v)}")
            for key, table in tables:
                out.append(f"[job.{key}]")
                out += [f"{k} = {_value(x)}" for k, x in table.items()]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    paths = [pathlib.Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: merge_expected.py EXPECTED.toml...", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(merge(paths))
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        print(f"merge_expected: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
