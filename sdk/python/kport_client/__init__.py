"""kport_client: a Python client of the kport daemon (`kport serve`).

    from kport_client import Client
    c = Client("ipc:///var/lib/kport/kport.sock")
    job = c.submit(spec_path="/path/port.toml", submission_id="my-port-1")["job"]
    for event in c.watch(job):
        print(event["kind"], event["stage"], event["verdict"])

Needs pyzmq (Debian python3-zmq), flatbuffers (python3-flatbuffers) and the
generated protocol code (package `kport.msg`, built from
messages/protocol.fbs into <build>/python and installed beside this package
in share/kport/python).
"""

from .client import Client, DaemonError

__all__ = ["Client", "DaemonError"]
