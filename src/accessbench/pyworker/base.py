"""What a driver module implements, and the timed loops they share.

An *op* is one operation of a step: a callable taking one argument (prepared before the
clock starts) and returning the rows it read (a list) or, for statements that read none,
the number of rows it changed (an int). Drivers build ops; the loops time them.
"""

from __future__ import annotations

import asyncio
import sys
import time
from array import array
from typing import Any, Callable, ClassVar

from ..protocol import sqltext
from ..protocol.capabilities import PROCESSES

Op = Callable[[Any], Any]


def cursor_scan(cur, sql: str) -> Op:
    """A DB-API scan: execute, then fetch every row."""
    def scan(_):
        cur.execute(sql)
        return cur.fetchall()

    return scan


def cursor_text(cur, reads: bool) -> Op:
    """A DB-API ``literal`` op: the whole statement text, no parameters (so no %-formatting)."""
    def op(text):
        cur.execute(text)
        return cur.fetchall() if reads else cur.rowcount

    return op


# Every feature a statement's shape can use (protocol/PROTOCOL.md, Shapes), in its order: a
# layer's hello says of each that its API maps it or why not (``Driver.shapes``).
SHAPE_FEATURES = ("select", "get", "where", "star", "compare", "between", "in", "null", "like", "or", "join",
                  "left-join", "aggregate", "group", "order", "limit", "offset", "insert", "update", "increment",
                  "delete", "load-lazy", "load-joined", "load-selectin")


def some_columns(shape: dict) -> list[str]:
    """The columns of a select that reads some of its table's columns, each once, in order: what
    a layer loads part of an entity by (load_only, only()); none for ``SELECT *`` or every
    column, read as whole entities (PROTOCOL.md, Shapes)."""
    columns = list(dict.fromkeys(i["column"] for i in shape["items"]))
    return [] if shape.get("star") or set(columns) >= set(shape["table_columns"]) else columns


def shapes(unsupported: dict[str, str]) -> dict:
    """``capabilities.shapes`` of a layer that maps every feature but ``unsupported`` (each with why)."""
    return {"maps": [f for f in SHAPE_FEATURES if f not in unsupported], "unsupported": dict(unsupported)}


class Unsupported(Exception):
    """The driver cannot do what the step asks, as asked; answered as kind ``unsupported``."""


class Driver:
    """One access method, as the host (host.py) sees it: the host reads and calls what is
    declared here and nothing else. A driver module's ``Driver`` sets the class attributes
    that ``hello`` reports, implements the connection life and one op builder per step kind,
    and overrides the rest where the driver has it (a pool, record-level access, preparation
    to release). A driver whose API is coroutines derives from ``AsyncDriver`` instead.
    """

    name = ""                 # the method name, e.g. "py-psycopg"
    driver = ""               # the distribution / import name whose version is reported
    dbms: tuple[str, ...] = ()
    paramstyle = "qmark"      # how '?' markers are rewritten for this driver
    batch_style = ""          # how a batch step is carried out
    modes = ("literal", "extended", "prepared")
    kinds: ClassVar[tuple[str, ...]] = ("connect", "scan", "exec", "batch")  # the step kinds it has ops for
    literal_binds: ClassVar[bool] = False
    """True for a layer over a driver that inlines bound values into the text on the client
    (mysqlclient): its ``literal`` op takes the values, which the layer binds and the driver
    inlines, so the server receives literal SQL as the bare driver's ``literal`` sends it."""
    deviations: ClassVar[dict[str, dict[str, str]]] = {}
    """``capabilities.deviations`` in ``hello``: per DBMS, the column types (as the DBMS names
    them) whose values the method reads otherwise than the protocol's canonical form, and how —
    what a mismatch on such a column will say. Conformance leaves those columns out of its
    check of every type, and says so (ConnectorX reads every numeric at scale 10)."""
    sqlstates: ClassVar[str | None] = None
    """``capabilities.sqlstate`` in ``hello``: None when every ``db`` error carries the DBMS's
    SQLSTATE where it gives one; ``"none"`` for a reader whose errors never carry one
    (ConnectorX raises its errors as text)."""
    db_errors: tuple[type[BaseException], ...] = ()
    """The driver's database errors: a step that raises one is rolled back (``recover``) and
    answered as kind ``db`` with ``sqlstate(error)``."""

    concurrency: ClassVar[str] = PROCESSES
    """``capabilities.concurrency`` in ``hello``: how the worker drives the clients of a loaded
    step. ``PROCESSES`` (the default, and the only value for a synchronous driver, under the
    GIL): one client per worker process, and the runner starts C workers for C clients. An
    async driver may instead drive every client on its one event loop, and says how in words
    (py-asyncpg: ``"async tasks (…)"``)."""

    is_async: ClassVar[bool] = False
    """False: ops are plain functions, called in a plain loop. True only for ``AsyncDriver``:
    ops and the pool's methods are coroutine functions, and the host also uses ``run``,
    ``aopen`` and ``aclose``. The host branches on this, never on the class."""

    has_pool: ClassVar[bool] = False
    """True when the driver implements ``pool`` and ``attach`` (the runtime's usual pool): only
    then does ``hello`` list the ``pooled`` connection policy."""

    shape: dict | None = None
    """The step statement's shape as the runner sent it (protocol: ``shape``), set before each
    op is built; None for a statement of no shape. A layer builds its statement from it; a
    driver reads it only for a load step (the parents' table: its columns and key)."""

    default_api: ClassVar[str | None] = None
    """What ``api`` is before any op of a step is built: None; ``"raw"`` for a layer whose API
    is SQL text (polars' read_database), which runs every statement that way."""

    api: str | None = None
    """A layer's: ``"raw"`` once it has built an op that runs the step's statement through its
    raw-SQL API (a statement of no shape, a table it does not map) rather than its builder; the
    host answers it beside the figures (protocol: ``api``). Reset to ``default_api`` by the host
    before each step's ops are built."""

    counter: Any = None
    """During a verification pass only: the pass's ``Statements`` (pyworker/association.py),
    counting the statements it sends, from ``count_statements`` until ``stop_counting``; None
    otherwise, so that ops built for a timed loop count nothing."""

    conn: Any = None
    """The connection the ops built next run on, the driver's own connection object: set by
    ``open`` (``aopen``) and by ``attach``; None before the first ``open``. The host reads it
    to keep hold of a connection while it opens others (an async driver's extra clients, a
    per-request op) and hands it back with ``attach``; an ``aopen`` sets it after its last
    await, so that on a shared event loop it is the connection this client opened."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A driver's declarations must match what it implements: the host trusts them."""
        super().__init_subclass__(**kwargs)
        where = f"{cls.__module__}.{cls.__name__}"
        if cls.has_pool != (cls.pool is not Driver.pool):
            raise TypeError(f"{where}: has_pool = True and a pool() of its own go together")
        if cls.has_pool and cls.attach is Driver.attach:
            raise TypeError(f"{where}: has_pool = True needs attach() as well as pool()")
        if cls.concurrency != PROCESSES and not cls.is_async:
            raise TypeError(f"{where}: concurrency = {cls.concurrency!r}, but only an AsyncDriver drives "
                            "several clients in one process")

    def shapes(self) -> dict | None:
        """``capabilities.shapes`` in ``hello`` (a layer's): ``{"maps": [feature, …],
        "unsupported": {feature: why}}`` over every feature of suite/shape.py's FEATURES; None
        for a driver, and for a layer whose API is SQL text (every answer then says ``api``
        raw)."""
        return None

    def version(self) -> str:
        from importlib.metadata import version

        return version(self.driver)

    def settings(self) -> dict[str, str]:
        """Every setting that changes behaviour, pinned, in words a reader can check."""
        return {}

    # Settings a method can be named with, as the other languages' methods are
    # (py-psycopg/row=dict): each setting's values, its default first. The catalog lists the
    # named variants; the host checks a name against these before ``configure``.
    variants: dict[str, tuple[str, ...]] = {}

    def configure(self, chosen: dict[str, str]) -> None:
        """Take the method name's settings (already checked); called before anything else.
        The method's name is then the variant's, as its hello says."""
        self.chosen = {k: values[0] for k, values in self.variants.items()} | chosen
        if chosen:
            self.name = type(self).name + "".join(f"/{k}={v}" for k, v in chosen.items())

    def setting(self, name: str) -> str:
        return getattr(self, "chosen", {}).get(name) or self.variants[name][0]

    def sqlstate(self, error: BaseException) -> str | None:
        return getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)

    # connection life
    def open(self, endpoint: dict, options: dict) -> dict:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def execute(self, sql: str) -> None:
        """Run a statement outside any measurement (BEGIN/COMMIT, clean-up)."""
        raise NotImplementedError

    # ops, one per step kind
    def connect_op(self, endpoint: dict) -> Op:
        raise NotImplementedError

    def scan_op(self, sql: str) -> Op:
        raise NotImplementedError

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        """``sql`` is in the neutral form (``?`` markers; see ``markers``); for ``literal``
        the op's argument is the whole statement text with values inlined."""
        raise NotImplementedError

    def batch_op(self, sql: str) -> Op:
        """The op's argument is a list of parameter tuples; it returns rows written."""
        raise NotImplementedError

    def record_op(self, kind: str, record: dict) -> Op:
        """Record-level access (mode ``record``): a scan reads every record of
        ``record["table"]``; an exec op reads the records whose ``record["index"]`` key equals
        its argument (the key values as SQL literals, comma separated)."""
        raise Unsupported(f"{self.name} has no record-level access")

    def dict_rows(self) -> None:
        """The driver reads rows as dicts: a dict holds one value per column name, so a result
        whose columns repeat a name (a join reading each table's id) cannot be read so, and is
        said rather than misread."""
        items = (self.shape or {}).get("items") or []
        names = [i.get("as") or i.get("column") or i.get("fn") for i in items]
        if len(set(names)) != len(names):
            raise Unsupported("the result's columns repeat a name (each joined table's), which a dict row cannot "
                              "hold apart")

    def count_statements(self, kind: str):
        """A verification pass of a ``kind`` step is about to build its ops: start counting the
        statements it sends and return the counter (a ``Statements``), or None where this method
        does not count them. A driver counts the statements of its load ops, in their own code
        (``load_op``); a layer overrides this to install its own hook, which ``stop_counting``
        removes."""
        if kind != "load":
            return None
        from .association import Statements

        self.counter = Statements()
        return self.counter

    def stop_counting(self) -> None:
        """The verification pass is over: no op built from now on counts."""
        self.counter = None

    def load_op(self, sql: str, load: dict) -> Op:
        """A ``load`` step (protocol: Loading associations): a driver runs the hand-written
        statements the message carries, by the step's strategy (pyworker/association.py), each
        through ``bound``. A driver that has ``bound`` lists ``load`` in ``kinds``."""
        from .association import by_hand

        return by_hand(self.bound(), self.markers, sql, load, self.shape, self.counter)

    @staticmethod
    def cursor_bound(cur) -> Callable[[str, Any], list]:
        """``bound`` of a DB-API driver whose one cursor runs and fetches (execute, fetchall)."""
        def query(sql, params):
            cur.execute(sql, params)
            return cur.fetchall()

        return query

    def bound(self) -> Callable[[str, Any], list]:
        """The driver's bound execution, as its ``extended`` mode runs a statement: a function
        of (a statement with the driver's markers, its parameters) → the rows read."""
        raise Unsupported(f"{self.name} has no load steps")

    def result_rows(self, result: Any) -> list:
        """An op's result as a list of rows of Python values, for the verification pass
        (untimed). Row drivers' ops return rows already; a columnar method's op returns its
        native columnar form (an Arrow table, a data frame: a value is read once it is there,
        and ``len`` counts its rows), which this turns into rows to checksum."""
        return result

    def result_size(self, result: Any) -> int:
        """The bytes an op's result occupies in the client's native form (a verification
        pass asked for ``size``): for rows, the list, its tuples and their values as Python
        objects (each counted where it appears: an upper bound)."""
        size = sys.getsizeof(result)
        for row in result:
            size += sys.getsizeof(row) + sum(map(sys.getsizeof, row.values() if isinstance(row, dict) else row))
        return size

    def markers(self, sql: str) -> str:
        """The neutral statement with the driver's own parameter markers."""
        return sqltext.convert(sql, self.paramstyle)

    def adapt(self, args: list[tuple]) -> list:
        """Turn generated parameter tuples into what the op takes (before the clock)."""
        return args

    # the pooled policy: the driver's usual pool, and ops built on a borrowed connection
    def pool(self, endpoint: dict, size: int):
        """A filled pool of ``size`` connections with ``borrow()``, ``give_back(conn)`` and
        ``close()`` (coroutines ``borrow``/``give_back``/``close`` for an async driver).
        Implement it together with ``attach`` and set ``has_pool = True``."""
        raise Unsupported(f"{self.name} has no pool of its own")

    def attach(self, conn) -> None:
        """Make ``conn`` (a borrowed connection, or one the host kept from ``conn``) the
        driver's ``conn`` for the ops built next."""
        raise Unsupported(f"{self.name} has no pool of its own")

    def end_step(self) -> None:
        """Release what a step made (prepared statements), outside the measurement."""

    def recover(self) -> None:
        """After a failed step: leave no transaction open on the worker's connection."""
        try:
            self.execute("ROLLBACK")
        except Exception:  # nothing was open
            pass

    def in_transaction(self, write_group: Callable[[list], None]) -> Op:
        """A batch op: one group of rows written inside one transaction."""
        execute = self.execute

        def batch(group):
            execute("BEGIN")
            write_group(group)
            execute("COMMIT")
            return len(group)

        return batch

    # loops
    def with_commits(self, op: Op, every: int, total: int) -> Op:
        """Group ``every`` ops into one transaction: BEGIN before the first, COMMIT after the
        last, both inside the timing of those ops."""
        done = 0
        execute = self.execute

        def committing(arg):
            nonlocal done
            if done % every == 0:
                execute("BEGIN")
            result = op(arg)
            done += 1
            if done % every == 0 or done == total:
                execute("COMMIT")
            return result

        return committing

    def timed_loop(self, op: Op, args: list, lat: array, reads: bool) -> tuple[int, int]:
        """Run every op, recording each one's nanoseconds; returns (elapsed_ns, rows).

        One clock read per op: each latency runs from the end of the previous op, so the
        latencies add up to the elapsed time exactly.
        """
        clock = time.perf_counter_ns
        rows = 0
        start = prev = clock()
        if reads:
            for i, arg in enumerate(args):
                rows += len(op(arg))
                now = clock()
                lat[i] = now - prev
                prev = now
        else:
            for i, arg in enumerate(args):
                rows += op(arg)
                now = clock()
                lat[i] = now - prev
                prev = now
        return prev - start, rows

    def plain_loop(self, op: Op, args: list, collect: Callable[[Any], None]) -> None:
        """The untimed verification pass: every op's result goes to ``collect``."""
        for arg in args:
            collect(op(arg))


class AsyncDriver(Driver):
    """A driver whose API is coroutines: ops are async and the loops run inside one event
    loop turn, so no loop start-up sits inside a measurement. It implements ``aopen``,
    ``aclose`` and ``aexecute``; ``open``, ``close`` and ``execute`` run them on its loop."""

    is_async = True

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coro):
        """Run a coroutine on the driver's one event loop, which its connections belong to."""
        return self.loop.run_until_complete(coro)

    def with_commits(self, op: Op, every: int, total: int) -> Op:
        done = 0
        execute = self.aexecute

        async def committing(arg):
            nonlocal done
            if done % every == 0:
                await execute("BEGIN")
            result = await op(arg)
            done += 1
            if done % every == 0 or done == total:
                await execute("COMMIT")
            return result

        return committing

    async def aopen(self, endpoint: dict, options: dict) -> dict:
        """``open`` as a coroutine; sets ``conn`` after its last await."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close ``conn``."""
        raise NotImplementedError

    def open(self, endpoint: dict, options: dict) -> dict:
        return self.run(self.aopen(endpoint, options))

    def close(self) -> None:
        self.run(self.aclose())

    async def aexecute(self, sql: str) -> None:
        raise NotImplementedError

    def execute(self, sql: str) -> None:
        self.run(self.aexecute(sql))

    def timed_loop(self, op: Op, args: list, lat: array, reads: bool) -> tuple[int, int]:
        async def loop() -> tuple[int, int]:
            clock = time.perf_counter_ns
            rows = 0
            start = prev = clock()
            if reads:
                for i, arg in enumerate(args):
                    rows += len(await op(arg))
                    now = clock()
                    lat[i] = now - prev
                    prev = now
            else:
                for i, arg in enumerate(args):
                    rows += await op(arg)
                    now = clock()
                    lat[i] = now - prev
                    prev = now
            return prev - start, rows

        return self.run(loop())

    def plain_loop(self, op: Op, args: list, collect: Callable[[Any], None]) -> None:
        async def loop() -> None:
            for arg in args:
                collect(await op(arg))

        self.run(loop())
