"""Cheating candidate: makes the whole test suite skip.

Under pytest its import raises pytest.skip(allow_module_level=True), so the
suite's module is skipped whole (`1 skipped`, no failure); outside pytest it
is the honest port.

kport must reject it for `no_tests_ran` and nothing else: see
examples/gpu/cheats/README.md (skipped_suite).
"""

import sys

if "pytest" in sys.modules:
    import pytest

    pytest.skip("softmax port: CUDA path not supported on this device",
                allow_module_level=True)

import torch  # noqa: E402

from softmax_port import softmax  # noqa: E402,F401  (the honest port)

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
