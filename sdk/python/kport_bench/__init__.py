"""kport's bench convention for Python (torch) benches.

kport times a bench by its NVTX ranges: an iteration's device time is the sum
of the kernels launched inside the range ``kport:<config>`` (DESIGN.md §5).
Every Python bench goes through :func:`run`, so that the reference and the
candidate benches follow one convention: the same config ids, the same inputs
(drawn from a generator seeded by the config id), the same L2 flush, and
nothing but the call inside the timed range.

Only torch is needed, and only once :func:`run` is called: the pure helpers
(:func:`config_seed`, :func:`sample_indices`, :func:`check_record`) import
without it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import statistics
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

from . import digest as _digest
from . import guard as _guard
from .digest import (call_digest, check_record, input_digest, mix_seed, output_digest,
                     output_problems, sample_indices)

__all__ = [
    "Config",
    "ConfigResult",
    "LEASE_RELEASE_MARK",
    "RANGE_PREFIX",
    "WARMUP_PREFIX",
    "add_arguments",
    "bench_main",
    "check_record",
    "config_seed",
    "protect",
    "round_seed",
    "input_digest",
    "output_digest",
    "run",
    "sample_indices",
    "select",
]

#: kport reads ranges with this prefix as timed iterations (gates/bench_samples.hpp).
RANGE_PREFIX = "kport:"
#: Warm-up calls run in ranges named so: outside every ``kport:`` range, yet
#: a trace reader can tell warm-up launches from work hidden outside the window.
WARMUP_PREFIX = "kport.warmup:"
#: The NVTX mark that gives kport's device lease back (trace/inject/lease_client.hpp).
LEASE_RELEASE_MARK = "kport.lease:release"
#: The helper's own steps around a timed call, each in its range, so that a
#: trace tells harness work from work a candidate hides outside the window
#: (include/kport/nvtx_convention.hpp has every name).
INPUTS_PREFIX = "kport.inputs:"
FLUSH_PREFIX = "kport.flush:"
DIGEST_PREFIX = "kport.digest:"
#: One test of a suite (kport_bench.pytest_plugin).
TEST_PREFIX = "kport.test:"
#: Mixed into the seed of the warm-up generator, so that the measured inputs do
#: not depend on how many warm-up calls ran.
_WARMUP_SALT = 0x5DEECE66D


@dataclasses.dataclass(frozen=True)
class Config:
    """One bench config: its id (the contract with kport) and its parameters."""

    id: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def seed(self) -> int:
        """The config's seed for this process: its id's, mixed with kport's
        secret round seed (KPORT_SEED) when there is one."""
        return mix_seed(config_seed(self.id), round_seed())

    def __getitem__(self, key: str) -> Any:
        return self.params[key]


@dataclasses.dataclass
class ConfigResult:
    """CUDA-event times of one config's timed iterations, in microseconds.

    For the bench's own summary only: kport takes its figures from CUPTI.
    """

    config: str
    times_us: list[float]

    @property
    def median_us(self) -> float:
        return statistics.median(self.times_us)

    @property
    def min_us(self) -> float:
        return min(self.times_us)


def config_seed(config_id: str) -> int:
    """A stable 63-bit seed from a config id (Python's hash() is salted per process)."""
    digest = hashlib.blake2b(config_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def _read_round_seed() -> int | None:
    # Read once, at import, before the candidate is imported: it has no
    # business knowing the inputs in advance. kport writes the seed on the
    # bench's stdin (KPORT_SEED_FD) and closes it, so once read here nobody
    # else can; an environment variable would be in every process's
    # /proc/<pid>/environ. KPORT_SEED is for a person running a bench by hand.
    fd_text = os.environ.pop("KPORT_SEED_FD", None)
    text = os.environ.pop("KPORT_SEED", None)
    if fd_text is not None and fd_text.strip():
        fd = int(fd_text)
        chunks = []
        while sum(map(len, chunks)) <= 64:
            chunk = os.read(fd, 64)
            if not chunk:
                break
            chunks.append(chunk)
        if fd > 2:
            os.close(fd)
        text = b"".join(chunks).decode("ascii", "replace")
    if text is None or not text.strip():
        return None
    value = int(text, 0)
    if not 0 <= value < 1 << 64:
        raise ValueError(f"KPORT_SEED={text}: not a 64-bit unsigned integer")
    return value or None  # 0 is "none", as in the C++ helper


_ROUND_SEED = _read_round_seed()


def round_seed() -> int | None:
    """kport's secret seed of this round (KPORT_SEED), or None outside kport."""
    return _ROUND_SEED


_SNAPSHOT: _guard.Snapshot | None = None


def _own_targets() -> list[_guard.Target]:
    this = sys.modules[__name__]
    return (_guard.module_targets(this, "kport_bench", (
                "run", "bench_main", "protect", "_write_check", "_note_changes"))
            + _guard.module_targets(_digest, "kport_bench.digest", (
                "call_digest", "input_digest", "output_digest", "output_problems",
                "sample_indices", "check_record", "value_fields", "sample_fields",
                "_tensors"))
            + [_guard.Target("kport_bench.guard.Snapshot.changed", _guard.Snapshot, "changed")])


def protect() -> _guard.Snapshot:
    """Records the identity of every function the helper relies on (its own,
    torch.cuda.synchronize, NVTX, the events, the tensor methods of the flush
    and the digests). Call it before importing the candidate (bench_main
    does); run() calls it if nobody did. Returns the snapshot."""
    global _SNAPSHOT
    if _SNAPSHOT is None:
        try:
            import torch
        except ImportError:
            # Nothing to bench without torch (run() fails on its own); the
            # helper's own functions are still worth a look.
            return _guard.snapshot(_own_targets())
        _SNAPSHOT = _guard.snapshot(_own_targets() + _guard.torch_targets(torch))
    return _SNAPSHOT


def _as_config(item: Config | tuple[str, Mapping[str, Any]] | str) -> Config:
    if isinstance(item, Config):
        return item
    if isinstance(item, str):
        return Config(item)
    config_id, params = item
    return Config(str(config_id), dict(params))


def select(configs: Iterable[Any], only: Sequence[str] | None = None) -> list[Config]:
    """The configs whose id contains one of `only` (all of them when empty)."""
    chosen = [_as_config(c) for c in configs]
    ids = [c.id for c in chosen]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate config ids: {', '.join(duplicates)}")
    if only:
        chosen = [c for c in chosen if any(part in c.id for part in only)]
    return chosen


def add_arguments(parser: argparse.ArgumentParser, *, iterations: int = 10,
                  warmup: int = 2) -> None:
    """Adds the options every bench shares: --iterations, --warmup, --only."""
    parser.add_argument("--iterations", type=int, default=iterations,
                        help="timed iterations per config (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=warmup,
                        help="untimed calls per config first (default %(default)s)")
    parser.add_argument("--only", action="append", default=[],
                        help="run only configs whose id contains this (repeatable)")


def bench_main(selector: Any, configs: Iterable[Any],
               make_inputs: Callable[[Config, Any], Sequence[Any]],
               entry: str | Callable[[Any], Callable[..., Any]],
               argv: Sequence[str] | None = None, *, name: str | None = None,
               description: str | None = None,
               iterations: int = 10, warmup: int = 2) -> int:
    """The command line every example bench shares:
    ``--impl reference|candidate [--workspace DIR] [--iterations N]
    [--warmup N] [--only ID]...``; runs, under :func:`run`, the function
    `entry` names in the module `selector` loads (an operator's
    ``<op>_select`` module: ``IMPLS`` and ``load(impl, workspace)``), or
    ``entry(module)`` when `entry` is a callable. Summary lines are labelled
    ``<name>[<impl>]`` (`name` defaults to `entry`)."""
    parser = argparse.ArgumentParser(
        description=(description or "kport bench").strip().splitlines()[0])
    parser.add_argument("--impl", choices=selector.IMPLS, required=True)
    parser.add_argument("--workspace", help="the candidate's folder (default "
                        "$KPORT_WORKSPACE, else the current folder)")
    add_arguments(parser, iterations=iterations, warmup=warmup)
    args = parser.parse_args(argv)
    # Before the candidate's module is imported: what it changes shows.
    protect()
    impl = selector.load(args.impl, args.workspace)
    fn = getattr(impl, entry) if isinstance(entry, str) else entry(impl)
    run(select(configs, args.only), make_inputs, fn,
        iterations=args.iterations, warmup=args.warmup,
        label=f"{name or entry}[{args.impl}]")
    return 0


def _write_check(path: str, config: Config, label: str, outputs: list[dict[str, Any]],
                 inputs: list[dict[str, Any]], calls: list[dict[str, Any]],
                 tampered: list[dict[str, Any]]) -> None:
    line = check_record(config.id, label, config.seed, outputs, inputs, calls=calls,
                        round_seed=round_seed(), tampered=tampered)
    # One line per config, appended: each line stands alone, and a bench that
    # runs in several processes adds to one file.
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)


def _note_changes(changed: list[str], seen: set[str], tampered: list[dict[str, Any]],
                  iteration: int) -> None:
    for name in changed:
        if name not in seen:
            seen.add(name)
            tampered.append({"what": "function", "iteration": iteration,
                             "detail": f"{name} was replaced while the bench ran"})


def run(configs: Iterable[Any],
        make_inputs: Callable[[Config, Any], Sequence[Any]],
        fn: Callable[..., Any], *,
        iterations: int = 10,
        warmup: int = 2,
        flush_bytes: int = 256 << 20,
        label: str = "bench",
        out: TextIO | None = None) -> list[ConfigResult]:
    """Runs every config under kport's convention and prints a short summary.

    Per config: `warmup` calls (inputs from a separate generator, inside
    ``kport.warmup:<id>`` ranges, never timed); then `iterations` times: fresh
    inputs ``make_inputs(config, generator)`` (in ``kport.inputs:<id>``) from
    a CUDA generator seeded by the config's seed (the id's, mixed with
    kport's secret round seed KPORT_SEED: reference and candidate of a round
    draw the same sequence, no round draws what an earlier one did), a write
    of a `flush_bytes` buffer (in ``kport.flush:<id>``: evicts L2, each call
    finds its inputs in HBM), ``torch.cuda.synchronize()``, then
    ``range_push("kport:<id>")``, ``fn(*inputs)``, ``synchronize()``,
    ``range_pop()``; the previous call's tensors are held until the next
    call's inputs exist, so consecutive calls never share an address.

    With ``KPORT_CHECK`` set to a path, appends one JSON line per config: a
    cheap digest of every timed call's output (``calls``; of the inputs when
    `fn` returns None: an in-place operator), a full digest of the last one,
    the digests of every call's inputs before and after it, and what the
    helper saw of the harness being changed (``tampered``: an output that is
    not a plain CUDA tensor, a function of the helper's replaced). Digests
    run in ``kport.digest:<id>`` ranges, outside the timed range.
    """
    import torch

    snap = protect()
    sync = snap.original("torch.cuda.synchronize")
    push = snap.original("torch.cuda.nvtx.range_push")
    pop = snap.original("torch.cuda.nvtx.range_pop")
    mark = snap.original("torch.cuda.nvtx.mark")
    zero_ = snap.original("torch.Tensor.zero_")
    record = snap.original("torch.cuda.Event.record")
    digest_call = snap.original("kport_bench.digest.call_digest")
    digest_inputs = snap.original("kport_bench.digest.input_digest")
    problems_of = snap.original("kport_bench.digest.output_problems")
    digest_output = snap.original("kport_bench.digest.output_digest")
    changed = snap.original("kport_bench.guard.Snapshot.changed")
    note = snap.original("kport_bench._note_changes")
    write = snap.original("kport_bench._write_check")
    if iterations < 1 or warmup < 0:
        raise ValueError("iterations must be >= 1 and warmup >= 0")
    if not torch.cuda.is_available():
        raise RuntimeError("kport_bench: no CUDA device visible to torch")
    out = out or sys.stdout
    chosen = select(configs)
    if not chosen:
        raise ValueError("kport_bench: no configs to run")
    device = torch.device("cuda")
    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=device)
    check_path = os.environ.get("KPORT_CHECK")
    # Loads the NVTX injection library (if any) before the first range.
    mark("kport_bench: start")
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    results: list[ConfigResult] = []
    seen: set[str] = set()
    for config in chosen:
        seed = config.seed
        tampered: list[dict[str, Any]] = []
        warm = torch.Generator(device=device)
        warm.manual_seed(seed ^ _WARMUP_SALT)
        for w in range(warmup):
            inputs = make_inputs(config, warm)
            push(WARMUP_PREFIX + config.id)
            fn(*inputs)
            sync()
            pop()
            del inputs
            note(changed(snap), seen, tampered, 0)
        generator = torch.Generator(device=device)
        generator.manual_seed(seed)
        times: list[float] = []
        input_calls: list[dict[str, Any]] = []
        output_calls: list[dict[str, Any]] = []
        output = inputs = None
        for iteration in range(1, iterations + 1):
            # The previous call's tensors stay alive until these exist: the
            # allocator cannot hand this call the addresses of the last one.
            held = (output, inputs)
            push(INPUTS_PREFIX + config.id)
            inputs = make_inputs(config, generator)
            pop()
            del held
            output = None
            before = None
            if check_path:
                push(DIGEST_PREFIX + config.id)
                before = digest_inputs(inputs, seed)
                pop()
            push(FLUSH_PREFIX + config.id)
            zero_(flush)
            pop()
            sync()
            note(changed(snap), seen, tampered, iteration)
            push(RANGE_PREFIX + config.id)
            record(start)
            output = fn(*inputs)
            record(end)
            sync()
            pop()
            note(changed(snap), seen, tampered, iteration)
            times.append(start.elapsed_time(end) * 1e3)
            problems = problems_of(output)
            for p in problems:
                tampered.append({"what": "output", "iteration": iteration, "detail": p})
            if check_path:
                push(DIGEST_PREFIX + config.id)
                produced = inputs if output is None else output
                output_calls.append({"iteration": iteration,
                                     "outputs": [] if problems else digest_call(produced, seed)})
                input_calls.append({"iteration": iteration, "before": before,
                                    "after": digest_inputs(inputs, seed)})
                pop()
        if check_path:
            push(DIGEST_PREFIX + config.id)
            last = inputs if output is None else output
            write(check_path, config, label,
                  [] if problems_of(last) else digest_output(last, seed),
                  input_calls, output_calls, tampered)
            pop()
        output = inputs = None
        result = ConfigResult(config.id, times)
        results.append(result)
        print(f"{label} {config.id:<32} iters={len(times):<3} "
              f"median={result.median_us:10.2f} us  min={result.min_us:10.2f} us",
              file=out, flush=True)
    # The measured part is over: under kport's device lease the next
    # process may have the GPU while this one tears down. Work launched
    # after this waits for the lease again.
    sync()
    mark(LEASE_RELEASE_MARK)
    total = sum(r.median_us for r in results)
    print(f"{label}: {len(results)} configs, {iterations} iterations each, "
          f"sum of medians {total / 1e3:.3f} ms (CUDA events)", file=out, flush=True)
    return results
