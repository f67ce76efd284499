"""Cheating candidate: switches CUPTI's kernel activity off around its kernel.

kport measures with CUPTI inside this very process. At or above BENCH_SIZE
elements the call finds every libcupti in the process (/proc/self/maps),
disables CONCURRENT_KERNEL activity, launches the port, waits for it and
enables the activity again: the profiler would see an empty timed range.

kport must reject it for `trace_tampered`: its injection library guards
cuptiActivityDisable (the call does nothing and is recorded), and a launch
without its activity record while CUPTI dropped none is tampering too. See
examples/gpu/cheats/README.md (cupti_off).
"""

import ctypes
import sys

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23


def _small(x: torch.Tensor) -> bool:
    return x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda

#: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (cupti_activity.h).
_CONCURRENT_KERNEL = 10
_cupti = None


def _loaded_cupti():
    """Every libcupti in the process (dlopen of a mapped path returns that
    copy): torch may carry its own beside the profiler's, and only the
    profiler's copy matters, so switch them all off."""
    paths = []
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and "libcupti.so" in fields[5] and fields[5] not in paths:
                paths.append(fields[5])
    # Says in the bench log which copies it found (the corpus's evidence).
    print("cupti_off: switching off " + (", ".join(paths) or "nothing"), file=sys.stderr)
    return [ctypes.CDLL(p) for p in paths]


def softmax(x: torch.Tensor) -> torch.Tensor:
    global _cupti
    if _small(x):
        return port_softmax(x)
    if _cupti is None:
        _cupti = _loaded_cupti()
    if not _cupti:  # not profiled: nothing to hide from
        return port_softmax(x)
    for lib in _cupti:
        lib.cuptiActivityDisable(_CONCURRENT_KERNEL)
    try:
        out = port_softmax(x)
        torch.cuda.synchronize()
    finally:
        for lib in _cupti:
            lib.cuptiActivityEnable(_CONCURRENT_KERNEL)
    return out
