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
import time
import traceback
from pathlib import Path
from urllib.parse import parse_qs

from ..protocol import sqltext
from ..tier import tfb
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


def check_runnable(driver: Driver, mode: str, policy: str) -> None:
    """A step's mode and connection policy, as the page's driver can run them (else Unsupported)."""
    check_mode(driver, mode)
    if policy == "pooled" and not driver.has_pool:
        raise Unsupported(f"{driver.name} has no pool of its own")


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
        check_runnable(driver, self.mode, self.policy)
        self.args = exec_args(driver, self.sql, self.mode, spec.get("params", []), int(spec["count"]), dbms)


class TfbStep:
    """A page step of TechEmpower's tests (tier/tfb.py): its statements, mode and policy; the
    keys' range the page draws from per query; and, for the verify form, the keys (and the
    updates' numbers) the shared generators made, so that every language reads alike."""

    def __init__(self, spec: dict, driver: Driver, dbms: str) -> None:
        self.page, self.sql, self.write = spec["page"], spec["sql"], spec.get("write")
        self.mode, self.policy = spec["mode"], spec.get("policy", "persistent")
        self.pool_size = int(spec.get("pool_size") or 1)
        self.queries = int(spec.get("queries") or 1)
        check_runnable(driver, self.mode, self.policy)
        key = (spec.get("params") or [{"lo": 0, "hi": 0}])[0]
        self.lo, self.hi = int(key["lo"]), int(key["hi"])
        self.keys = [row[0] for row in spec["args"]] if spec.get("params") else []
        self.numbers = spec.get("numbers", [])
        self.count = int(spec["count"])
        self.literal = self.mode == "literal" and not driver.literal_binds
        self.adapt, self.dbms = driver.adapt, dbms

    def args(self, sql: str, values: tuple):
        """What an op of ``sql`` takes for one request's values: its parameters, or under
        literal the statement with them inlined (the page writes the text, as the driver's
        users do with it)."""
        return sqltext.inline(sql, values, self.dbms) if self.literal else self.adapt([values])[0]


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
        self.ops: dict[tuple, object] = {}  # (an op's key, id of the connection) → op
        self.per_request = self.driver_class()
        self.connector = None  # a MariaDB driver's: what opens one connection (connect)
        self.persistent: Driver | None = None  # opened on first use, kept for the process's life
        self.pools: dict[int, tuple[Driver, object]] = {}  # pool_size → (driver, its pool)

    def step(self, step_id: str) -> Step | TfbStep:
        step = self.steps.get(step_id)
        if step is None:
            try:
                spec = json.loads((self.steps_dir / f"{step_id}.json").read_text())
            except FileNotFoundError:
                raise NoStep(step_id) from None
            step = self.steps[step_id] = (TfbStep(spec, self.per_request, self.endpoint["dbms"]) if spec.get("page") in tfb.PAGES
                                          else Step(spec, self.per_request, self.endpoint["dbms"]))
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
        return self.within(step, lambda op: op(step_id, lambda d: build(d, step))(step.args[i]))

    def within(self, step, work):
        """``work(op)`` on a connection under the step's policy: per-request connects and
        disconnects around it (nothing outlives the request), pooled borrows one from the
        driver's pool, persistent uses the process's own. ``op(key, make)`` is the op ``make(d)``
        builds on that connection: built once per kept connection, as an app keeps its
        statements (a prepared statement is prepared on its first use and reused after)."""
        if step.policy == "per-request":
            d = self.per_request
            self.connect(d)
            try:
                return work(lambda key, make: make(d))
            finally:
                d.close()
        if step.policy == "pooled":
            d, pool = self.pool(step.pool_size)
            conn = pool.borrow()
            try:
                return work(lambda key, make: self.op(d, key, conn, make))
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
            return work(lambda key, make: self.op(d, key, d.conn, make))
        except self.db_errors:
            d.recover()  # the connection stays usable for the next request
            raise

    def op(self, d: Driver, key, conn, make):
        """The op ``make(d)`` builds on a kept connection, once per connection."""
        cached = self.ops.get((key, id(conn)))
        if cached is None:
            d.attach(conn)
            cached = self.ops[(key, id(conn))] = make(d)
        return cached

    def pool(self, size: int):
        """The driver's own pool (psycopg_pool …) of ``size`` connections, made and filled by
        the first request that asks for it and kept for the process's life."""
        kept = self.pools.get(size)
        if kept is None:
            d = self.driver_class()
            kept = self.pools[size] = (d, d.pool(self.endpoint, size))
        return kept

    def tfb(self, step_id: str, step: TfbStep, keys: list[int], numbers: list[int],
            read_back: bool = False) -> tuple[list, int]:
        """One request of a TechEmpower test on a connection under the step's policy: the
        fortunes (every row, the added one, sorted by message), or a World row per key (read,
        then for updates given its number and written back: one statement per row, read again
        when ``read_back``, as the verify form does to show the write); and the request's time
        in the driver (its connection got under the policy, its statements and their rows), which
        the page's Server-Timing header tells apart from its own."""
        def request(op):
            read = op((step_id, "read"), lambda d: d.exec_op(step.sql, step.mode, True))
            if step.page == "fortunes":
                return [tuple(r) for r in read(step.args(step.sql, ()))]
            worlds = [tuple(read(step.args(step.sql, (k,)))[0]) for k in keys]
            if step.page == "updates":
                write = op((step_id, "write"), lambda d: d.exec_op(step.write, step.mode, False))
                worlds = [(w[0], n) for w, n in zip(worlds, numbers)]
                for key, number in worlds:
                    write(step.args(step.write, (number, key)))
                if read_back:
                    worlds = [tuple(read(step.args(step.sql, (k,)))[0]) for k, _ in worlds]
            return worlds
        start = time.perf_counter_ns()
        rows = self.within(step, request)
        db_ns = time.perf_counter_ns() - start
        if step.page == "fortunes":  # the page's own work, outside the driver
            rows.append((0, tfb.ADDED))
            rows.sort(key=lambda r: r[1])
        return rows, db_ns

    def tfb_verify(self, step_id: str, step: TfbStep, dump: int = 0) -> dict:
        """Requests 0 … count-1, each with the next ``queries`` keys (and numbers) the shared
        generators made, every value read checksummed: the same reads in every language."""
        reading = Reading(True, dump)
        q, n = step.queries, step.count
        for i in range(n):
            at = [(i * q + k) % n for k in range(q)] if step.keys else []
            reading.add(self.tfb(step_id, step, [step.keys[j] for j in at],
                                 [step.numbers[j] for j in at] if step.numbers else [], read_back=True)[0])
        return reading.answer(n)

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


def _respond(start_response, status: str, ctype: str, body: bytes, timing: str | None = None) -> list[bytes]:
    headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))]
    if timing:
        headers.append(("Server-Timing", timing))
    start_response(status, headers)
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
        return _failed(e, verify, start_response)


def _failed(e: Exception, verify: bool, start_response) -> list[bytes]:
    """A 500: the error as JSON for a verify (or connect) form, else its message alone."""
    error = _error(e)
    if verify:
        return _respond(start_response, "500 Internal Server Error", "application/json",
                        json.dumps({"error": error}).encode())
    return _respond(start_response, "500 Internal Server Error", "text/plain", (error["message"] + "\n").encode())


def _tfb_page(page: str, environ, start_response) -> list[bytes]:
    """A TechEmpower test (tier/tfb.py): ``/db``, ``/queries``, ``/fortunes`` or ``/updates``
    with ``?step=ID``; keys and numbers drawn at random per query, as the test's rules ask;
    ``&verify=1`` answers the checksum of the shared generators' keys instead. Its answer says
    where its time went (tier/tfb.py, ``server_timing``): in the driver, and in the whole page."""
    began = time.perf_counter_ns()
    query = parse_qs(environ.get("QUERY_STRING", ""))
    step_id = query.get("step", [""])[0]
    verify = query.get("verify", [""])[0] == "1"
    try:
        if not STEP_ID.fullmatch(step_id):
            raise NoStep(step_id)
        p = pages()
        step = p.step(step_id)
        if not isinstance(step, TfbStep) or step.page != page:
            raise NoStep(step_id)
        if verify:
            body = json.dumps(p.tfb_verify(step_id, step, int(query.get("dump", ["0"])[0] or 0))).encode()
            return _respond(start_response, "200 OK", "application/json", body)
        keys = [random.randint(step.lo, step.hi) for _ in range(step.queries)] if page != "fortunes" else []
        numbers = [random.randint(step.lo, step.hi) for _ in keys] if page == "updates" else []
        rows, db_ns = p.tfb(step_id, step, keys, numbers)
        if page == "fortunes":
            body, kind = tfb.html_page(rows).encode(), tfb.HTML_TYPE
        else:
            worlds = [{"id": key, "randomNumber": number} for key, number in rows]
            body, kind = json.dumps(worlds[0] if page == "db" else worlds, separators=(",", ":")).encode(), tfb.JSON_TYPE
        return _respond(start_response, "200 OK", kind, body,
                        tfb.server_timing(db_ns, time.perf_counter_ns() - began))
    except NoStep:
        return _respond(start_response, "404 Not Found", "text/plain", f"no {page} step {step_id!r}\n".encode())
    except Exception as e:
        return _failed(e, verify, start_response)


def app(environ, start_response) -> list[bytes]:
    path = environ.get("PATH_INFO", "")
    if path == "/op":
        return _op_page(environ, start_response)
    if path[1:] in tfb.PAGES:
        return _tfb_page(path[1:], environ, start_response)
    if path == "/hello":
        return _respond(start_response, "200 OK", "text/plain", HELLO)
    if path == "/static.html":
        return _respond(start_response, "200 OK", "text/html", STATIC)
    return _respond(start_response, "404 Not Found", "text/plain", b"not found\n")
