"""kport's pytest plugin: each test inside an NVTX range ``kport.test:<nodeid>``.

kport loads it into the test runs of its correctness gate through
``PYTEST_PLUGINS=kport_bench.pytest_plugin`` (pytest reads that variable
however it is started: ``python -m pytest``, ``pytest``, ``pytest.main``
in a script), with kport_bench's folder first on PYTHONPATH. The gate then
reads, per test, which kernels were launched inside its range: a reference
kernel there is a fallback at that test (unless the spec lets the suite
use the reference as its oracle, ``target.test_oracle = "reference"``).

With ``KPORT_TEST_REPORT`` set to a path, it also writes the outcome of each
test there at the end of the session (JSON: ``{"tests": [{"id", "outcome"}]}``).

Without torch (or without CUDA) the ranges are simply not opened.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from .pytest_plugin_names import TEST_PREFIX

_outcomes: dict[str, str] = {}


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    nvtx = _nvtx()
    # Setup, call and teardown: a fixture's launches belong to its test.
    if nvtx is not None:
        nvtx.range_push(TEST_PREFIX + item.nodeid)
    try:
        yield
    finally:
        if nvtx is not None:
            nvtx.range_pop()


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
        json.dump({"tests": tests}, f, sort_keys=True)
        f.write("\n")
