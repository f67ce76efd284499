"""kport_bench.run on a CUDA device: the times it returns, and the output
digest and every input digest it writes to KPORT_CHECK, are those of an
eager computation of the same inputs drawn again from the config's seed.

Exit status 77 (ctest: Skipped) without torch or a CUDA device.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "sdk" / "python"))

try:
    import torch
except ImportError:  # pragma: no cover - the CPU CI has no torch
    torch = None

import kport_bench  # noqa: E402

ITERATIONS = 6
CONFIGS = [("n1000", {"n": 1000}), ("n4097", {"n": 4097}), ("n65536", {"n": 65536})]


def make_inputs(config, generator):
    x = torch.randn((config["n"],), generator=generator, device="cuda")
    return (x, torch.randint(0, 100, (7,), generator=generator, device="cuda",
                             dtype=torch.int32))


def out_of_place(x, idx):
    return x * 2.0 + idx.sum()


def in_place(x, idx):
    x.mul_(3.0)


def replay(config):
    """The inputs run() drew for `config`, drawn again the same way."""
    generator = torch.Generator(device="cuda")
    generator.manual_seed(config.seed)
    return [make_inputs(config, generator) for _ in range(ITERATIONS)]


class RunTest(unittest.TestCase):
    def bench(self, fn):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "check.jsonl")
            os.environ["KPORT_CHECK"] = path
            try:
                with open(os.devnull, "w") as sink:
                    results = kport_bench.run(CONFIGS, make_inputs, fn, iterations=ITERATIONS,
                                              warmup=1, label="t", out=sink)
            finally:
                del os.environ["KPORT_CHECK"]
            with open(path, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f]
        return results, {line["config"]: line for line in lines}

    def test_digests_match_an_eager_computation(self):
        results, lines = self.bench(out_of_place)
        self.assertEqual([r.config for r in results], [c for c, _ in CONFIGS])
        for result in results:
            self.assertEqual(len(result.times_us), ITERATIONS)
            self.assertTrue(all(t > 0 for t in result.times_us))
        for config in kport_bench.select(CONFIGS):
            line = lines[config.id]
            drawn = replay(config)
            self.assertEqual([c["iteration"] for c in line["inputs"]],
                             list(range(1, ITERATIONS + 1)))
            for call, inputs in zip(line["inputs"], drawn):
                eager = kport_bench.input_digest(inputs, config.seed)
                self.assertEqual(call["before"], eager)
                self.assertEqual(call["after"], eager)
            self.assertEqual(line["outputs"],
                             kport_bench.output_digest(out_of_place(*drawn[-1]), config.seed))

    def test_every_call_is_digested_as_an_eager_computation(self):
        _, lines = self.bench(out_of_place)
        for config in kport_bench.select(CONFIGS):
            line = lines[config.id]
            drawn = replay(config)
            self.assertEqual([c["iteration"] for c in line["calls"]],
                             list(range(1, ITERATIONS + 1)))
            for call, inputs in zip(line["calls"], drawn):
                eager = kport_bench.call_digest(out_of_place(*inputs), config.seed)
                self.assertEqual(call["outputs"], eager)
            self.assertNotIn("tampered", line)

    def test_a_tensor_subclass_output_is_recorded_as_tampering(self):
        class Lazy(torch.Tensor):
            pass

        _, lines = self.bench(lambda x, idx: out_of_place(x, idx).as_subclass(Lazy))
        for line in lines.values():
            self.assertEqual({t["what"] for t in line["tampered"]}, {"output"})
            self.assertEqual(line["calls"][0]["outputs"], [])

    def test_a_replaced_synchronize_is_recorded_as_tampering(self):
        original = torch.cuda.synchronize
        kport_bench.protect()

        def patching(x, idx):
            torch.cuda.synchronize = lambda device=None: None
            return out_of_place(x, idx)

        try:
            _, lines = self.bench(patching)
        finally:
            torch.cuda.synchronize = original
        first = lines[CONFIGS[0][0]]
        self.assertIn("torch.cuda.synchronize", first["tampered"][0]["detail"])

    def test_an_in_place_call_shows_in_every_after_digest(self):
        _, lines = self.bench(in_place)
        for config in kport_bench.select(CONFIGS):
            drawn = replay(config)
            for call, inputs in zip(lines[config.id]["inputs"], drawn):
                self.assertEqual(call["before"], kport_bench.input_digest(inputs, config.seed))
                in_place(*inputs)
                self.assertEqual(call["after"], kport_bench.input_digest(inputs, config.seed))
                self.assertNotEqual(call["before"][0]["checksum"], call["after"][0]["checksum"])


if __name__ == "__main__":
    if torch is None or not torch.cuda.is_available():
        print("kport_bench_run_test: no torch with a CUDA device: skipped")
        sys.exit(77)
    unittest.main()
