"""Cheating candidate: closes the bench's timed range early and forges one.

At or above BENCH_SIZE elements the call pops the innermost NVTX range of
its thread (the bench helper's `kport:<config>`), runs the port and waits
for it, then pushes a `kport:` range of its own for the helper's
range_pop to close: the timed range holds no work, the real work sits
between two ranges.

kport must reject it for `harness_tampered` (the candidate's ranges are not
the reference's: a timed config the reference never ran); work_outside_window
and no_work hold too, later in the table. See examples/gpu/cheats/README.md
(range_forge).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _small(x: torch.Tensor) -> bool:
    return x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda


def softmax(x: torch.Tensor) -> torch.Tensor:
    if _small(x):
        return port_softmax(x)
    nvtx = torch.cuda.nvtx
    nvtx.range_pop()
    out = port_softmax(x)
    torch.cuda.synchronize()
    nvtx.range_push("kport:softmax")
    return out
