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

from .digest import check_record, input_digest, output_digest, sample_indices

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
        return config_seed(self.id)

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
    impl = selector.load(args.impl, args.workspace)
    fn = getattr(impl, entry) if isinstance(entry, str) else entry(impl)
    run(select(configs, args.only), make_inputs, fn,
        iterations=args.iterations, warmup=args.warmup,
        label=f"{name or entry}[{args.impl}]")
    return 0


def _write_check(path: str, config: Config, label: str, output: Any,
                 calls: list[dict[str, Any]]) -> None:
    line = check_record(config.id, label, config.seed,
                        output_digest(output, config.seed), calls)
    # One line per config, appended: each line stands alone, and a bench that
    # runs in several processes adds to one file.
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)


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
    inputs ``make_inputs(config, generator)`` from a CUDA generator seeded by
    the config id (reference and candidate draw the same sequence), a write of
    a `flush_bytes` buffer (evicts L2: each call finds its inputs in HBM),
    ``torch.cuda.synchronize()``, then ``range_push("kport:<id>")``,
    ``fn(*inputs)``, ``synchronize()``, ``range_pop()``.

    With ``KPORT_CHECK`` set to a path, appends one JSON line per config with a
    digest of the last iteration's output (or of the inputs, when `fn` returns
    None: an in-place operator), and of every timed call's inputs before and
    after it; both input digests are taken outside the timed range (before
    the L2 flush, after ``range_pop``).
    """
    import torch

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
    nvtx = torch.cuda.nvtx
    # Loads the NVTX injection library (if any) before the first range.
    nvtx.mark("kport_bench: start")
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    results: list[ConfigResult] = []
    for config in chosen:
        warm = torch.Generator(device=device)
        warm.manual_seed(config.seed ^ _WARMUP_SALT)
        for _ in range(warmup):
            inputs = make_inputs(config, warm)
            nvtx.range_push(WARMUP_PREFIX + config.id)
            fn(*inputs)
            torch.cuda.synchronize()
            nvtx.range_pop()
            del inputs
        generator = torch.Generator(device=device)
        generator.manual_seed(config.seed)
        times: list[float] = []
        calls: list[dict[str, Any]] = []
        output = inputs = None
        for iteration in range(1, iterations + 1):
            # Drop the last iteration's tensors first: large configs would
            # otherwise hold two sets at once.
            output = inputs = None
            inputs = make_inputs(config, generator)
            before = input_digest(inputs, config.seed) if check_path else None
            flush.zero_()
            torch.cuda.synchronize()
            nvtx.range_push(RANGE_PREFIX + config.id)
            start.record()
            output = fn(*inputs)
            end.record()
            torch.cuda.synchronize()
            nvtx.range_pop()
            times.append(start.elapsed_time(end) * 1e3)
            if check_path:
                calls.append({"iteration": iteration, "before": before,
                              "after": input_digest(inputs, config.seed)})
        if check_path:
            _write_check(check_path, config, label,
                         inputs if output is None else output, calls)
        output = inputs = None
        result = ConfigResult(config.id, times)
        results.append(result)
        print(f"{label} {config.id:<32} iters={len(times):<3} "
              f"median={result.median_us:10.2f} us  min={result.min_us:10.2f} us",
              file=out, flush=True)
    # The measured part is over: under kport's device lease the next
    # process may have the GPU while this one tears down. Work launched
    # after this waits for the lease again.
    torch.cuda.synchronize()
    nvtx.mark(LEASE_RELEASE_MARK)
    total = sum(r.median_us for r in results)
    print(f"{label}: {len(results)} configs, {iterations} iterations each, "
          f"sum of medians {total / 1e3:.3f} ms (CUDA events)", file=out, flush=True)
    return results
