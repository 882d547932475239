"""The web tier's Python pages (docs/tier.md): a WSGI application, run by the tier worker as

    gunicorn accessbench.pyworker.web:app          (sync workers)

Pages: ``/static.html``, ``/hello``, ``/op?step=ID[&verify=1]`` and ``/op?connect=1`` (one
connection made and closed: the host's ``open``). The operation page is a
pyworker driver as a page uses it: the method named in ``$ACCESSBENCH_TIER_DIR/endpoint.json``
(``py-gunicorn-psycopg`` → py-psycopg …) with the step's arguments, op, connection policy and
checksum made by the pyworker's own pieces, so the page measures the same operation as the
worker does, plus the app server around it.

A gunicorn sync worker is one process serving one request at a time: everything kept here
(the step's arguments and ops, the persistent connection, the pool) belongs to that process and
needs no lock. Nothing connects before the first request asks for it, so the module may be
imported before gunicorn forks (``--preload``) without sharing a connection between processes.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import re
import sys
import traceback
from pathlib import Path
from urllib.parse import parse_qs

from .base import Driver, Unsupported
from .drivers import DRIVERS
from .host import Reading, check_mode, exec_args

# The bytes of the static page, read once: gunicorn has no file serving of its own, so the
# app hands them over as they are.
STATIC = (Path(__file__).resolve().parent.parent / "tier" / "static.html").read_bytes()
HELLO = b"Hello, world!\n"

STEP_ID = re.compile(r"[A-Za-z0-9_-]+")


class NoStep(Exception):
    """A step id the tier directory does not hold: 404."""


class Step:
    """One ``steps/ID.json``, which never changes once written: read once per process, with
    its arguments made as the worker's host makes them (host.Session._args)."""

    def __init__(self, spec: dict, driver: Driver, dbms: str) -> None:
        self.kind = spec.get("kind")
        if self.kind not in ("exec", "scan"):
            raise Unsupported(f"the operation page runs exec and scan steps, not {self.kind!r}")
        self.sql, self.mode, self.policy = spec["sql"], spec.get("mode"), spec.get("policy", "persistent")
        self.pool_size = int(spec.get("pool_size") or 1)
        self.reads = bool(spec.get("fetch")) or self.kind == "scan"
        if self.kind == "scan":  # the statement as it is, every row read
            self.args = [None] * int(spec["count"])
            return
        check_mode(driver, self.mode)
        if self.policy == "pooled" and not driver.has_pool:
            raise Unsupported(f"{driver.name} has no pool of its own")
        self.args = exec_args(driver, self.sql, self.mode, spec.get("params", []), int(spec["count"]), dbms)


def build(d: Driver, step: Step):
    """The step's op on the driver's connection: a scan reads the statement as it is."""
    return d.scan_op(step.sql) if step.kind == "scan" else d.exec_op(step.sql, step.mode, step.reads)


class Pages:
    """This process's side of the tier: the endpoint, its steps, and the connections each
    policy keeps (one driver object per policy: a driver object is bound to the connection its
    ops are built on)."""

    def __init__(self) -> None:
        tier = Path(os.environ["ACCESSBENCH_TIER_DIR"])
        config = json.loads((tier / "endpoint.json").read_text())
        self.steps_dir = tier / "steps"
        self.endpoint = dict(config["endpoint"])
        if os.environ.get("ACCESSBENCH_DB_PASSWORD"):  # in memory only, never in the file
            self.endpoint["password"] = os.environ["ACCESSBENCH_DB_PASSWORD"]
        # the pyworker driver the tier method's pages reuse: its catalog entry's page_driver
        driver = config.get("page_driver") or ""
        if driver not in DRIVERS:
            raise Unsupported(f"no Python page for method {config['method'].split('/', 1)[0]!r} (its page "
                              f"driver {driver!r} is not one of {', '.join(DRIVERS)})")
        module, _, name = DRIVERS[driver].partition(":")
        try:
            self.driver_class = getattr(importlib.import_module(module), name or "Driver")
        except ImportError as e:
            raise Unsupported(f"{driver}: driver module not importable: {e}") from e
        self.db_errors = self.driver_class.db_errors
        self.steps: dict[str, Step] = {}
        self.ops: dict[tuple[str, int], object] = {}  # (step id, id of the connection) → op
        self.per_request = self.driver_class()
        self.connector = None  # a MariaDB driver's: what opens one connection (connect)
        self.persistent: Driver | None = None  # opened on first use, kept for the process's life
        self.pools: dict[int, tuple[Driver, object]] = {}  # pool_size → (driver, its pool)

    def step(self, step_id: str) -> Step:
        step = self.steps.get(step_id)
        if step is None:
            try:
                spec = json.loads((self.steps_dir / f"{step_id}.json").read_text())
            except FileNotFoundError:
                raise NoStep(step_id) from None
            step = self.steps[step_id] = Step(spec, self.per_request, self.endpoint["dbms"])
        return step

    def connect(self, d: Driver) -> None:
        """A connection as a page makes one. The MariaDB drivers' ``open`` also asks the server
        which thread serves the connection (for the runner's CPU accounting): a page has no use
        for that round trip, so with them the page connects and attaches, as their pools do,
        through the driver's connector, made once per process (its arguments and TLS
        configuration are the endpoint's, which never changes)."""
        if getattr(d, "connector", None) is not None:
            if self.connector is None:
                self.connector = d.connector(self.endpoint)
            d.attach(self.connector())
        else:
            d.open(self.endpoint, {})

    def run(self, step_id: str, step: Step, i: int):
        """Operation i of a step under its policy: its rows read, or the rows it changed."""
        if step.policy == "per-request":  # connect, run, disconnect: nothing outlives the request
            d = self.per_request
            self.connect(d)
            try:
                return build(d, step)(step.args[i])
            finally:
                d.close()
        if step.policy == "pooled":
            d, pool = self.pool(step.pool_size)
            conn = pool.borrow()
            try:
                return self.op(d, step_id, step, conn)(step.args[i])
            finally:
                pool.give_back(conn)
        if step.policy != "persistent":
            raise Unsupported(f"unknown connection policy {step.policy!r}")
        d = self.persistent
        if d is None:
            d = self.driver_class()
            self.connect(d)
            self.persistent = d
        try:
            return self.op(d, step_id, step, d.conn)(step.args[i])
        except self.db_errors:
            d.recover()  # the connection stays usable for the next request
            raise

    def op(self, d: Driver, step_id: str, step: Step, conn):
        """The step's op on a kept connection, built once per connection, as an app keeps its
        statements: a prepared statement is prepared on its first use and reused after."""
        key = (step_id, id(conn))
        op = self.ops.get(key)
        if op is None:
            d.attach(conn)
            op = self.ops[key] = build(d, step)
        return op

    def pool(self, size: int):
        """The driver's own pool (psycopg_pool …) of ``size`` connections, made and filled by
        the first request that asks for it and kept for the process's life."""
        kept = self.pools.get(size)
        if kept is None:
            d = self.driver_class()
            kept = self.pools[size] = (d, d.pool(self.endpoint, size))
        return kept

    def verify(self, step_id: str, step: Step, dump: int = 0) -> dict:
        """Operations 0 … count-1 in order, every value read checksummed (host.Session._verify);
        the first ``dump`` rows read also answered as typed values, to explain a mismatch."""
        reading = Reading(step.reads, dump)
        for i in range(len(step.args)):
            reading.add(self.run(step_id, step, i))
        return reading.answer(len(step.args))


_pages: Pages | None = None


def pages() -> Pages:
    global _pages
    if _pages is None:
        _pages = Pages()
    return _pages


def _error(e: BaseException) -> dict:
    """An error as the protocol answers it: kind, the driver's message (first line), sqlstate."""
    text = str(e).strip()
    error = {"kind": "internal", "message": text.splitlines()[0] if text else type(e).__name__}
    if isinstance(e, Unsupported):
        error["kind"] = "unsupported"
    elif _pages is not None and isinstance(e, _pages.db_errors):
        error["kind"] = "db"
        error["message"] = f"{type(e).__name__}: {error['message']}"
        sqlstate = _pages.per_request.sqlstate(e)
        if sqlstate:
            error["sqlstate"] = sqlstate
    else:
        traceback.print_exc(file=sys.stderr)  # gunicorn's error log
        error["message"] = f"{type(e).__name__}: {error['message']}"
    return error


def _respond(start_response, status: str, ctype: str, body: bytes) -> list[bytes]:
    start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
    return [body]


def _op_page(environ, start_response) -> list[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""))
    step_id = query.get("step", [""])[0]
    connect = query.get("connect", [""])[0] == "1"
    verify = connect or query.get("verify", [""])[0] == "1"  # both answer JSON
    try:
        if connect:  # the host's open: one connection made and closed, as a page makes one
            p = pages()
            p.connect(p.per_request)
            p.per_request.close()
            return _respond(start_response, "200 OK", "application/json", b'{"ok": true}')
        if not STEP_ID.fullmatch(step_id):
            raise NoStep(step_id)
        p = pages()
        step = p.step(step_id)
        if verify:
            body = json.dumps(p.verify(step_id, step, int(query.get("dump", ["0"])[0] or 0))).encode()
            return _respond(start_response, "200 OK", "application/json", body)
        # one operation, its argument row drawn at random: the processes share no counter
        result = p.run(step_id, step, random.randrange(len(step.args)))
        rows = len(result) if step.reads else result
        return _respond(start_response, "200 OK", "text/plain", f"rows={rows}".encode())
    except NoStep:
        return _respond(start_response, "404 Not Found", "text/plain", f"no step {step_id!r}\n".encode())
    except Exception as e:
        error = _error(e)
        if verify:
            return _respond(start_response, "500 Internal Server Error", "application/json",
                            json.dumps({"error": error}).encode())
        return _respond(start_response, "500 Internal Server Error", "text/plain",
                        (error["message"] + "\n").encode())


def app(environ, start_response) -> list[bytes]:
    path = environ.get("PATH_INFO", "")
    if path == "/op":
        return _op_page(environ, start_response)
    if path == "/hello":
        return _respond(start_response, "200 OK", "text/plain", HELLO)
    if path == "/static.html":
        return _respond(start_response, "200 OK", "text/html", STATIC)
    return _respond(start_response, "404 Not Found", "text/plain", b"not found\n")
