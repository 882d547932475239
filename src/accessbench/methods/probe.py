"""Ask a method's worker who it is (``hello``): runtime, driver version and pinned settings,
or why it cannot run here.

A worker's hello changes only when the worker does, so it is kept (``hello.json`` in the
user's cache directory) under a fingerprint of the files the worker runs from — its program,
what it is built into, its driver's module, their sizes and times — and of the Python that
starts it. `accessbench methods` then answers from what was kept, in about a second, asking
a worker again only when its build changed (or with ``--probe``). Whether it can run here
(its toolchain, a server's binaries) is decided afresh every time: that is cheap.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__, usercache
from ..targets import TargetUnavailable
from ..worker_process import WorkerFailed, WorkerProcess
from . import Method


@dataclass
class Probe:
    status: str
    runtime: str | None = None
    version: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    kept: bool = False  # the hello was the one kept, not asked again
    shapes: dict | None = None  # a layer's capabilities.shapes: the features it maps, and why not the others


def cache_file() -> Path:
    return usercache.folder() / "hello.json"


# What a kept hello holds: raised whenever it keeps more of the hello, so older entries are asked again.
KEPT_FORM = 2  # 2: a layer's capabilities.shapes


def fingerprint(method: Method) -> str:
    """What the method's hello depends on: the files its worker runs from, as they are now."""
    parts = [__version__, str(KEPT_FORM), sys.executable, *method.command()]
    for path in method.files():
        try:
            stat = os.stat(path)
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            parts.append(f"{path}:absent")
    return "|".join(parts)


def _server_missing(dbms: str) -> str | None:
    if dbms == "postgresql":
        from ..targets.postgresql import find_bindir

        try:
            find_bindir()
        except TargetUnavailable as e:
            return str(e)
    return None


def _hello(method: Method, timeout: float) -> dict:
    """The worker's hello answer, or ``{"ok": False, "error": {"message": why}}``."""
    with tempfile.TemporaryDirectory() as tmp:
        worker = WorkerProcess(method.command(), os.path.join(tmp, "worker.log"))
        try:
            return worker.request({"op": "hello"}, timeout)
        except WorkerFailed as e:
            return {"ok": False, "error": {"message": f"worker did not start ({e})"}}
        finally:
            worker.close()


def probe(method: Method, timeout: float = 30.0, hello: dict | None = None) -> Probe:
    """What ``method`` is here: asked of its worker, or from ``hello`` when one is given."""
    why = method.missing()
    if why:
        return Probe(f"no: {why}")
    kept = hello is not None
    if hello is None:
        hello = _hello(method, timeout)
    if not hello.get("ok"):
        return Probe(f"no: {hello.get('error', {}).get('message')}")
    servers = [m for m in (_server_missing(d) for d in method.dbms) if m]
    status = "yes" if not servers else f"external targets only: {servers[0]}"
    return Probe(status, hello.get("runtime"), hello.get("driver_version"), hello.get("settings", {}), kept,
                 hello.get("capabilities", {}).get("shapes"))


def probe_all(methods: list[Method], again: bool = False, timeout: float = 30.0) -> list[Probe]:
    """Every method's probe, from the kept hellos where the worker is unchanged (all asked
    again with ``again``); the workers asked run two at a time, and what they said is kept.
    Two commands at once ask once: the second waits for the first's answers and reads them."""
    path = cache_file()
    with _held(path.with_suffix(".lock")):
        return _probe_all(path, methods, again, timeout)


@contextmanager
def _held(lock: Path):
    """The cache's lock, held until the block ends (not at all where it cannot be made)."""
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _probe_all(path: Path, methods: list[Method], again: bool, timeout: float) -> list[Probe]:
    try:
        kept = {} if again else json.loads(path.read_text())
    except (OSError, ValueError):
        kept = {}
    prints = {m.name: fingerprint(m) for m in methods}

    def one(method: Method) -> Probe:
        entry = kept.get(method.name)
        if entry and entry.get("fingerprint") == prints[method.name]:
            return probe(method, timeout, entry["hello"])
        return probe(method, timeout)

    with ThreadPoolExecutor(max_workers=2) as pool:
        probes = list(pool.map(one, methods))
    fresh = {m.name: {"fingerprint": prints[m.name],
                      "hello": {"ok": True, "runtime": p.runtime, "driver_version": p.version, "settings": p.settings,
                                **({"capabilities": {"shapes": p.shapes}} if p.shapes is not None else {})}}
             for m, p in zip(methods, probes) if p.runtime is not None or p.version is not None or p.settings}
    if fresh != {name: kept.get(name) for name in fresh}:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({**kept, **fresh}, indent=1))
            tmp.replace(path)
        except OSError:
            pass  # a cache that cannot be written: the next call asks the workers again
    return probes
