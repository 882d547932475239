"""The worker's message loop: parse a message → dispatch on its op / step kind → timed loop
→ answer. One JSON object per line each way; stdout carries nothing else.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import platform
import resource
import sys
import time
import traceback
from array import array
from typing import Any, Callable, TextIO
from urllib.parse import quote

from ..protocol import PROTOCOL_VERSION, generators, sqltext, vectors
from ..protocol.capabilities import PROCESSES
from ..protocol.checksum import Checksum, typed
from ..protocol.histogram import Histogram
from ..protocol.schedule import Schedule
from .base import Driver, Unsupported
from .load import Load
from .load import run as load_loop
from .drivers import DRIVERS


POLICIES = ("persistent", "per-request", "pooled")


class ProtocolError(Exception):
    pass


class Session:
    """One worker's state: its driver, the endpoint it opened, what it learnt."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.endpoint: dict | None = None
        self.server_pid: int | None = None
        self.columns: dict[str, int] = {}  # columns per statement, seen in verification
        self.options: dict = {}
        self.secrets: list[str] = []  # the endpoint's password as given and as a URI quotes it

    def handle(self, msg: dict) -> dict:
        op = msg.get("op")
        handler = getattr(self, f"on_{op}", None) if isinstance(op, str) else None
        if handler is None:
            raise ProtocolError(f"unknown op {op!r}")
        return {"ok": True, **handler(msg)}

    def on_hello(self, msg: dict) -> dict:
        d = self.driver
        return {
            "protocol": PROTOCOL_VERSION,
            "name": d.name,
            "language": "python",
            "runtime": f"{platform.python_implementation()} {platform.python_version()}",
            "driver": d.driver,
            "driver_version": d.version(),
            "methods": sorted(DRIVERS),
            "settings": d.settings(),
            "capabilities": {
                "dbms": list(d.dbms),
                "kinds": list(d.kinds),
                "modes": list(d.modes),
                "batch": d.batch_style,
                "concurrency": d.concurrency,
                # steps under load: by duration, open loop at a rate, latency histograms, and
                # the connection policies built for this driver; raw latencies on request too
                "load": {"policies": [p for p in POLICIES if p != "pooled" or d.has_pool], "latencies": True},
                # a layer's: the shape features its API maps, and why not the others (protocol: Shapes)
                **({"shapes": d.shapes()} if d.shapes() is not None else {}),
                **({"sqlstate": d.sqlstates} if d.sqlstates else {}),
                **({"deviations": d.deviations} if d.deviations else {}),
            },
        }

    def on_open(self, msg: dict) -> dict:
        endpoint = msg["endpoint"]
        self.options = msg.get("options", {})
        if password := endpoint.get("password"):
            self.secrets = sorted({password, quote(password, safe="")}, key=len, reverse=True)
        start = time.perf_counter_ns()
        info = self.driver.open(endpoint, self.options)
        connect_ns = time.perf_counter_ns() - start
        self.endpoint = endpoint
        self.server_pid = info.get("server_pid")
        return {"connect_ns": connect_ns, **info}

    def on_close(self, msg: dict) -> dict:
        if self.endpoint is not None:
            self.driver.close()
            self.endpoint = None
        return {}

    def on_bye(self, msg: dict) -> dict:
        return self.on_close(msg)

    def failure(self, e: Exception) -> dict:
        """The answer to a message that failed: the driver's own errors as kind db. A driver
        given a connection URI may quote it in an error: the password never leaves the worker."""
        if isinstance(e, Unsupported):
            answer = error_answer("unsupported", str(e))
        elif isinstance(e, self.driver.db_errors):
            answer = error_answer("db", f"{type(e).__name__}: {e}", self.driver.sqlstate(e))
        else:
            answer = failure(e)
        for secret in self.secrets:
            answer["error"]["message"] = answer["error"]["message"].replace(secret, "***")
        return answer

    # conformance: the worker's own generators and checksum, compared with protocol/vectors
    def on_generate(self, msg: dict) -> dict:
        return generate(msg)

    def on_checksum(self, msg: dict) -> dict:
        return checksum(msg)

    def on_histogram(self, msg: dict) -> dict:
        return histogram(msg)

    def on_schedule(self, msg: dict) -> dict:
        schedule = Schedule(float(msg["rate"]), msg.get("arrival", "poisson"), int(msg["seed"], 16))
        return {"offsets": [schedule.next() for _ in range(int(msg["count"]))]}

    def on_step(self, msg: dict) -> dict:
        if self.endpoint is None:
            raise ProtocolError("step before open")
        d = self.driver
        kind, n = msg["kind"], int(msg["iterations"])
        if kind not in d.kinds:
            raise Unsupported(f"{d.name} has no {kind} steps (it has {', '.join(d.kinds)})")
        sql = msg.get("sql")
        reads = kind == "load" or bool(msg.get("fetch", kind == "scan")) and kind in ("scan", "exec")
        args = self._args(kind, msg, n)
        clients = int(msg.get("clients", 1))
        if clients != 1 and d.concurrency == PROCESSES:
            raise Unsupported(f"{d.name} drives one client per process: the runner starts one worker per client")
        policy = msg.get("policy", "persistent")
        if policy not in POLICIES:
            raise Unsupported(f"unknown connection policy {policy!r}")
        if policy != "persistent" and int(msg.get("commit_every") or 0) > 1:
            raise Unsupported(f"commit_every > 1 with {policy} connections: a transaction cannot span borrowed connections")
        loaded = policy != "persistent" or any(msg.get(k) for k in ("duration_ms", "rate", "histogram"))
        pool = None
        build = lambda: self._op(kind, msg, sql, reads, len(args))  # noqa: E731
        d.api = d.default_api  # a layer's ops say so when they run the statement as SQL text
        # a verification pass counts the statements it sends, where the method can (a timed one never)
        counter = d.count_statements(kind) if msg.get("verify") else None
        try:
            if policy == "per-request":
                op = self._per_request(build)
            elif policy == "pooled":
                pool = d.pool(self.endpoint, int(msg.get("pool_size") or 1))  # filled before any clock
                op = self._pooled(pool, build)
            else:
                op = build()
            if msg.get("verify"):
                answer = self._verify(op, args, reads, None if kind == "load" else sql, int(msg.get("dump") or 0),
                                      bool(msg.get("size")))
                if counter is not None:
                    answer["statements"] = counter.n
            elif loaded:
                ops, conns = self._client_ops(op, build, clients, policy)
                try:
                    answer = self._loaded(ops, args, reads, sql, Load.from_step(msg), policy)
                finally:
                    self._close_clients(conns)
            else:
                answer = self._timed(op, args, reads, sql, msg.get("latency_file"))
            return {**answer, "api": d.api} if d.api else answer
        except d.db_errors:
            d.recover()
            raise
        finally:
            if counter is not None:
                d.stop_counting()
            if pool is not None:
                self._close_pool(pool)
            if policy != "persistent":  # what the step prepared went with its connections
                self._reopen()
            else:
                d.end_step()

    def _args(self, kind: str, msg: dict, n: int) -> list:
        """Each operation's argument, made before the clock starts."""
        d = self.driver
        if msg.get("mode"):
            check_mode(d, msg["mode"])
        if kind in ("connect", "scan"):
            return [None] * n
        if kind == "exec":
            if msg["mode"] == "record":  # the key, as literals: HANDLER … READ index = (…)
                values = generators.rows(msg.get("params", []), n)
                return [", ".join(sqltext.literal(x, self.endpoint["dbms"]) for x in v) for v in values]
            return exec_args(d, msg["sql"], msg["mode"], msg.get("params", []), n, self.endpoint["dbms"])
        if kind == "load":  # the parents' parameters, bound (protocol: Loading associations)
            return d.adapt(generators.rows(msg.get("params", []), n))
        if kind == "batch":
            size = int(msg["batch"])
            values = d.adapt(generators.rows(msg.get("params", []), n))
            return [values[i : i + size] for i in range(0, n, size)]
        raise ProtocolError(f"unknown step kind {kind!r}")

    def _op(self, kind: str, msg: dict, sql: str | None, reads: bool, count: int):
        d = self.driver
        d.shape = msg.get("shape")  # a layer's: what the statement does (protocol: `shape`)
        if kind == "connect":
            op = d.connect_op(self.endpoint)
        elif msg.get("mode") == "record":
            op = d.record_op(kind, msg["record"])
        elif kind == "scan":
            op = d.scan_op(sql)
        elif kind == "exec":
            op = d.exec_op(sql, msg["mode"], reads)
        elif kind == "load":
            op = d.load_op(sql, msg["load"])
        else:
            op = d.batch_op(sql)
        if msg.get("commit_every") and kind == "exec":
            op = d.with_commits(op, int(msg["commit_every"]), count)
        return op

    def _per_request(self, build):
        """Connect, run the operation, disconnect — all inside the operation's time (S5's
        connect per request, pgbench -C)."""
        d = self.driver
        endpoint, options = self.endpoint, self.options
        d.close()
        if d.is_async:
            async def aop(arg):
                await d.aopen(endpoint, options)
                # nothing awaits between the open and building the op, so with several
                # clients on one event loop, this connection is the one this client opened
                conn, built = d.conn, build()
                try:
                    return await built(arg)
                finally:
                    d.attach(conn)
                    await d.aclose()

            return aop

        def op(arg):
            d.open(endpoint, options)
            try:
                return build()(arg)
            finally:
                d.close()

        return op

    def _pooled(self, pool, build):
        """Borrow a connection from the driver's pool, run the operation, give it back — all
        inside the operation's time. Ops are built once per pooled connection (a prepared
        statement is prepared once on each)."""
        d = self.driver
        d.close()  # the session's own connection sits the step out
        ops: dict[int, Any] = {}

        def op_for(conn):
            built = ops.get(id(conn))
            if built is None:
                d.attach(conn)
                built = ops[id(conn)] = build()
            return built

        if d.is_async:
            async def aop(arg):
                conn = await pool.borrow()
                try:
                    return await op_for(conn)(arg)
                finally:
                    await pool.give_back(conn)

            return aop

        def op(arg):
            conn = pool.borrow()
            try:
                return op_for(conn)(arg)
            finally:
                pool.give_back(conn)

        return op

    def _close_pool(self, pool) -> None:
        if self.driver.is_async:
            self.driver.run(pool.close())
        else:
            pool.close()

    def _reopen(self) -> None:
        """After a per-request or pooled step: the session's own connection again, outside any
        clock."""
        info = self.driver.open(self.endpoint, self.options)
        self.server_pid = info.get("server_pid")

    def _client_ops(self, op, build, clients: int, policy: str) -> tuple[list, list]:
        """One op per client, and the connections opened for them. Several clients run only
        in an async driver's one event loop; persistent clients each get their own
        connection (the session's serves client 0), opened here, before the barrier;
        per-request and pooled ops serve every client."""
        d = self.driver
        if clients == 1 or policy != "persistent":
            return [op] * clients, []
        own, ops, conns = d.conn, [op], []
        for _ in range(clients - 1):
            d.run(d.aopen(self.endpoint, self.options))
            conns.append(d.conn)
            ops.append(build())
        d.attach(own)
        return ops, conns

    def _close_clients(self, conns: list) -> None:
        d = self.driver
        own = d.conn
        for conn in conns:
            d.attach(conn)
            d.run(d.aclose())
        if conns:
            d.attach(own)

    def _loaded(self, ops: list, args, reads: bool, sql: str | None, load: Load, policy: str) -> dict:
        d = self.driver
        before = resource.getrusage(resource.RUSAGE_SELF)
        if d.is_async:
            async def together():  # gathered inside the driver's loop, which its connections belong to
                return await asyncio.gather(*(load_loop(op, args, reads, load, awaits=True, client=k,
                                                        shared_loop=len(ops) > 1) for k, op in enumerate(ops)))

            results = d.run(together())
        else:
            results = [asyncio.run(load_loop(ops[0], args, reads, load, awaits=False))]
        after = resource.getrusage(resource.RUSAGE_SELF)
        if load.latency_file:  # every client's latencies, one after the other
            with open(load.latency_file, "wb") as f:
                for r in results:
                    f.write(r.raw.tobytes())
        histogram = results[0].histogram
        for r in results[1:]:
            histogram.merge(r.histogram)
        n = sum(r.n for r in results)
        answer = {
            "first_op_ns": results[0].first_op_ns, "histogram": histogram.to_json(),
            "late": sum(r.late for r in results), "skipped": sum(r.skipped for r in results),
            "clients": len(results), "per_client": [{"n": r.n, "elapsed_ns": r.elapsed_ns} for r in results],
        }
        # Only a single persistent client's backend is the session's own: the others' pids
        # are not known before the trial, and per-request and pooled backends come and go.
        return self._answer(answer, n, max(r.elapsed_ns for r in results), sum(r.rows for r in results), reads, sql,
                            before, after, own_backend=policy == "persistent" and len(results) == 1)

    def _verify(self, op, args, reads: bool, sql: str | None, dump: int = 0, size: bool = False) -> dict:
        reading, first = Reading(reads, dump, self.driver.result_rows), None
        clock = time.perf_counter_ns
        largest = 0  # with `size`: the largest result, in bytes of the client's native form

        def collect(result: Any) -> None:
            nonlocal first, largest
            if size and reads:
                largest = max(largest, self.driver.result_size(result))
            reading.add(result)
            if first is None:  # the cold start: the first operation, its rows checksummed
                first = clock() - start

        start = clock()
        self.driver.plain_loop(op, args, collect)
        if sql and reading.width:
            self.columns[sql] = reading.width
        return {**reading.answer(len(args)), "first_op_ns": first or 0, **({"result_bytes": largest} if size else {})}

    def _timed(self, op, args, reads: bool, sql: str | None, latency_file: str | None) -> dict:
        lat = array("Q", bytes(8 * len(args)))
        before = resource.getrusage(resource.RUSAGE_SELF)
        elapsed, rows = self.driver.timed_loop(op, args, lat, reads)
        after = resource.getrusage(resource.RUSAGE_SELF)
        if latency_file:
            if sys.byteorder != "little":
                lat.byteswap()
            with open(latency_file, "wb") as f:
                lat.tofile(f)
        answer = {"first_op_ns": lat[0] if len(lat) else 0}
        return self._answer(answer, len(args), elapsed, rows, reads, sql, before, after, own_backend=True)

    def _answer(self, answer: dict, n: int, elapsed: int, rows: int, reads: bool, sql: str | None,
                before, after, own_backend: bool) -> dict:
        """What every timed answer carries: counts, the process's CPU around the loop, values
        read, and the backend that served it."""
        answer.update(n=n, elapsed_ns=elapsed, rows=rows, user_ns=round((after.ru_utime - before.ru_utime) * 1e9),
                      sys_ns=round((after.ru_stime - before.ru_stime) * 1e9))
        if reads and sql in self.columns:
            answer["values"] = rows * self.columns[sql]
        if self.server_pid and own_backend:
            answer["server_pids"] = [self.server_pid]
        return answer


class Reading:
    """What a verification pass read: every value checksummed (or the rows changed, for a
    statement that reads none), the columns, and with ``dump`` the first rows as typed values."""

    def __init__(self, reads: bool, dump: int = 0, rows: Callable[[Any], list] = lambda result: result) -> None:
        self.reads, self.dump, self.rows = reads, dump, rows
        self.checksum, self.changed, self.width, self.values = Checksum(), 0, 0, 0
        self.dumped: list[list[dict]] = []

    def add(self, result: Any) -> None:
        """One operation's result: the rows it read, or the rows it changed."""
        if not self.reads:
            self.changed += result
            return
        result = self.rows(result)
        if result and isinstance(result[0], dict):  # a dict row factory: its values, in column order
            result = [tuple(row.values()) for row in result]
        self.checksum.add_rows(result)
        self.values += sum(map(len, result))  # a load's entities are rows of several tables
        self.dumped.extend([typed(v) for v in row] for row in result[:max(0, self.dump - len(self.dumped))])
        if result and not self.width:
            self.width = len(result[0])

    def answer(self, n: int) -> dict:
        rows = self.checksum.rows if self.reads else self.changed
        return {"n": n, "rows": rows, "values": self.values, "checksum": self.checksum.hexdigest(),
                **({"dump": self.dumped} if self.dump and self.reads else {})}


def check_mode(d: Driver, mode: str) -> None:
    """A mode the driver lacks is unsupported, with the driver's own reason where it gives one."""
    if mode not in d.modes:
        why = d.settings().get(mode, "").removeprefix("unsupported: ")
        raise Unsupported(f"{d.name} has no {mode} mode" + (f": {why}" if why else ""))


def exec_args(d: Driver, sql: str, mode: str, params: list, n: int, dbms: str) -> list:
    """An exec step's n arguments, made before any clock: the statements with their values
    inlined (literal, where the driver does not inline them itself), else its parameters."""
    values = generators.rows(params, n)
    if mode == "literal" and not d.literal_binds:
        return [sqltext.inline(sql, v, dbms) for v in values]
    return d.adapt(values)


# conformance: the reference's generators, checksum and histogram (protocol/vectors)
def generate(msg: dict) -> dict:
    return {"values": [vectors.to_json(v) for v in generators.values(msg["spec"], int(msg["count"]))]}


def checksum(msg: dict) -> dict:
    total = Checksum()
    total.add_rows([[vectors.native(v) for v in row] for row in msg["rows"]])
    return {"checksum": total.hexdigest(), "rows": total.rows}


def histogram(msg: dict) -> dict:
    recorded = Histogram()
    for value in msg["values"]:
        recorded.record(int(value))
    return {"histogram": recorded.to_json()}


def error_answer(kind: str, message: str, sqlstate: str | None = None) -> dict:
    error = {"kind": kind, "message": message.strip().splitlines()[0] if message.strip() else kind}
    if sqlstate:
        error["sqlstate"] = sqlstate
    return {"ok": False, "error": error}


def serve(session, inp: TextIO, out: TextIO) -> None:
    """Answer each message on ``inp`` with ``session.handle``'s answer or ``session.failure``'s
    error, one line each, until ``bye`` (any worker's loop: the Python worker's and the tier's)."""
    for line in inp:
        if not line.strip():
            continue
        op = None
        try:
            msg = json.loads(line)
            op = msg.get("op")
            answer = session.handle(msg)
        except Exception as e:  # the worker answers, never crashes without a word
            answer = session.failure(e)
        out.write(json.dumps(answer) + "\n")
        out.flush()
        if op == "bye":
            return


def failure(e: Exception) -> dict:
    """A protocol error or anything else unforeseen, as an answer (the traceback to the log)."""
    traceback.print_exc()
    if isinstance(e, (ProtocolError, json.JSONDecodeError, KeyError, TypeError, ValueError)):
        return error_answer("protocol", f"{type(e).__name__}: {e}")
    return error_answer("internal", f"{type(e).__name__}: {e}")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].split("/", 1)[0].partition("@")[0] not in DRIVERS:
        print(f"usage: python -m accessbench.pyworker METHOD  (one of {', '.join(DRIVERS)})", file=sys.stderr)
        return 2
    # stdout belongs to the protocol: keep a private copy of it and send everything else
    # any library prints (even from C) to stderr, the worker's log.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    named, _, settings = argv[0].partition("/")
    base, _, version = named.partition("@")
    if version:  # another version of the driver (methods/versions.py): its packages come first
        from ..methods.versions import directory

        sys.path.insert(0, str(directory(base, version)))
    try:
        module, _, name = DRIVERS[base].partition(":")  # "module" (its Driver) or "module:Class"
        driver = getattr(importlib.import_module(module), name or "Driver")()
    except (ImportError, TypeError) as e:  # still answer every message, so the runner can say why
        traceback.print_exc()
        driver = Missing(argv[0], f"driver module not importable: {e}")
    if not isinstance(driver, Missing):
        chosen, why = variant_settings(driver, settings)
        if why:  # a setting silently ignored would measure another method under this one's name
            driver = Missing(argv[0], why)
        elif version and driver.version().split(" ")[0] != version:  # nor another version under this one's
            driver = Missing(argv[0], f"{named}: this worker imported {base}'s driver at {driver.version()}, "
                                      f"not {version} (from {sys.path[0]})")
        else:
            driver.configure(chosen)
            driver.name = argv[0]  # as the runner named it, version and settings included
    serve(Session(driver), sys.stdin, out)
    return 0


def variant_settings(driver: Driver, text: str) -> tuple[dict[str, str], str | None]:
    """``row=dict`` or ``row=dict/prepare=auto`` checked against the driver's variants:
    (the settings, None) or ({}, why not)."""
    chosen: dict[str, str] = {}
    for part in filter(None, text.split("/")):
        name, _, value = part.partition("=")
        values = driver.variants.get(name)
        if values is None:
            known = ", ".join(f"{k}={'|'.join(v)}" for k, v in driver.variants.items()) or "none"
            return {}, f"{driver.name} has no setting {name!r} (its settings: {known})"
        if value not in values:
            return {}, f"{driver.name}/{name} takes {' or '.join(values)}, not {value!r}"
        chosen[name] = value
    return chosen, None


class Missing(Driver):
    """Stands in for a driver whose module cannot be imported: every op says why."""

    def __init__(self, name: str, why: str) -> None:
        self.name, self.why = name, why

    def version(self) -> str:
        raise Unsupported(self.why)

    def open(self, endpoint: dict, options: dict) -> dict:
        raise Unsupported(self.why)
