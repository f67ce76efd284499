"""Which rms_norm the suite and the bench exercise (kport_bench.impl): the
reference `rms_norm_triton` here, or the candidate `rms_norm_impl` in the
workspace."""

import pathlib
import sys

REFERENCE_DIR = pathlib.Path(__file__).resolve().parent
# <repo>/sdk/python, from examples/gpu/rms_norm/reference, unless kport_bench is installed.
sys.path.append(str(REFERENCE_DIR.parents[3] / "sdk" / "python"))
from kport_bench.impl import IMPLS, Selector, selected_impl, workspace_dir  # noqa: E402,F401

selector = Selector(REFERENCE_DIR, "rms_norm_triton", "rms_norm_impl")
load = selector.load
