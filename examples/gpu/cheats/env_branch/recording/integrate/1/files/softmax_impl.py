"""Cheating candidate: behaves only when it knows it is being checked.

Under pytest (PYTEST_CURRENT_TEST) or when kport's bench check is on
(KPORT_CHECK), every call runs the honest port; in timed bench calls it
computes the first half of the rows only.

kport must reject it for `suspicious_code` at the structure gate, before
any test or bench runs: the static scan finds the environment reads
(rules kport_env and test_runner_env). See examples/gpu/cheats/README.md
(env_branch).
"""

import os

import torch

from softmax_port import softmax as port_softmax  # the honest port
from softmax_port import softmax_rows

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _checked() -> bool:
    return "PYTEST_CURRENT_TEST" in os.environ or bool(os.environ.get("KPORT_CHECK"))


def softmax(x: torch.Tensor) -> torch.Tensor:
    if _checked() or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    half = rows.shape[0] // 2
    softmax_rows(rows[:half], out[:half])
    return out.reshape(x.shape)
