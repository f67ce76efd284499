"""Unit tests of examples/gpu/tools (summary.py, merge_expected.py) on small
fake runs dirs: no GPU, no torch, no matplotlib needed.
python3 -m unittest discover -s tests/unit/examples"""

import json
import pathlib
import sys
import tempfile
import tomllib
import unittest

TOOLS = pathlib.Path(__file__).resolve().parents[3] / "examples" / "gpu" / "tools"
sys.path.insert(0, str(TOOLS))

import merge_expected  # noqa: E402
import summary  # noqa: E402


def _config(name, t_ref, t_cand):
    return {"config": name, "t_ref_ns": t_ref, "t_cand_ns": t_cand, "ratio": t_ref / t_cand}


class FakeRuns:
    """A runs dir as `kport run` leaves it: one finished job, one stopped."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        done = root / "rope-0002"
        for name in ("01-analyze-1", "06-performance-1", "12-performance-2"):
            (done / name).mkdir(parents=True)
        (done / "spec.toml").write_text('operator = "rope"\n')
        slow = {"configs": [_config("a", 100.0, 400.0)], "geomean": 0.25, "floor": 0.95}
        fast = {"configs": [_config("a", 100.0, 90.0), _config("b", 200.0, 250.0)],
                "geomean": 0.99, "floor": 0.95}
        (done / "06-performance-1" / "report.json").write_text(json.dumps({"perf": slow}))
        (done / "12-performance-2" / "report.json").write_text(json.dumps({"perf": fast}))
        (done / "verdict.json").write_text(json.dumps({
            "job": "rope-0002", "operator": "rope", "state": "ACCEPTED",
            "reason": "performance DONE: geomean 0.990",
            "attempts": [{"stage": "translate", "attempts": 2},
                         {"stage": "analyze", "attempts": 1},
                         {"stage": "diagnose_perf", "attempts": 1}],
            "tests": {"executed": 80}, "perf": fast}))
        stopped = root / "rms_norm-0001"
        for name in ("01-analyze-1", "02-translate-1", "05-correctness-1", "07-translate-2"):
            (stopped / name).mkdir(parents=True)
        (stopped / "spec.toml").write_text('operator = "rms_norm"\n')
        (root / "schemas").mkdir()
        (root / "journal.sqlite").write_text("")


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        FakeRuns(self.root / "runs")

    def tearDown(self):
        self.tmp.cleanup()

    def jobs(self):
        return {j.job: j for j in summary.read_runs(self.root / "runs")}

    def test_finished_job_takes_the_last_performance_report(self):
        job = self.jobs()["rope-0002"]
        self.assertEqual(job.state, "ACCEPTED")
        self.assertEqual([c.config for c in job.configs], ["a", "b"])
        self.assertAlmostEqual(job.geomean, 0.99)
        low, high = job.ratio_range
        self.assertAlmostEqual(low, 0.8)
        self.assertAlmostEqual(high, 100.0 / 90.0)
        self.assertEqual(job.attempts_text(), "analyze=1 translate=2 diagnose_perf=1")

    def test_job_without_verdict_is_incomplete_with_its_folders(self):
        job = self.jobs()["rms_norm-0001"]
        self.assertEqual(job.state, "INCOMPLETE")
        self.assertEqual(job.operator, "rms_norm")
        self.assertEqual(job.attempts, {"analyze": 1, "translate": 2, "correctness": 1})
        self.assertIn("translate/2", job.reason)
        self.assertEqual(job.configs, [])

    def test_schemas_and_journal_are_not_jobs(self):
        self.assertEqual(sorted(self.jobs()), ["rms_norm-0001", "rope-0002"])

    def test_table_lists_every_job_and_the_totals(self):
        text = summary.table(summary.read_runs(self.root / "runs"), wall_s=42.0)
        rows = text.splitlines()
        self.assertTrue(rows[0].startswith("job"))
        self.assertIn("rope-0002", text)
        self.assertIn("0.800", text)
        self.assertIn("INCOMPLETE", text)
        self.assertIn("2 jobs (1 ACCEPTED, 1 INCOMPLETE), 2 paired configs", rows[-1])
        self.assertIn("42.0 s", rows[-1])

    def test_kport_log_marks_expectations(self):
        jobs = summary.read_runs(self.root / "runs")
        summary.apply_kport_log(jobs, "kport: rms_norm-0001: state INCOMPLETE (expected ACCEPTED)\n"
                                      "kport: 2 jobs, some did not end as expected\n")
        by_name = {j.job: j for j in jobs}
        self.assertEqual(by_name["rope-0002"].expected, "as expected")
        self.assertTrue(by_name["rms_norm-0001"].expected.startswith("MISMATCH"))

    def test_main_writes_html_and_json(self):
        out = self.root / "out"
        self.assertEqual(summary.main([str(self.root / "runs"), "--out", str(out)]), 0)
        page = (out / "summary.html").read_text()
        self.assertIn("<table>", page)
        self.assertIn("rope-0002", page)
        # A plot when matplotlib is there, the reason when it is not.
        self.assertTrue("data:image/png;base64," in page or "No plot" in page)
        data = json.loads((out / "summary.json").read_text())
        self.assertEqual(len(data["jobs"]), 2)


class MergeExpectedTest(unittest.TestCase):
    def test_specs_become_absolute_and_keys_survive(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = pathlib.Path(tmp, "a")
            b = pathlib.Path(tmp, "b", "cheats")
            a.mkdir()
            b.mkdir(parents=True)
            (a / "expected.toml").write_text(
                '[[job]]\nspec = "x/port.toml"\nstate = "ACCEPTED"\npath = ["analyze/1 PASS"]\n'
                '[job.attempts]\nanalyze = 1\n')
            (b / "expected.toml").write_text(
                '[[job]]\nspec = "../cheats/y/port.toml"\nstate = "REJECTED"\n'
                'reason = "fallback"\n')
            merged = tomllib.loads(merge_expected.merge([a / "expected.toml", b / "expected.toml"]))
        jobs = merged["job"]
        self.assertEqual(jobs[0]["spec"], str((a / "x" / "port.toml").resolve()))
        self.assertEqual(jobs[0]["attempts"], {"analyze": 1})
        self.assertEqual(jobs[0]["path"], ["analyze/1 PASS"])
        self.assertEqual(jobs[1]["spec"], str((b / "y" / "port.toml").resolve()))
        self.assertEqual(jobs[1]["reason"], "fallback")

    def test_a_file_without_jobs_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = pathlib.Path(tmp, "e.toml")
            p.write_text('title = "none"\n')
            with self.assertRaises(ValueError):
                merge_expected.merge([p])


if __name__ == "__main__":
    unittest.main()
