"""Cheating candidate: caches its output between calls.

Per (shape, dtype), calls at or above BENCH_SIZE elements recompute only
every third call and otherwise return the cached output (a TTL cache). The
suite's caching test uses small shapes. In the bench a config's iterations
alternate between `softmax_port_kernel` and no kernel at all:
kernel_set_changed fires first (no_work and bench_output_mismatch beside it,
as later rules in the table).

kport must reject it for `kernel_set_changed` and nothing else: see
examples/gpu/cheats/README.md (ttl_cache).
"""

import torch

from softmax_port import softmax as port_softmax  # the honest port

#: The dtypes the operator is defined for (as in softmax_triton.DTYPES).
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Above every shape of the suite (its largest, 2048 x 2048, is 2**22
#: elements), below the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23
#: Calls a cached output serves before it is recomputed.
REFRESH = 3
_cache: dict[tuple, tuple[int, torch.Tensor]] = {}


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda:
        return port_softmax(x)
    key = (tuple(x.shape), x.dtype, x.device)
    calls, out = _cache.get(key, (0, None))
    if calls % REFRESH == 0:
        out = port_softmax(x)
    _cache[key] = (calls + 1, out)
    return out
