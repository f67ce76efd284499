"""What the A/A benches share: the kport_bench import and a one-off check of each kernel."""

from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent

try:
    import kport_bench
except ImportError:
    # <repo>/sdk/python, from benchmarks/gpu/.
    sys.path.insert(0, str(HERE.parents[1] / "sdk" / "python"))
    import kport_bench


def verify_all(configs, make_inputs, call, expected) -> bool:
    """Runs each config once (no ranges, untimed) and compares with torch.

    A/A timing of a kernel that computes garbage would still be noise-free;
    this keeps the kernels honest. Prints one line per config.
    """
    import torch

    ok = True
    for config in configs:
        generator = torch.Generator(device="cuda")
        generator.manual_seed(config.seed)
        inputs = make_inputs(config, generator)
        got = call(*inputs)
        want, rtol, atol = expected(inputs)
        err = (got.double() - want.double()).abs()
        bound = atol + rtol * want.double().abs()
        bad = int((~(err <= bound)).sum())
        ok = ok and bad == 0
        print(f"verify {config.id:<32} {'ok' if bad == 0 else 'FAILED'} "
              f"max_err={float(err.max()):.3g} bad={bad}", flush=True)
        del inputs, got, want, err, bound
    return ok
