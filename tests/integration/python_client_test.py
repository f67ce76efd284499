#!/usr/bin/env python3
"""kport_client against a real `kport serve`: submit, watch to the verdict,
idempotent submit, cancel, metrics, BUSY-free errors, shutdown.

    python_client_test.py KPORT_EXE     (PYTHONPATH: sdk/python and <build>/python)
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

from kport_client import Client, DaemonError

KPORT = None

CONFIG = """[runtime]
fsync = false
[devices]
backend = "host"
[pipeline]
replace = true
first = "analyze"
[pipeline.stages.analyze]
kind = "agent"
max_attempts = 1
routes = { PASS = "ACCEPTED", "*" = "REJECTED" }
"""

TRIVIAL = """operator = "py_trivial"
[reference]
dir = "ref"
[target]
test = ["true"]
[agents]
driver = "builtin"
name = "trivial"
"""

SLEEPER = """operator = "py_sleeper"
[reference]
dir = "ref"
[target]
test = ["true"]
[agents]
driver = "exec"
command = ["sleep", "100"]
"""


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kport-py-")
        d = cls.tmp.name
        os.makedirs(os.path.join(d, "ref"))
        with open(os.path.join(d, "kport.toml"), "w") as f:
            f.write(CONFIG)
        cls.state = os.path.join(d, "state")
        cls.log = open(os.path.join(d, "serve.log"), "w")
        cls.proc = subprocess.Popen(
            [KPORT, "serve", "--config", os.path.join(d, "kport.toml"),
             "--state-dir", cls.state], stdout=cls.log, stderr=cls.log)
        cls.client = Client("ipc://" + os.path.join(cls.state, "kport.sock"),
                            timeout_s=0.5)
        for _ in range(60):
            try:
                cls.client.list()
                break
            except TimeoutError:
                continue
        cls.client.timeout_ms = 30000

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.kill()
            cls.proc.wait()
        cls.client.close()
        cls.log.close()
        with open(os.path.join(cls.tmp.name, "serve.log")) as f:
            sys.stderr.write("kport serve's log:\n" + f.read())
        cls.tmp.cleanup()

    def test_submit_and_watch_to_the_verdict(self):
        r = self.client.submit(spec_toml=TRIVIAL, base_dir=self.tmp.name,
                               submission_id="py-1")
        self.assertFalse(r["duplicate"])
        events = list(self.client.watch(r["job"], timeout_s=60))
        self.assertEqual(events[-1]["kind"], "final")
        self.assertEqual(events[-1]["verdict"], "ACCEPTED")
        self.assertEqual([e["kind"] for e in events],
                         ["start", "transition", "final"])
        # A reconnecting watcher from the middle misses nothing after it.
        later = list(self.client.watch(r["job"], from_seq=events[1]["seq"]))
        self.assertEqual([e["seq"] for e in later],
                         [e["seq"] for e in events[1:]])
        self.assertEqual(self.client.status(r["job"])["state"], "ACCEPTED")
        again = self.client.submit(spec_toml=TRIVIAL, base_dir=self.tmp.name,
                                   submission_id="py-1")
        self.assertEqual(again["job"], r["job"])
        self.assertTrue(again["duplicate"])
        self.assertIn('kport_transitions_total{stage="analyze",verdict="PASS"}',
                      self.client.metrics())

    def test_cancel_a_running_job(self):
        r = self.client.submit(spec_toml=SLEEPER, base_dir=self.tmp.name)
        for e in self.client.watch(r["job"], timeout_s=60):
            if e["kind"] == "start":
                break
        self.client.cancel(r["job"])
        events = list(self.client.watch(r["job"], timeout_s=60))
        self.assertEqual(events[-1]["verdict"], "CANCELLED")
        with self.assertRaises(DaemonError) as e:
            self.client.cancel(r["job"])
        self.assertEqual(e.exception.status, "NOT_FOUND")

    def test_errors_name_what_was_wrong(self):
        with self.assertRaises(DaemonError) as e:
            self.client.submit(spec_toml="operator = 3\n",
                               base_dir=self.tmp.name)
        self.assertEqual(e.exception.status, "ERROR")
        self.assertIn("operator", e.exception.message)
        with self.assertRaises(DaemonError) as e:
            list(self.client.watch(from_seq=10**9))
        self.assertIn("in the future", e.exception.message)

    def test_zz_shutdown_stops_the_daemon(self):
        self.client.shutdown()
        self.assertEqual(self.proc.wait(timeout=60), 0)


if __name__ == "__main__":
    KPORT = sys.argv.pop(1)
    unittest.main(verbosity=2)
