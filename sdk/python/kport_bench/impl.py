"""Which implementation a reference's own test suite and bench exercise.

kport runs the reference's suite and bench on both sides of a port. They pick
the side by ``KPORT_IMPL`` (reference | candidate), else ``KPORT_SIDE`` (kport
sets it for every gate command), else the reference. The candidate is a module
in the workspace (``KPORT_WORKSPACE``, else the current folder), written by
the integrate stage; it is imported from there and nowhere else, so a module
of the same name earlier on ``sys.path`` cannot be tested in its place.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys
import types

IMPLS = ("reference", "candidate")


def selected_impl(explicit: str | None = None) -> str:
    """The implementation asked for: the argument, KPORT_IMPL, KPORT_SIDE or the reference."""
    impl = explicit or os.environ.get("KPORT_IMPL") or os.environ.get("KPORT_SIDE") or "reference"
    if impl not in IMPLS:
        raise ValueError(f"unknown implementation `{impl}`: use reference or candidate")
    return impl


def workspace_dir(explicit: str | None = None) -> pathlib.Path:
    """Where the candidate lives: the argument, KPORT_WORKSPACE, or the current folder."""
    return pathlib.Path(explicit or os.environ.get("KPORT_WORKSPACE") or os.getcwd()).resolve()


def import_from(folder: pathlib.Path, name: str) -> types.ModuleType:
    """Imports module `name` from `folder`, and refuses one found elsewhere."""
    folder = pathlib.Path(folder).resolve()
    if not (folder / f"{name}.py").is_file():
        raise FileNotFoundError(f"no module {name}: {folder / (name + '.py')} does not exist")
    sys.path.insert(0, str(folder))
    module = importlib.import_module(name)
    origin = pathlib.Path(module.__file__).resolve()
    if origin.parent != folder:
        raise ImportError(f"{name} was imported from {origin}, not from {folder}")
    return module


class Selector:
    """One operator's pair of modules: the reference's and the candidate's.

    ``Selector(REFERENCE_DIR, "softmax_triton", "softmax_impl")``; then
    ``load()`` imports the side kport (or the user) asked for.
    """

    def __init__(self, reference_dir: str | os.PathLike, reference_module: str,
                 candidate_module: str) -> None:
        self.reference_dir = pathlib.Path(reference_dir).resolve()
        self.reference_module = reference_module
        self.candidate_module = candidate_module

    def folder(self, impl: str | None = None, workspace: str | None = None) -> pathlib.Path:
        """The folder the selected side's module comes from."""
        if selected_impl(impl) == "reference":
            return self.reference_dir
        return workspace_dir(workspace)

    def load(self, impl: str | None = None, workspace: str | None = None) -> types.ModuleType:
        """Imports the selected side's module."""
        impl = selected_impl(impl)
        name = self.reference_module if impl == "reference" else self.candidate_module
        return import_from(self.folder(impl, workspace), name)
