"""kport_bench.run's own logic on a stand-in torch (the build machines have
none): per-call output digests, secret round seeds, plain-output checks, the
helper's self-check, the NVTX ranges around each step, fresh addresses.
The digests' arithmetic on real tensors is tests/gpu/kport_bench_run_test.py.

python3 -m unittest discover -s tests/unit/sdk/python"""

import json
import os
import pathlib
import sys
import tempfile
import types
import unittest

SDK = pathlib.Path(__file__).resolve().parents[4] / "sdk" / "python"
sys.path.insert(0, str(SDK))


class FakeTensor:
    """A plain 'device tensor': an address and a value. Like a caching
    allocator, a new tensor takes the address of one freed before."""

    next_address = 0x1000
    free: list = []

    def __init__(self, value=0.0):
        if FakeTensor.free:
            self.address = FakeTensor.free.pop()
        else:
            FakeTensor.next_address += 256
            self.address = FakeTensor.next_address
        self.value = value
        self.device = types.SimpleNamespace(type="cuda")

    def __del__(self):
        FakeTensor.free.append(self.address)

    def numel(self):
        return 1

    def data_ptr(self):
        return self.address


for _m in ("zero_", "sum", "double", "abs", "reshape", "detach", "contiguous", "view", "cpu",
           "tolist", "is_complex", "clone", "untyped_storage"):
    setattr(FakeTensor, _m, lambda self, *a, **k: self)
FakeTensor.__getitem__ = lambda self, i: self


class LazyTensor(FakeTensor):
    """What a lazy_output cheat returns: a subclass that computes when read."""


def fake_torch(log):
    torch = types.ModuleType("torch")
    torch.Tensor = FakeTensor
    torch.int32 = "int32"
    torch.device = lambda name: name
    torch.empty = lambda *a, **k: FakeTensor()

    class Generator:
        def __init__(self, device=None):
            self.seed = None

        def manual_seed(self, seed):
            self.seed = seed
            log.append(("seed", seed))

    class Event:
        def __init__(self, enable_timing=False):
            pass

        def record(self):
            pass

        def elapsed_time(self, other):
            return 0.001

    torch.Generator = Generator
    nvtx = types.SimpleNamespace(range_push=lambda n: log.append(("push", n)),
                                 range_pop=lambda: log.append(("pop",)),
                                 mark=lambda n: log.append(("mark", n)))
    torch.cuda = types.SimpleNamespace(synchronize=lambda: log.append(("sync",)),
                                       is_available=lambda: True, nvtx=nvtx, Event=Event)
    for name in ("isfinite", "isnan", "isinf", "where", "stack", "tensor"):
        setattr(torch, name, lambda *a, **k: None)
    return torch


class FakeRun(unittest.TestCase):
    def setUp(self):
        self.log = []
        self.torch = fake_torch(self.log)
        self.saved_torch = sys.modules.get("torch")
        sys.modules["torch"] = self.torch
        self.tmp = tempfile.TemporaryDirectory()
        self.check = os.path.join(self.tmp.name, "check.jsonl")
        os.environ["KPORT_CHECK"] = self.check
        os.environ["KPORT_SEED"] = "12345"
        for name in [m for m in sys.modules if m.startswith("kport_bench")]:
            del sys.modules[name]
        import kport_bench

        self.kb = kport_bench
        # Digests over the stand-in: the tensor's value and address.
        d = self.kb.digest
        d.call_digest = lambda out, seed: [{"sample": [t.value], "address": t.address}
                                           for t in d._tensors(out)]
        d.input_digest = lambda inputs, seed: [{"checksum": t.address} for t in d._tensors(inputs)]
        d.output_digest = lambda out, seed: [{"sample": [t.value]} for t in d._tensors(out)]
        d._tensors = lambda v: [v] if isinstance(v, FakeTensor) else \
            [t for x in v for t in d._tensors(x)] if isinstance(v, (list, tuple)) else []

    def tearDown(self):
        os.environ.pop("KPORT_CHECK", None)
        os.environ.pop("KPORT_SEED", None)
        if self.saved_torch is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved_torch
        self.tmp.cleanup()

    def run_bench(self, fn, iterations=3):
        with open(os.devnull, "w") as sink:
            self.kb.run(["cfg"], lambda config, g: (FakeTensor(1.0),), fn,
                        iterations=iterations, warmup=1, label="t", out=sink)
        with open(self.check) as f:
            return [json.loads(line) for line in f]

    def test_every_timed_call_output_is_digested_not_only_the_last(self):
        values = iter([9.0, 1.0, 2.0, 3.0])  # the warm-up call first
        [line] = self.run_bench(lambda x: FakeTensor(next(values)))
        self.assertEqual([c["iteration"] for c in line["calls"]], [1, 2, 3])
        self.assertEqual([c["outputs"][0]["sample"] for c in line["calls"]],
                         [[1.0], [2.0], [3.0]])
        self.assertEqual(line["outputs"], [{"sample": [3.0]}])
        self.assertNotIn("tampered", line)

    def test_round_seed_is_mixed_into_the_config_seed_and_recorded(self):
        [line] = self.run_bench(lambda x: FakeTensor())
        base = self.kb.config_seed("cfg")
        self.assertEqual(line["round_seed"], 12345)
        self.assertEqual(line["seed"], self.kb.mix_seed(base, 12345))
        self.assertNotEqual(line["seed"], base)
        self.assertIn(("seed", line["seed"]), self.log)
        # Taken out of the environment before any candidate is imported.
        self.assertNotIn("KPORT_SEED", os.environ)

    def test_round_seed_comes_from_the_descriptor_kport_names(self):
        # As kport hands it over: on a pipe it closed after writing, named
        # by KPORT_SEED_FD; read once at import, then gone for everyone.
        read_end, write_end = os.pipe()
        os.write(write_end, b"777\n")
        os.close(write_end)
        os.environ["KPORT_SEED_FD"] = str(read_end)
        os.environ.pop("KPORT_SEED", None)
        for name in [m for m in sys.modules if m.startswith("kport_bench")]:
            del sys.modules[name]
        import kport_bench

        self.assertEqual(kport_bench.round_seed(), 777)
        self.assertNotIn("KPORT_SEED_FD", os.environ)
        with self.assertRaises(OSError):
            os.fstat(read_end)  # closed: nothing left to read

    def test_consecutive_calls_never_share_an_input_address(self):
        [line] = self.run_bench(lambda x: FakeTensor(), iterations=4)
        addresses = [c["before"][0]["checksum"] for c in line["inputs"]]
        for earlier, later in zip(addresses, addresses[1:]):
            self.assertNotEqual(earlier, later)

    def test_a_tensor_subclass_output_is_harness_tampered(self):
        [line] = self.run_bench(lambda x: LazyTensor())
        self.assertEqual({t["what"] for t in line["tampered"]}, {"output"})
        self.assertIn("LazyTensor", line["tampered"][0]["detail"])
        self.assertEqual(line["calls"][0]["outputs"], [])

    def test_an_object_that_is_no_tensor_is_harness_tampered(self):
        [line] = self.run_bench(lambda x: object())
        self.assertIn("not a plain torch.Tensor", line["tampered"][0]["detail"])

    def test_a_replaced_synchronize_is_named_and_the_original_still_runs(self):
        def patching(x):
            self.torch.cuda.synchronize = lambda: None
            return FakeTensor()

        [line] = self.run_bench(patching)
        names = [t["detail"] for t in line["tampered"]]
        self.assertEqual(names, ["torch.cuda.synchronize was replaced while the bench ran"])
        self.assertEqual(line["tampered"][0]["iteration"], 0)  # in the warm-up call
        self.assertGreater(self.log.count(("sync",)), 4)

    def test_a_replaced_tensor_method_or_helper_function_is_named(self):
        def patching(x):
            FakeTensor.zero_ = lambda self: self
            self.kb.digest.call_digest = lambda out, seed: []
            return FakeTensor()

        [line] = self.run_bench(patching)
        details = " ".join(t["detail"] for t in line["tampered"])
        self.assertIn("torch.Tensor.zero_", details)
        self.assertIn("kport_bench.digest.call_digest", details)

    def test_a_code_swap_keeps_the_object_yet_is_seen(self):
        def patching(x):
            self.kb.digest.output_problems.__code__ = (lambda value: []).__code__
            return FakeTensor()

        [line] = self.run_bench(patching)
        self.assertIn("kport_bench.digest.output_problems", line["tampered"][0]["detail"])

    def test_each_step_sits_in_its_own_range_and_the_call_alone_in_the_timed_one(self):
        self.run_bench(lambda x: FakeTensor(), iterations=1)
        pushes = [e[1] for e in self.log if e[0] == "push"]
        self.assertEqual(pushes, ["kport.warmup:cfg", "kport.inputs:cfg", "kport.digest:cfg",
                                  "kport.flush:cfg", "kport:cfg", "kport.digest:cfg",
                                  "kport.digest:cfg"])
        timed = self.log.index(("push", "kport:cfg"))
        self.assertEqual(self.log[timed + 1:timed + 3], [("sync",), ("pop",)])


class GuardTest(unittest.TestCase):
    def test_snapshot_names_what_changed(self):
        from kport_bench import guard

        owner = types.SimpleNamespace(f=lambda: 1, g=lambda: 2)
        snap = guard.snapshot(guard.module_targets(owner, "m", ("f", "g")))
        self.assertEqual(snap.changed(), [])
        owner.g = lambda: 3
        self.assertEqual(snap.changed(), ["m.g"])
        del owner.f
        self.assertEqual(snap.changed(), ["m.f", "m.g"])

    def test_a_missing_target_is_refused_at_snapshot(self):
        from kport_bench import guard

        with self.assertRaises(AttributeError):
            guard.snapshot([guard.Target("m.nope", types.SimpleNamespace(), "nope")])


class SeedTest(unittest.TestCase):
    def test_mix_seed_is_pinned_and_shared_with_the_cpp_helper(self):
        from kport_bench import digest

        # tests/unit/sdk/cpp/check_record_test.cpp pins the same numbers.
        self.assertEqual(digest.mix_seed(5, None), 5)
        self.assertEqual(digest.mix_seed(5, 7), 1682153688901572302)
        self.assertLess(digest.mix_seed(2**63 - 1, 2**64 - 1), 2**63)

    def test_call_stride_bounds_the_elements_summed(self):
        from kport_bench import digest

        self.assertEqual(digest.call_stride(1), 1)
        self.assertEqual(digest.call_stride(1 << 16), 1)
        self.assertEqual(digest.call_stride((1 << 16) + 1), 2)
        self.assertEqual(digest.call_stride(1 << 30), 1 << 14)


if __name__ == "__main__":
    unittest.main()


class NvtxNamesTest(unittest.TestCase):
    def test_python_names_are_those_of_nvtx_convention_hpp(self):
        header = (SDK.parents[1] / "include" / "kport" / "nvtx_convention.hpp").read_text()
        import re

        names = dict(re.findall(r'std::string_view (\w+) = "([^"]*)"', header))
        import kport_bench
        from kport_bench import pytest_plugin_names

        self.assertEqual(names["timed_prefix"], kport_bench.RANGE_PREFIX)
        self.assertEqual(names["warmup_prefix"], kport_bench.WARMUP_PREFIX)
        self.assertEqual(names["inputs_prefix"], kport_bench.INPUTS_PREFIX)
        self.assertEqual(names["flush_prefix"], kport_bench.FLUSH_PREFIX)
        self.assertEqual(names["digest_prefix"], kport_bench.DIGEST_PREFIX)
        self.assertEqual(names["test_prefix"], kport_bench.TEST_PREFIX)
        self.assertEqual(names["test_prefix"], pytest_plugin_names.TEST_PREFIX)
        self.assertEqual(names["lease_release_mark"], kport_bench.LEASE_RELEASE_MARK)
