"""Exploration harness: variants of the rms_norm, layer_norm and silu_and_mul ports against
their Triton references, timed as kport times them: CUPTI kernel durations
(through torch.profiler; kport's own injection library is not loaded), an L2
flush and a synchronize before every call, fresh inputs drawn from the
op's bench, median over iterations, best over rounds, rounds interleaved
(reference, variant 1, variant 2, ... per round). Not a gate: a way to
choose what to record, on figures that mean what the gate's mean.

    python3 benchmarks/gpu/port_variants.py OP [--rounds 4] [--iterations 25]
        [--baseline DIR] [--out FILE] [--pytest]

OP is rms_norm, layer_norm or silu_and_mul. The variants are the recorded
port (the attempt the job accepts), for the norms also with plan and NVRTC
options overridden, and the port in --baseline DIR (a folder holding an
earlier attempt's files). With
--pytest, the recorded port's suite runs too (KPORT_IMPL=candidate).

The earlier harness (h200-2026-12-02-lease/run4-2148/variants.py) timed with
triton.testing.do_bench; its 20-40 us of L2 clearing per call hid
differences of 0.1-1 us. Kernel durations do not include that.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import importlib.util
import json
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
GPU = ROOT / "examples" / "gpu"
#: op -> (the accepted translate attempt, the reference kernel's glob)
OPS = {
    "rms_norm": ("translate/3", "rms_norm_kernel*"),
    "layer_norm": ("translate/1", "layer_norm_kernel*"),
    "silu_and_mul": ("translate/1", "silu_and_mul_kernel*"),
}
#: The ops whose port has the norms' plan (reference_warps): the plan variants apply.
NORMS = ("rms_norm", "layer_norm")
PORT_KERNEL = "{op}_port_kernel"


def workspace(op: str, sources: list[pathlib.Path]) -> pathlib.Path:
    """A folder with the files of `sources` (later ones win), as the replay
    agent would leave the job's workspace."""
    ws = pathlib.Path(tempfile.mkdtemp(prefix=f"port-variant-{op}-"))
    for src in sources:
        for f in src.iterdir():
            if f.is_file():
                shutil.copy(f, ws / f.name)
    return ws


def recorded_workspace(op: str) -> pathlib.Path:
    attempt, _ = OPS[op]
    rec = GPU / op / "recording"
    n = int(attempt.split("/")[1])
    files = [rec / f"translate/{i}/files" for i in range(1, n + 1)]
    files.append(rec / "integrate/1/files")
    return workspace(op, [f for f in files if f.is_dir()])


def load_port(op: str, folder: pathlib.Path):
    """Imports `<op>_impl` (and the `<op>_port` it imports) from `folder` as
    a module of its own: every variant keeps its own kernels cache."""
    for name in (f"{op}_port", f"{op}_impl"):
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        impl = importlib.import_module(f"{op}_impl")
    finally:
        sys.path.remove(str(folder))
    return impl, sys.modules[f"{op}_port"]


def plan_threads_times(port, factor: int, up_to: int = 1 << 30):
    """The recorded plan with `factor` times the reference's threads (at most
    1024) for rows of at most `up_to` elements."""
    def plan(n: int, vec: int):
        times = factor if n <= up_to else 1
        threads = min(1024, 32 * port.reference_warps(n) * times)
        items = max(1, -(-(n // vec) // threads))
        return threads, items
    return plan


def plan_sixteen_per_thread(port):
    """translate/1's plan: threads grow (32..1024) so each keeps about 16 elements."""
    def plan(n: int, vec: int):
        per_thread = 16 if n <= 1024 * 16 else 32
        items = max(1, per_thread // vec)
        n_vecs = n // vec
        threads = min(max(port._next_power_of_2(-(-n_vecs // items)), 32), 1024)
        return threads, items
    return plan


def variants(op: str, baseline: pathlib.Path | None):
    """name -> the op's callable, each from its own copy of the port module:
    the recorded port, for the norms also with plan or NVRTC options
    overridden, and the port in `baseline` (an earlier attempt's files)."""
    tweaks = {"recorded": lambda port: None}
    if op in NORMS:
        tweaks.update({
            "minblocks2": lambda port: setattr(port, "EXTRA_OPTIONS",
                                               ("-DKPORT_MIN_BLOCKS=2",)),
            "threads_x2": lambda port: setattr(port, "plan", plan_threads_times(port, 2)),
            "threads_x2_short": lambda port: setattr(
                port, "plan", plan_threads_times(port, 2, up_to=4096)),
            "sixteen_per_thread": lambda port: setattr(port, "plan",
                                                       plan_sixteen_per_thread(port)),
        })
    ws = recorded_workspace(op)
    out = {}
    for name, tweak in tweaks.items():
        impl, port = load_port(op, ws)
        tweak(port)
        out[name] = getattr(impl, op)
    if baseline is not None:
        integrate = GPU / op / "recording" / "integrate/1/files"
        impl, _ = load_port(op, workspace(op, [integrate, baseline]))
        out["baseline"] = getattr(impl, op)
    return out


def kernel_durations(trace_path: str, pattern: str) -> list[float]:
    """Durations (us) of the kernels matching `pattern`, in launch order."""
    with open(trace_path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"
               and fnmatch.fnmatch(e.get("name", ""), pattern)]
    kernels.sort(key=lambda e: e["ts"])
    return [float(e["dur"]) for e in kernels]


def measure(fn, pattern, inputs, warmup, iterations, flush):
    """{config: median us} of one implementation over every config."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _, sets in inputs:
            for k in range(warmup + iterations):
                args = sets[k % len(sets)]
                flush.zero_()
                torch.cuda.synchronize()
                fn(*args)
                torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        prof.export_chrome_trace(tmp.name)
        durations = kernel_durations(tmp.name, pattern)
    per = warmup + iterations
    if len(durations) != per * len(inputs):
        raise RuntimeError(f"{pattern}: {len(durations)} kernels, expected {per * len(inputs)}")
    return {cid: statistics.median(durations[i * per + warmup:(i + 1) * per])
            for i, (cid, _) in enumerate(inputs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", choices=sorted(OPS))
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--baseline", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--pytest", action="store_true")
    args = parser.parse_args()
    op = args.op

    import torch

    sys.path.insert(0, str(ROOT / "sdk" / "python"))
    bench_path = GPU / op / "reference" / "bench" / f"{op}_bench.py"
    spec = importlib.util.spec_from_file_location(f"{op}_bench", bench_path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    select = sys.modules[f"{op}_select"]
    reference = getattr(select.load("reference", None), op)

    impls = {"reference": (reference, OPS[op][1])}
    for name, fn in variants(op, args.baseline).items():
        impls[name] = (fn, PORT_KERNEL.format(op=op))

    inputs = []
    for config in bench.CONFIGS:
        g = torch.Generator(device="cuda")
        g.manual_seed(config.seed)
        inputs.append((config.id, [bench.make_inputs(config, g) for _ in range(3)]))
    flush = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")

    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in impls}
    for _ in range(args.rounds):
        for name, (fn, pattern) in impls.items():
            rounds[name].append(measure(fn, pattern, inputs, args.warmup, args.iterations,
                                        flush))
    best = {name: {cid: min(r[cid] for r in rs) for cid, _ in inputs}
            for name, rs in rounds.items()}
    ref = best["reference"]
    summary = {}
    print(f"== {op}: best-of-{args.rounds} median kernel time (us) of the reference; "
          f"ratio t_ref/t_variant per config")
    print("   reference " + " ".join(f"{cid}={ref[cid]:.2f}" for cid, _ in inputs))
    for name in impls:
        if name == "reference":
            continue
        ratios = {cid: ref[cid] / best[name][cid] for cid, _ in inputs}
        geomean = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
        summary[name] = {"geomean": geomean, "ratios": ratios}
        print(f"   {name:<20} geomean {geomean:.3f}  " +
              " ".join(f"{cid}={r:.3f}" for cid, r in ratios.items()))
    if args.out:
        args.out.write_text(json.dumps({"op": op, "rounds": rounds, "best": best,
                                        "summary": summary}, indent=1))
    if args.pytest:
        ws = recorded_workspace(op)
        env = dict(os.environ, KPORT_IMPL="candidate", KPORT_WORKSPACE=str(ws),
                   PYTHONPATH=str(ROOT / "sdk" / "python"))
        for k in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "KPORT_CHECK"):
            env.pop(k, None)
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x",
                            str(GPU / op / "reference" / "tests" / f"test_{op}.py")],
                           env=env, capture_output=True, text=True, timeout=300)
        print(f"== {op} recorded port, pytest rc={p.returncode}: "
              + " | ".join(p.stdout.strip().splitlines()[-3:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
