"""Digests of a bench's outputs and inputs, for kport's integrity rules (KPORT_CHECK).

A digest is small enough to write per config on every run, and enough to see
that the candidate computed the reference's function on the same inputs
(rule ``bench_output_mismatch``): shape, dtype, sums in float64, counts of
NaN and Inf, and a sample of elements at indices drawn from the config's
seed (the same indices on both sides, and in the C++ helper
sdk/cpp/kport/bench.hpp). An input digest (rule ``mutates_inputs``) runs
before and after every timed call, so it is cheaper: a checksum of the
tensor's bytes and the same sample, no float64 copy.

The line format is messages/bench_check.fbs; kport reads every line strictly
against it. The pure parts (indices, numbers, records) need no torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Elements sampled per tensor.
SAMPLE_SIZE = 16
#: Elements a per-call digest sums at most: every call's output is digested
#: (sampled, on the device), so its cost must not grow with the tensor.
CALL_SUM_ELEMENTS = 1 << 16

_MASK64 = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """One step of splitmix64: (next state, output). The same in C++."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return state, z ^ (z >> 31)


def sample_indices(numel: int, seed: int, count: int = SAMPLE_SIZE) -> list[int]:
    """`count` flat indices in [0, numel), sorted, from `seed` alone.

    The first and last element are always in: writes that miss a tail or a
    head show there first. splitmix64 rather than `random`, so that the C++
    helper picks the very same elements (a C++ bench and a Python bench of
    one config are then comparable).
    """
    if numel <= 0:
        return []
    if numel <= count:
        return list(range(numel))
    picked = {0, numel - 1}
    state = seed & _MASK64
    while len(picked) < count:
        state, z = splitmix64(state)
        picked.add(z % numel)
    return sorted(picked)


def json_number(value: float) -> float | str:
    """Floats as strict JSON allows them: NaN and infinities become strings."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def wrap_int64(value: int) -> int:
    """A sum as int64 two's complement keeps it (torch's int64 sum wraps so)."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def checksum_unit(nbytes: int) -> int:
    """Bytes per word of the checksum: 4 when the size allows, else 2, else 1."""
    if nbytes % 4 == 0:
        return 4
    return 2 if nbytes % 2 == 0 else 1


def check_record(config: str, bench: str, seed: int, outputs: Sequence[Mapping[str, Any]],
                 inputs: Sequence[Mapping[str, Any]] = (), *,
                 calls: Sequence[Mapping[str, Any]] | None = None,
                 round_seed: int | None = None,
                 tampered: Sequence[Mapping[str, Any]] = ()) -> str:
    """One line of a KPORT_CHECK file (messages/bench_check.fbs), newline included.

    `calls`: every timed call's output digests (``{"iteration", "outputs"}``);
    `round_seed`: the KPORT_SEED mixed into `seed`; `tampered`: what the
    helper saw of a candidate changing the harness (``{"what", "detail",
    "iteration"}``)."""
    record: dict[str, Any] = {"config": config, "bench": bench, "seed": seed,
                              "outputs": list(outputs), "inputs": list(inputs)}
    if calls is not None:
        record["calls"] = list(calls)
    if round_seed is not None:
        record["round_seed"] = round_seed
    if tampered:
        record["tampered"] = list(tampered)
    return json.dumps(record, sort_keys=True, allow_nan=False) + "\n"


def mix_seed(config_seed: int, round_seed: int | None) -> int:
    """A config's seed for one round: its id's seed mixed with kport's secret
    round seed (KPORT_SEED) through splitmix64; the id's alone without one.
    The same in C++ (check_record.hpp)."""
    if round_seed is None:
        return config_seed
    _, z = splitmix64((config_seed ^ round_seed) & _MASK64)
    return z & ((1 << 63) - 1)


def call_stride(numel: int) -> int:
    """Every how many elements a per-call digest sums (1: all of them)."""
    return max(1, -(-numel // CALL_SUM_ELEMENTS))


def output_problems(value: Any) -> list[str]:
    """Why `value` is not a plain output kport can digest: a tensor that is
    not exactly ``torch.Tensor`` (a subclass may compute when read, after the
    timed window), not on a CUDA device, without storage, or an object that
    is neither a tensor, a number, None nor a list/tuple/dict of them."""
    import torch

    problems: list[str] = []

    def visit(v: Any, where: str) -> None:
        if v is None or type(v) in (int, float, bool):
            return
        if isinstance(v, (list, tuple)) and type(v) not in (list, tuple) and \
                not type(v).__module__.startswith("torch.return_types"):
            problems.append(f"{where} is a {type(v).__qualname__}, a container subclass")
            return
        if isinstance(v, (list, tuple)):
            for i, item in enumerate(tuple.__iter__(tuple(v))):
                visit(item, f"{where}[{i}]")
            return
        if type(v) is dict:
            for key in sorted(v):
                visit(v[key], f"{where}[{key!r}]")
            return
        if type(v) is torch.Tensor:
            if v.device.type != "cuda":
                problems.append(f"{where} is on {v.device}, not on the CUDA device")
            elif v.numel() and v.data_ptr() == 0:
                problems.append(f"{where} has no storage")
            return
        problems.append(f"{where} is a {type(v).__module__}.{type(v).__qualname__}, not a plain "
                        "torch.Tensor (a subclass or a lazy object can compute when read, "
                        "after the timed window)")

    visit(value, "the output")
    return problems


def value_fields(index: Sequence[int], sample: Sequence[float], total: float,
                 abs_total: float, nan: int, inf: int) -> dict[str, Any]:
    """The value part of an output digest, from numbers already on the host."""
    return {"sum": json_number(total), "abs_sum": json_number(abs_total),
            "nan": nan, "inf": inf, **sample_fields(index, sample)}


def sample_fields(index: Sequence[int], sample: Sequence[float]) -> dict[str, Any]:
    """The sampled elements of a digest: where, and the values there."""
    return {"sample_index": list(index), "sample": [json_number(v) for v in sample]}


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for key in sorted(value) for t in _tensors(value[key])]
    return []


def _header(tensor: Any) -> dict[str, Any]:
    return {"shape": list(tensor.shape),
            "dtype": str(tensor.dtype).removeprefix("torch."),
            "numel": tensor.numel()}


def output_digest(output: Any, seed: int) -> list[dict[str, Any]]:
    """One digest per tensor in `output` (a tensor, or nested lists/tuples/dicts)."""
    import torch

    digests = []
    for tensor in _tensors(output):
        flat = tensor.detach().reshape(-1)
        digest = _header(tensor)
        if flat.numel() and not flat.is_complex():
            values = flat.double()
            finite = torch.isfinite(values)
            index = sample_indices(flat.numel(), seed)
            sample = values[torch.tensor(index, device=values.device)].cpu().tolist()
            digest.update(value_fields(
                index, sample,
                float(torch.where(finite, values, 0.0).sum()),
                float(torch.where(finite, values.abs(), 0.0).sum()),
                int(torch.isnan(values).sum()), int(torch.isinf(values).sum())))
        digests.append(digest)
    return digests


def call_digest(output: Any, seed: int) -> list[dict[str, Any]]:
    """A cheap digest of one call's output, taken after every timed call: the
    seeded sample, and sums and NaN/Inf counts over every call_stride-th
    element from an offset drawn from the seed; one copy to the host."""
    import torch

    digests = []
    for tensor in _tensors(output):
        flat = tensor.detach().reshape(-1)
        digest = _header(tensor)
        numel = flat.numel()
        if numel and not flat.is_complex():
            stride = call_stride(numel)
            offset = seed % stride
            part = flat[offset::stride].double()
            finite = torch.isfinite(part)
            index = sample_indices(numel, seed)
            picked = flat[torch.tensor(index, device=flat.device)].double()
            zero = torch.zeros((), dtype=torch.float64, device=part.device)
            head = torch.stack([torch.where(finite, part, zero).sum(),
                                torch.where(finite, part.abs(), zero).sum(),
                                torch.isnan(part).sum().double(),
                                torch.isinf(part).sum().double()])
            host = torch.cat([head, picked]).cpu().tolist()
            digest.update(value_fields(index, host[4:], host[0], host[1],
                                       int(host[2]), int(host[3])))
            digest["stride"] = stride
            digest["offset"] = offset
        digests.append(digest)
    return digests


def input_digest(inputs: Any, seed: int) -> list[dict[str, Any]]:
    """One cheap digest per tensor in `inputs`: a checksum of its bytes and a sample.

    The checksum is the int64 sum of the bytes read as int32 words (int16 or
    bytes when the size is not a multiple of 4): one read of the tensor, no
    float64 copy, so it can run before and after every timed call. It sees
    any change that is not a permutation of words; the sample (exact values)
    sees some of those too.
    """
    import torch

    digests = []
    for tensor in _tensors(inputs):
        flat = tensor.detach().reshape(-1)
        digest = _header(tensor)
        raw = flat.contiguous().view(torch.uint8)
        unit = checksum_unit(raw.numel())
        words = raw.view({4: torch.int32, 2: torch.int16, 1: torch.uint8}[unit])
        digest["checksum"] = wrap_int64(int(words.sum(dtype=torch.int64))) if raw.numel() else 0
        if flat.numel() and not flat.is_complex():
            index = sample_indices(flat.numel(), seed)
            picked = flat[torch.tensor(index, device=flat.device)]
            digest.update(sample_fields(index, picked.double().cpu().tolist()))
        digests.append(digest)
    return digests
