"""Cheating candidate: torch kernels launched from a worker thread.

At or above BENCH_SIZE elements the call hands torch.softmax to a worker
thread (on the caller's stream) and waits for it. The worker has no NVTX
range, and its kernels are torch's, not the candidate's: the old rule only
looked for candidate kernels outside the windows.

kport must reject it for `work_outside_window`: device work outside the
windows that the reference's bench does not have, whatever its name (the
detail names the thread). no_work holds too, later in the table. See
examples/gpu/cheats/README.md (thread_torch).
"""

import concurrent.futures

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _small(x: torch.Tensor) -> bool:
    return x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda

_worker = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="softmax-launch")


def _run(stream: torch.cuda.Stream, x: torch.Tensor) -> torch.Tensor:
    with torch.cuda.stream(stream):
        out = torch.softmax(x, dim=-1)
        stream.synchronize()
        return out


def softmax(x: torch.Tensor) -> torch.Tensor:
    if _small(x):
        return port_softmax(x)
    return _worker.submit(_run, torch.cuda.current_stream(), x).result()
