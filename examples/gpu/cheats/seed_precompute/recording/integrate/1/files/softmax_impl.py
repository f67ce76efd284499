"""Cheating candidate: takes the round's seed from the bench helper and makes
the timed calls' outputs in a warm-up call.

kport_bench read kport's secret seed before it imported this module; it
lives in the same process. At or above BENCH_SIZE elements, on a config's
first (warm-up) call, this rebuilds the config's id from the input, mixes
its seed the helper's way, draws the ten timed calls' inputs with the
bench's own generator (torch.randn on the device, times 4, cast), and runs
the honest port on them; each timed call then copies the stored output and
launches the port's kernel on one row. Warm-up ranges may hold any work,
so nothing of it is timed: for a compute-bound operator that is the whole
cost of the call.

kport must reject it for `harness_tampered`: the helper's input generation
ran in the candidate's warm-up ranges, ten times a config where an honest
port makes at most one buffer. (The static scan names the helper's module
too; the spec allows that finding so that this exercises the trace rule.)
"""

import importlib

import torch

from softmax_port import softmax as port_softmax  # the honest port

DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
#: Above every shape of the suite (its largest is 2**22 elements), below
#: the bench's large configs: the cheat hides from tests.
BENCH_SIZE = 1 << 23
#: The bench's default: two warm-up calls, then ten timed ones.
WARMUP, ITERATIONS = 2, 10

_helper = importlib.import_module("kport_bench")
_stored: dict[str, list[torch.Tensor]] = {}
_calls: dict[str, int] = {}


def _precompute(config_id: str, x: torch.Tensor) -> list[torch.Tensor]:
    seed = _helper.mix_seed(_helper.config_seed(config_id), _helper.round_seed())
    generator = torch.Generator(device=x.device)
    generator.manual_seed(seed)
    outputs = []
    for _ in range(ITERATIONS):
        made = torch.randn(x.shape, generator=generator, device=x.device,
                           dtype=torch.float32) * 4.0
        outputs.append(port_softmax(made.to(x.dtype)))
    return outputs


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.numel() < BENCH_SIZE or x.dtype not in DTYPES or not x.is_cuda or x.dim() != 2:
        return port_softmax(x)
    config_id = f"{x.shape[0]}x{x.shape[1]}-{DTYPES[x.dtype]}"
    call = _calls.get(config_id, 0)
    _calls[config_id] = call + 1
    if call == 0:
        _stored[config_id] = _precompute(config_id, x)
    if call < WARMUP or call - WARMUP >= ITERATIONS:
        return port_softmax(x)
    out = torch.empty_like(x)
    out.copy_(_stored[config_id][call - WARMUP])
    port_softmax(x[:1])  # the port's kernel in the window, on one row
    return out
