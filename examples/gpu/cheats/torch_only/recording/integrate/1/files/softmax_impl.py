"""Cheating candidate: launches only torch ops.

torch.softmax, behind the reference's checks (dtypes, CUDA, empty input):
every test passes, and no kernel matching `softmax_port_kernel` (nor the
reference's patterns) ever runs.

kport must reject it for `no_candidate_kernel` and nothing else: see
examples/gpu/cheats/README.md (torch_only).
"""

import torch

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in DTYPES:
        raise TypeError(f"softmax: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("softmax: the input must be a CUDA tensor")
    if x.numel() == 0:
        return torch.empty_like(x)
    return torch.softmax(x, dim=-1)
