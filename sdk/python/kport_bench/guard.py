"""The helper checks itself: identities of the functions it relies on.

A candidate runs in the bench process, beside the helper: it can replace the
L2 flush, ``torch.cuda.synchronize``, the NVTX calls, the digest or a tensor
method the digest uses, and so change what kport measures or checks. Before
the candidate is imported, :func:`snapshot` records the identity of every
such function (the object and its ``__code__``); :meth:`Snapshot.changed`
names those that differ now. The helper calls the originals it captured, so
a replacement cannot change the measurement; the check makes the attempt a
``harness_tampered`` record (messages/bench_check.fbs).

Pure except for :func:`torch_targets` (needs torch), so the logic is tested
with stand-in objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any


def _identity(value: Any) -> tuple[int, int]:
    # The object, and its code when it has one: `f.__code__ = g.__code__`
    # keeps the object and changes what it does.
    code = getattr(value, "__code__", None)
    return id(value), id(code) if code is not None else 0


@dataclasses.dataclass(frozen=True)
class Target:
    """One function the helper relies on: where it lives and its name there."""

    name: str    #: what a finding calls it, e.g. ``torch.cuda.synchronize``
    owner: Any   #: the module, class or object holding it
    attr: str


@dataclasses.dataclass
class Snapshot:
    """The identities of `targets` when the snapshot was taken."""

    targets: list[Target]
    identities: list[tuple[int, int]]
    #: The objects themselves, so that the helper can call the originals
    #: (and ids cannot be reused by a replacement once these are freed).
    originals: dict[str, Any]

    def changed(self) -> list[str]:
        """The names of the targets whose identity differs now (or are gone)."""
        out = []
        for target, before in zip(self.targets, self.identities):
            now = getattr(target.owner, target.attr, None)
            if now is None or _identity(now) != before:
                out.append(target.name)
        return out

    def original(self, name: str) -> Any:
        return self.originals[name]


def snapshot(targets: Iterable[Target]) -> Snapshot:
    """Records the identity of each target (a missing one is an error: the
    helper relies on it)."""
    targets = list(targets)
    originals = {}
    for t in targets:
        value = getattr(t.owner, t.attr, None)
        if value is None:
            raise AttributeError(f"kport_bench: {t.name} does not exist")
        originals[t.name] = value
    return Snapshot(targets, [_identity(originals[t.name]) for t in targets], originals)


def module_targets(module: Any, prefix: str, names: Iterable[str]) -> list[Target]:
    """Targets for functions of one module, named ``<prefix>.<name>``."""
    return [Target(f"{prefix}.{n}", module, n) for n in names]


#: torch.Tensor methods the helper and its digests call.
TENSOR_METHODS = ("zero_", "sum", "double", "abs", "reshape", "detach", "contiguous",
                  "view", "cpu", "tolist", "numel", "is_complex", "data_ptr",
                  "__getitem__", "clone", "untyped_storage")


def torch_targets(torch: Any) -> list[Target]:
    """The torch functions the helper relies on: synchronize, NVTX, the
    events, the generator and the tensor methods of the flush and digests."""
    out = [
        Target("torch.cuda.synchronize", torch.cuda, "synchronize"),
        Target("torch.cuda.nvtx.range_push", torch.cuda.nvtx, "range_push"),
        Target("torch.cuda.nvtx.range_pop", torch.cuda.nvtx, "range_pop"),
        Target("torch.cuda.nvtx.mark", torch.cuda.nvtx, "mark"),
        Target("torch.cuda.Event.record", torch.cuda.Event, "record"),
        Target("torch.Generator.manual_seed", torch.Generator, "manual_seed"),
        Target("torch.isfinite", torch, "isfinite"),
        Target("torch.isnan", torch, "isnan"),
        Target("torch.isinf", torch, "isinf"),
        Target("torch.where", torch, "where"),
        Target("torch.stack", torch, "stack"),
        Target("torch.tensor", torch, "tensor"),
    ]
    out += [Target(f"torch.Tensor.{m}", torch.Tensor, m) for m in TENSOR_METHODS]
    return out
