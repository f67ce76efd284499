"""Cheating candidate: launches its kernel from a background thread.

Calls at or above BENCH_SIZE elements hand the launch to a worker thread (on
the caller's stream) and wait for it: right answers, and the kernel is
launched with no range open on its thread, outside the `kport:` range that
is open on the main thread. The timed range itself launches nothing (no_work
fires beside it, later in the table).

kport must reject it for `work_outside_window` and nothing else: see
examples/gpu/cheats/README.md (worker_thread).
"""

import concurrent.futures

import torch

from softmax_port import softmax as port_softmax  # the honest port
from softmax_port import softmax_rows

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23

_worker = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="softmax-launch")


def _launch(stream: torch.cuda.Stream, rows: torch.Tensor,
            out: torch.Tensor) -> None:
    with torch.cuda.stream(stream):
        softmax_rows(rows, out)


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    _worker.submit(_launch, torch.cuda.current_stream(), rows, out).result()
    return out.reshape(x.shape)
