"""Ask a method's worker who it is (``hello``): runtime, driver version and pinned settings,
or why it cannot run here."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

from ..worker_process import WorkerFailed, WorkerProcess
from ..targets import TargetUnavailable
from . import Method


@dataclass
class Probe:
    status: str
    runtime: str | None = None
    version: str | None = None
    settings: dict[str, str] = field(default_factory=dict)


def _server_missing(dbms: str) -> str | None:
    if dbms == "postgresql":
        from ..targets.postgresql import find_bindir

        try:
            find_bindir()
        except TargetUnavailable as e:
            return str(e)
    return None


def probe(method: Method, timeout: float = 30.0) -> Probe:
    why = method.missing()
    if why:
        return Probe(f"no: {why}")
    with tempfile.TemporaryDirectory() as tmp:
        worker = WorkerProcess(method.command(), os.path.join(tmp, "worker.log"))
        try:
            hello = worker.request({"op": "hello"}, timeout)
        except WorkerFailed as e:
            return Probe(f"no: worker did not start ({e})")
        finally:
            worker.close()
    if not hello.get("ok"):
        return Probe(f"no: {hello.get('error', {}).get('message')}")
    servers = [m for m in (_server_missing(d) for d in method.dbms) if m]
    status = "yes" if not servers else f"external targets only: {servers[0]}"
    return Probe(status, hello.get("runtime"), hello.get("driver_version"), hello.get("settings", {}))
