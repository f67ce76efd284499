"""Which softmax the test suite and the bench exercise: the reference or the candidate.

kport runs the reference's own test suite and bench on the candidate; they
choose the implementation by KPORT_IMPL (reference | candidate), else by
KPORT_SIDE, which kport sets for every gate command, else the reference.
The candidate is the module softmax_impl in the workspace (KPORT_WORKSPACE,
else the current folder), written by the integrate stage.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys
import types

REFERENCE_DIR = pathlib.Path(__file__).resolve().parent
IMPLS = ("reference", "candidate")


def selected_impl(explicit: str | None = None) -> str:
    """The implementation asked for, by argument, KPORT_IMPL or KPORT_SIDE."""
    impl = explicit or os.environ.get("KPORT_IMPL") or os.environ.get("KPORT_SIDE") or "reference"
    if impl not in IMPLS:
        raise ValueError(f"unknown implementation `{impl}`: use reference or candidate")
    return impl


def workspace_dir(explicit: str | None = None) -> pathlib.Path:
    """Where the candidate lives: the argument, KPORT_WORKSPACE, or the current folder."""
    return pathlib.Path(explicit or os.environ.get("KPORT_WORKSPACE") or os.getcwd()).resolve()


def load(impl: str | None = None, workspace: str | None = None) -> types.ModuleType:
    """Imports the selected implementation; its module has softmax(x) and DTYPES."""
    impl = selected_impl(impl)
    if impl == "reference":
        folder, name = REFERENCE_DIR, "softmax_triton"
    else:
        folder, name = workspace_dir(workspace), "softmax_impl"
        if not (folder / f"{name}.py").is_file():
            raise FileNotFoundError(f"no candidate: {folder / (name + '.py')} does not exist")
    sys.path.insert(0, str(folder))
    module = importlib.import_module(name)
    origin = pathlib.Path(module.__file__).resolve()
    if origin.parent != folder:
        # A module of the same name earlier on sys.path would be tested instead.
        raise ImportError(f"{name} was imported from {origin}, not from {folder}")
    return module
