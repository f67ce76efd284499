"""Cheating candidate: does the smallest configs on the host.

Inputs of at least 256 rows and at most HOST_SIZE elements (the bench's
256x128 config; none of the suite's shapes) are copied to the host,
computed there by torch and copied back: right answers and, inside the
timed range, copies but no kernel. A timer that sums kernel time would call
the bench's 256x128 config free. (Its first form did every input up to
HOST_SIZE on the host, the suite's small shapes too: the proof per test
now rejects that at the correctness gate, `no_candidate_kernel`.)

kport must reject it for `no_work` and nothing else: see
examples/gpu/cheats/README.md (host_small).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Inputs this small are done on the CPU.
HOST_SIZE = 1 << 15


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in DTYPES:
        raise TypeError(f"softmax: unsupported dtype {x.dtype}")
    if not x.is_cuda:
        raise ValueError("softmax: the input must be a CUDA tensor")
    if x.dim() == 2 and x.shape[0] >= 256 and 0 < x.numel() <= HOST_SIZE:
        y = torch.softmax(x.detach().cpu().float(), dim=-1)
        return y.to(device=x.device, dtype=x.dtype)
    return port_softmax(x)
