"""The daemon's requests over a ZeroMQ DEALER socket (see Client)."""

import itertools
import os

import flatbuffers
import zmq

from kport.msg import (CancelRequest, DevicesRequest, ListRequest,
                       MetricsRequest, Reply, Request, ShutdownRequest,
                       StatusRequest, SubmitRequest, WatchRequest)
from kport.msg.ReplyStatus import ReplyStatus
from kport.msg.RequestBody import RequestBody

_STATUS_NAMES = {v: k for k, v in vars(ReplyStatus).items()
                 if not k.startswith("_")}


class DaemonError(Exception):
    """A reply that is not OK: status is ERROR, BUSY or NOT_FOUND."""

    def __init__(self, status, message, queue_length=0):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.queue_length = queue_length


def _s(b):
    return b.decode() if isinstance(b, bytes) else (b or "")


def _job(j):
    return {"job": _s(j.Job()), "operator": _s(j.Operator()),
            "state": _s(j.State()), "stage": _s(j.Stage()),
            "attempt": j.Attempt(), "reason": _s(j.Reason()),
            "evidence": _s(j.Evidence())}


def _event(e):
    return {"seq": e.Seq(), "job": _s(e.Job()), "kind": _s(e.Kind()),
            "stage": _s(e.Stage()), "attempt": e.Attempt(),
            "verdict": _s(e.Verdict()), "next": _s(e.Next()),
            "reason": _s(e.Reason()), "at": e.At()}


class Client:
    """One connection to the daemon. endpoint: ipc://PATH or tcp://HOST:PORT
    (default $KPORT_ENDPOINT, else ipc://kport-state/kport.sock). Every call
    raises DaemonError for a refusal and TimeoutError when no reply came."""

    def __init__(self, endpoint=None, timeout_s=30.0):
        self.endpoint = endpoint or os.environ.get(
            "KPORT_ENDPOINT", "ipc://kport-state/kport.sock")
        self.timeout_ms = int(timeout_s * 1000)
        self._ctx = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.connect(self.endpoint)
        self._ids = itertools.count(1)
        self._current = 0

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Requests ------------------------------------------------------------

    def submit(self, spec_path=None, spec_toml=None, base_dir=None,
               submission_id=None):
        """Submits a spec file (or inline TOML with base_dir); the same
        submission_id again returns the same job. Returns {job,
        submission_id, duplicate}."""
        def body(b):
            path = b.CreateString(os.path.abspath(spec_path)) if spec_path else None
            toml = b.CreateString(spec_toml) if spec_toml is not None else None
            base = b.CreateString(os.path.abspath(base_dir)) if base_dir else None
            sid = b.CreateString(submission_id) if submission_id else None
            SubmitRequest.Start(b)
            if path is not None:
                SubmitRequest.AddSpecPath(b, path)
            if toml is not None:
                SubmitRequest.AddSpecToml(b, toml)
            if base is not None:
                SubmitRequest.AddBaseDir(b, base)
            if sid is not None:
                SubmitRequest.AddSubmissionId(b, sid)
            return SubmitRequest.End(b)
        r = self._call(RequestBody.SubmitRequest, body).Submit()
        return {"job": _s(r.Job()), "submission_id": _s(r.SubmissionId()),
                "duplicate": bool(r.Duplicate())}

    def status(self, job=None):
        """One job's state (a dict), or the list of running jobs."""
        def body(b):
            j = b.CreateString(job) if job else None
            StatusRequest.Start(b)
            if j is not None:
                StatusRequest.AddJob(b, j)
            return StatusRequest.End(b)
        jobs = self._jobs(self._call(RequestBody.StatusRequest, body))
        return jobs[0] if job else jobs

    def list(self, state=None):
        """Every job, or those in `state` (RUNNING, ACCEPTED, ...)."""
        def body(b):
            s = b.CreateString(state) if state else None
            ListRequest.Start(b)
            if s is not None:
                ListRequest.AddState(b, s)
            return ListRequest.End(b)
        return self._jobs(self._call(RequestBody.ListRequest, body))

    def cancel(self, job):
        def body(b):
            j = b.CreateString(job)
            CancelRequest.Start(b)
            CancelRequest.AddJob(b, j)
            return CancelRequest.End(b)
        self._call(RequestBody.CancelRequest, body)

    def watch(self, job=None, from_seq=0, timeout_s=None):
        """Yields events (dicts: seq, job, kind, stage, attempt, verdict,
        next, reason, at) from from_seq on; for one job it ends after the
        job's final event. A reconnecting client passes the last seq + 1."""
        def body(b):
            j = b.CreateString(job) if job else None
            WatchRequest.Start(b)
            if j is not None:
                WatchRequest.AddJob(b, j)
            WatchRequest.AddFromSeq(b, from_seq)
            return WatchRequest.End(b)
        timeout = self.timeout_ms if timeout_s is None else int(timeout_s * 1000)
        reply = self._call(RequestBody.WatchRequest, body, timeout)
        while True:
            w = reply.Watch()
            for i in range(w.EventsLength()):
                yield _event(w.Events(i))
            if w.Done():
                return
            reply = self._next(timeout)

    def devices(self):
        def body(b):
            DevicesRequest.Start(b)
            return DevicesRequest.End(b)
        d = self._call(RequestBody.DevicesRequest, body).Devices()
        out = []
        for i in range(d.DevicesLength()):
            x = d.Devices(i)
            out.append({"name": _s(x.Name()), "backend": _s(x.Backend()),
                        "uuid": _s(x.Uuid()), "runs": x.Runs(),
                        "leased_s": x.LeasedS(), "busy_s": x.BusyS(),
                        "drained": bool(x.Drained()),
                        "drain_reason": _s(x.DrainReason())})
        return out

    def metrics(self):
        """Prometheus text."""
        def body(b):
            MetricsRequest.Start(b)
            return MetricsRequest.End(b)
        return _s(self._call(RequestBody.MetricsRequest, body).Metrics().Text())

    def shutdown(self):
        def body(b):
            ShutdownRequest.Start(b)
            return ShutdownRequest.End(b)
        self._call(RequestBody.ShutdownRequest, body)

    # Plumbing -------------------------------------------------------------

    def _call(self, kind, body, timeout_ms=None):
        b = flatbuffers.Builder(256)
        off = body(b)
        self._current = next(self._ids)
        Request.Start(b)
        Request.AddId(b, self._current)
        Request.AddBodyType(b, kind)
        Request.AddBody(b, off)
        b.Finish(Request.End(b), file_identifier=b"KPRQ")
        self._sock.send(b.Output())
        return self._next(self.timeout_ms if timeout_ms is None else timeout_ms)

    def _next(self, timeout_ms):
        while True:
            if not self._sock.poll(timeout_ms):
                raise TimeoutError(
                    f"no reply from the daemon at {self.endpoint} within "
                    f"{timeout_ms} ms: is `kport serve` running there?")
            r = Reply.Reply.GetRootAs(self._sock.recv(), 0)
            if r.Id() != self._current:
                continue  # a late reply to an earlier request
            if r.Status() != ReplyStatus.OK:
                raise DaemonError(_STATUS_NAMES.get(r.Status(), r.Status()),
                                  _s(r.Message()), r.QueueLength())
            return r

    @staticmethod
    def _jobs(reply):
        js = reply.Jobs()
        return [_job(js.Jobs(i)) for i in range(js.JobsLength())] if js else []
