"""Unit tests of kport_bench's pure parts (no torch, no GPU): seeds, sample
indices, check records, A/A statistics. python3 -m unittest discover -s tests/unit/sdk/python"""

import json
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4] / "sdk" / "python"))

import kport_bench  # noqa: E402
from kport_bench import digest, stats  # noqa: E402


class ConfigSeedTest(unittest.TestCase):
    def test_seed_is_stable_across_processes(self):
        # Pinned: a change would give reference and candidate runs of
        # different kport_bench versions different inputs.
        self.assertEqual(kport_bench.config_seed("n=1"), 8340476693605945404)
        self.assertLess(kport_bench.config_seed("x"), 1 << 63)

    def test_seeds_differ_between_configs(self):
        seeds = {kport_bench.config_seed(f"cfg-{i}") for i in range(1000)}
        self.assertEqual(len(seeds), 1000)

    def test_duplicate_config_ids_are_refused(self):
        with self.assertRaises(ValueError):
            kport_bench.select(["a", "b", "a"])

    def test_select_filters_by_substring(self):
        chosen = kport_bench.select([("add-n1", {}), ("mm-64", {}), "add-n2"], ["add"])
        self.assertEqual([c.id for c in chosen], ["add-n1", "add-n2"])


class SampleIndicesTest(unittest.TestCase):
    def test_same_seed_same_indices(self):
        self.assertEqual(kport_bench.sample_indices(10**6, 5), kport_bench.sample_indices(10**6, 5))

    def test_indices_are_distinct_sorted_in_range_with_ends(self):
        idx = kport_bench.sample_indices(1000, 42)
        self.assertEqual(len(idx), 16)
        self.assertEqual(idx, sorted(set(idx)))
        self.assertEqual((idx[0], idx[-1]), (0, 999))

    def test_small_tensors_are_sampled_whole(self):
        self.assertEqual(kport_bench.sample_indices(5, 1), [0, 1, 2, 3, 4])
        self.assertEqual(kport_bench.sample_indices(0, 1), [])

    def test_indices_are_pinned_and_shared_with_the_cpp_helper(self):
        # The same numbers are pinned in tests/unit/sdk/cpp/check_record_test.cpp:
        # both helpers must sample the same elements of a config's output.
        self.assertEqual(digest.splitmix64(0), (0x9E3779B97F4A7C15, 16294208416658607535))
        self.assertEqual(kport_bench.sample_indices(10**6, 5),
                         [0, 40609, 132284, 148195, 173517, 211323, 358618, 441515, 613063,
                          661671, 754436, 800709, 835880, 876344, 883461, 999999])
        self.assertEqual(kport_bench.sample_indices(1000, kport_bench.config_seed("n=1")),
                         [0, 5, 101, 154, 177, 237, 434, 533, 534, 618, 628, 654, 713, 793,
                          888, 999])


class CheckRecordTest(unittest.TestCase):
    """The KPORT_CHECK line (messages/bench_check.fbs) as kport reads it."""

    def test_record_is_one_strict_json_line_with_every_field(self):
        out = [{"shape": [2], "dtype": "float32", "numel": 2, "sum": digest.json_number(float("nan")),
                "abs_sum": 1.0, "nan": 1, "inf": 0, "sample_index": [0, 1],
                "sample": [digest.json_number(float("-inf")), 0.5]}]
        calls = [{"iteration": 1, "before": [{"checksum": 3}], "after": [{"checksum": 4}]}]
        line = kport_bench.check_record("4096x1024-f32", "softmax[candidate]", 12, out, calls)
        self.assertTrue(line.endswith("\n"))
        self.assertEqual(line.count("\n"), 1)
        record = json.loads(line)
        self.assertEqual(sorted(record), ["bench", "config", "inputs", "outputs", "seed"])
        self.assertEqual(record["outputs"][0]["sum"], "nan")
        self.assertEqual(record["outputs"][0]["sample"][0], "-inf")
        self.assertEqual(record["inputs"][0]["after"][0]["checksum"], 4)

    def test_real_nan_is_refused_rather_than_written_as_invalid_json(self):
        with self.assertRaises(ValueError):
            kport_bench.check_record("c", "b", 1, [{"sum": float("nan")}])

    def test_checksum_words_and_wrapping(self):
        self.assertEqual([digest.checksum_unit(n) for n in (8, 6, 5)], [4, 2, 1])
        self.assertEqual(digest.wrap_int64((1 << 63) + 5), -(1 << 63) + 5)
        self.assertEqual(digest.wrap_int64(-7), -7)


class StatsTest(unittest.TestCase):
    def test_geomean(self):
        self.assertAlmostEqual(stats.geomean([2.0, 0.5]), 1.0)
        self.assertAlmostEqual(stats.geomean([1.0, 4.0]), 2.0)
        with self.assertRaises(ValueError):
            stats.geomean([1.0, 0.0])

    def test_percentile_interpolates_like_numpy(self):
        self.assertAlmostEqual(stats.percentile([1, 2, 3, 4], 50), 2.5)
        self.assertAlmostEqual(stats.percentile(list(range(101)), 95), 95)
        self.assertAlmostEqual(stats.percentile([3.0], 95), 3.0)

    def test_aa_summary_names_the_worst_config(self):
        s = stats.aa_summary([1.0, 0.9, 1.02], ["a", "b", "c"])
        self.assertEqual(s["worst"], "b")
        self.assertAlmostEqual(s["max_abs_dev"], 0.1)
        self.assertEqual(s["n"], 3)


if __name__ == "__main__":
    unittest.main()


class SelectorTest(unittest.TestCase):
    """kport_bench.impl: the side chosen and where its module comes from."""

    def setUp(self):
        import os
        import tempfile

        from kport_bench import impl
        self.impl = impl
        self.saved = {k: os.environ.pop(k, None) for k in ("KPORT_IMPL", "KPORT_SIDE", "KPORT_WORKSPACE")}
        self.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(self.tmp.name)
        (root / "ref").mkdir()
        (root / "ws").mkdir()
        (root / "ref" / "op_ref_mod.py").write_text("SIDE = 'reference'\n")
        (root / "ws" / "op_cand_mod.py").write_text("SIDE = 'candidate'\n")
        self.root = root
        self.selector = impl.Selector(root / "ref", "op_ref_mod", "op_cand_mod")

    def tearDown(self):
        import os
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for name in ("op_ref_mod", "op_cand_mod"):
            sys.modules.pop(name, None)
        self.tmp.cleanup()

    def test_reference_by_default_and_candidate_by_kport_side(self):
        import os
        self.assertEqual(self.impl.selected_impl(), "reference")
        os.environ["KPORT_SIDE"] = "candidate"
        self.assertEqual(self.impl.selected_impl(), "candidate")
        os.environ["KPORT_IMPL"] = "reference"  # the user's choice wins
        self.assertEqual(self.impl.selected_impl(), "reference")

    def test_unknown_side_is_refused(self):
        with self.assertRaises(ValueError):
            self.impl.selected_impl("both")

    def test_candidate_comes_from_the_workspace(self):
        import os
        os.environ["KPORT_WORKSPACE"] = str(self.root / "ws")
        self.assertEqual(self.selector.load("candidate").SIDE, "candidate")
        self.assertEqual(self.selector.load("reference").SIDE, "reference")

    def test_missing_candidate_names_the_file(self):
        with self.assertRaises(FileNotFoundError) as caught:
            self.selector.load("candidate", str(self.root / "empty"))
        self.assertIn("op_cand_mod.py", str(caught.exception))

    def test_module_of_the_same_name_elsewhere_is_refused(self):
        other = self.root / "other"
        other.mkdir()
        (other / "op_cand_mod.py").write_text("SIDE = 'impostor'\n")
        self.impl.import_from(other, "op_cand_mod")
        with self.assertRaises(ImportError):
            self.selector.load("candidate", str(self.root / "ws"))


class BenchMainTest(unittest.TestCase):
    """kport_bench.bench_main: the shared command line of the example benches."""

    def test_loads_the_asked_side_and_runs_its_entry(self):
        import types

        calls = {}

        def fake_run(configs, make_inputs, fn, **kw):
            calls.update(configs=[c.id for c in configs], fn=fn, **kw)

        def entry(*args):
            return args

        selector = types.SimpleNamespace(
            IMPLS=("reference", "candidate"),
            load=lambda impl, ws: types.SimpleNamespace(op=entry, impl=impl, ws=ws))
        saved = kport_bench.run
        kport_bench.run = fake_run
        try:
            rc = kport_bench.bench_main(
                selector, ["a-1", "b-2"], None, "op",
                ["--impl", "candidate", "--only", "b", "--iterations", "3"],
                description="Bench of op.\nmore")
        finally:
            kport_bench.run = saved
        self.assertEqual(rc, 0)
        self.assertEqual(calls["configs"], ["b-2"])
        self.assertIs(calls["fn"], entry)
        self.assertEqual(calls["iterations"], 3)
        self.assertEqual(calls["label"], "op[candidate]")

    def test_a_callable_entry_wraps_the_loaded_module(self):
        import types

        calls = {}

        def fake_run(configs, make_inputs, fn, **kw):
            calls.update(fn=fn, **kw)

        module = types.SimpleNamespace(op=lambda x: x + 1)
        selector = types.SimpleNamespace(IMPLS=("reference", "candidate"),
                                         load=lambda impl, ws: module)
        saved = kport_bench.run
        kport_bench.run = fake_run
        try:
            kport_bench.bench_main(selector, ["a"], None,
                                   lambda m: (lambda x: m.op(x) * 10), ["--impl", "reference"],
                                   name="wrapped")
        finally:
            kport_bench.run = saved
        self.assertEqual(calls["fn"](1), 20)
        self.assertEqual(calls["label"], "wrapped[reference]")

    def test_an_unknown_side_is_a_usage_error(self):
        import contextlib
        import io
        import types

        selector = types.SimpleNamespace(IMPLS=("reference", "candidate"), load=None)
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            kport_bench.bench_main(selector, [], None, "op", ["--impl", "both"])
