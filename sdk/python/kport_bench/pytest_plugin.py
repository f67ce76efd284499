"""kport's pytest plugin: each test inside an NVTX range ``kport.test:<nodeid>``.

kport loads it into the test runs of its correctness gate through
``PYTEST_PLUGINS=kport_bench.pytest_plugin`` (pytest reads that variable
however it is started: ``python -m pytest``, ``pytest``, ``pytest.main``
in a script), with kport_bench's folder first on PYTHONPATH. The gate then
reads, per test, which kernels were launched inside its range: a reference
kernel there is a fallback at that test (unless the spec lets the suite
use the reference as its oracle, ``target.test_oracle = "reference"``).

With ``KPORT_TEST_REPORT`` set to a path, it also writes the outcome of each
test there at the end of the session (JSON: ``{"tests": [{"id", "outcome"}],
"ranges": bool}``, messages/test_report.fbs). The gate checks it against
pytest's summary and the trace: every passed test must have launched a
candidate kernel inside its range, unless the spec's ``target.host_tests``
lists it.

NVTX's push and pop are taken when pytest configures, before the suite (and
the candidate it imports) is collected: patching ``torch.cuda.nvtx`` later
does not take the ranges away.

Without torch (or without CUDA) the ranges are simply not opened.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from .pytest_plugin_names import TEST_PREFIX

_outcomes: dict[str, str] = {}
_push = None
_pop = None


def _nvtx():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F401  (the suites under kport use it anyway)
        except ImportError:
            return None
    try:
        return torch.cuda.nvtx
    except AttributeError:
        return None


def pytest_configure(config):
    global _push, _pop
    nvtx = _nvtx()
    if nvtx is not None:
        _push, _pop = nvtx.range_push, nvtx.range_pop
        # The bare prefix says "the plugin started with NVTX" in the trace,
        # before the suite (and the candidate it imports) is collected: a
        # report that then claims no NVTX, or no report, is tampering.
        _push(TEST_PREFIX)
        _pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    # Setup, call and teardown: a fixture's launches belong to its test.
    push, pop = _push, _pop
    if push is not None:
        push(TEST_PREFIX + item.nodeid)
    try:
        yield
    finally:
        if pop is not None:
            pop()


def pytest_runtest_logreport(report):
    # The call's outcome decides; a setup that failed or skipped has none.
    if report.when == "call" or report.outcome != "passed":
        _outcomes[report.nodeid] = report.outcome
    else:
        _outcomes.setdefault(report.nodeid, report.outcome)


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("KPORT_TEST_REPORT")
    if not path:
        return
    tests = [{"id": nodeid, "outcome": outcome} for nodeid, outcome in sorted(_outcomes.items())]
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"tests": tests, "ranges": _push is not None}, f, sort_keys=True)
        f.write("\n")
