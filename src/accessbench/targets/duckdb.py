"""DuckDB: a database file in the run's work directory, reached in process.

A DuckDB file has one writer or many readers, never both: a process that opens it read-write
locks every other process out. Each method's worker is its own process, and a run keeps
several open at once (one per method, and one per client under load), so the workers open the
file read-only and the runner holds no connection while they run: it opens one per use,
read-write to create and load the tables (before any worker starts), read-only to check.
A step that writes is refused before it reaches a worker (``refuses``): it is measured on the
other targets. Its description (``DUCKDB``) is at the end.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import shutil
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable

from .base import Target, TargetUnavailable, column_ddl, index_ddl
from .registry import DBMS, Conformance, DBMSLimits, register

if TYPE_CHECKING:
    from ..suite.model import Step, Table

_TYPES = {"text": "VARCHAR", "bytes": "BLOB", "double": "DOUBLE"}
READ_ONLY = ("DuckDB: a file has one writer or many readers, and every method's worker is a process of its own "
             "that opens it read-only; writes are measured on the other targets")


def _duckdb_type(neutral: str) -> str:
    base = neutral.split("(")[0]
    if base == "numeric":
        return "DECIMAL" + neutral[len("numeric"):]
    if base in ("char", "varchar"):
        return "VARCHAR"  # DuckDB keeps no declared length, and pads no char(n)
    return _TYPES.get(neutral, neutral.upper())


def module():
    try:
        import duckdb
    except ImportError:
        raise TargetUnavailable("duckdb: the duckdb Python package is not installed (make setup installs it)") from None
    return duckdb


class DuckDBTarget(Target):
    name = "duckdb"
    dbms = "duckdb"
    managed = True
    paths = ("inproc",)

    def __init__(self) -> None:
        self.file: str | None = None
        self.timeout: float | None = None

    def bound(self, seconds: float) -> None:
        self.timeout = seconds

    @contextmanager
    def _connection(self, read_only: bool):
        """A connection for one use; past --timeout its statement is interrupted."""
        conn = module().connect(self.file, read_only=read_only)
        timer = threading.Timer(self.timeout, conn.interrupt) if self.timeout else None
        if timer:
            timer.daemon = True
            timer.start()
        try:
            yield conn
        finally:
            if timer:
                timer.cancel()
            conn.close()

    def start(self, workdir: str) -> None:
        module()
        self.file = os.path.join(workdir, "accessbench.duckdb")

    def stop(self) -> None:
        if self.file:
            for suffix in ("", ".wal"):
                if os.path.exists(self.file + suffix):
                    os.remove(self.file + suffix)

    def load_data(self, file: str) -> None:
        """The user's database file copied into the work directory: the user's own is only read."""
        shutil.copyfile(file, self.file)

    def refuses_statement(self, sql: str, params: tuple) -> str | None:
        duckdb = module()
        with self._connection(read_only=True) as conn:
            try:
                conn.execute("EXPLAIN " + sql, list(params)).fetchall()
            except duckdb.Error as e:
                return str(e).splitlines()[0]
        return None

    def endpoint(self, path: str) -> dict[str, Any]:
        return {"dbms": "duckdb", "file": self.file, "read_only": True}

    def refuses_step(self, step: Step) -> str | None:
        return READ_ONLY if step.writes or step.kind == "batch" else None

    def describe(self) -> dict[str, Any]:
        duckdb = module()
        with duckdb.connect() as conn:  # in memory: what a worker's connection gets by default
            threads, memory = conn.execute("SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()
        return {
            "server_version": duckdb.__version__,
            "settings": {"threads": threads, "memory_limit": memory,
                         "access_mode": "workers READ_ONLY (one writer or many readers per file)"},
        }

    def create(self, tables: list[Table]) -> None:
        with self._connection(read_only=False) as conn:
            for table in tables:
                conn.execute(f"DROP TABLE IF EXISTS {table.name}")
                conn.execute(column_ddl(table, _duckdb_type))
                for ddl in index_ddl(table):
                    conn.execute(ddl)

    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        # DuckDB's own appender: rows buffered in its column format, written at each flush
        with self._connection(read_only=False) as conn:
            appender = conn.appender(table.name)
            batch: list[tuple] = []
            for row in rows:
                batch.append(row)
                if len(batch) == 100_000:
                    appender.append_rows(batch)
                    batch.clear()
            appender.append_rows(batch)
            appender.flush()
            conn.execute(f"ANALYZE {table.name}")
            conn.execute("CHECKPOINT")  # into the file, not its write-ahead log, before readers open it

    def execute(self, sql: str) -> None:
        with self._connection(read_only=False) as conn:
            conn.execute(sql)

    def changes(self, sql: str, params: tuple = ()) -> int:
        with self._connection(read_only=False) as conn:
            return conn.execute(sql, list(params)).fetchone()[0]

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._connection(read_only=True) as conn:
            return conn.execute(sql, list(params)).fetchall()

    @contextmanager
    def reading(self):
        """One read-only connection for the run of reads (opening the file costs about 10 ms;
        a reference's reads are hundreds). No worker writes the file meanwhile."""
        with self._connection(read_only=True) as conn:
            yield lambda sql, params=(): conn.execute(sql, list(params)).fetchall()


DUCKDB = register(DBMS(
    name="duckdb",
    title="DuckDB",
    managed=DuckDBTarget,
    embedded=True,
    # DECIMAL(p, s): p at most 38; lengths of VARCHAR are not kept.
    limits=DBMSLimits("DuckDB's", identifier=None, char=None, varchar=None, precision=38, scale=38, columns=None,
                      markers=None),
    conformance=Conformance(
        # No REAL: DuckDB's clients give a float32 widened, not PostgreSQL's shortest text for it.
        types_ddl="CREATE TABLE conf_types (i2 SMALLINT, i4 INTEGER, i8 BIGINT, num DECIMAL(12,3), f8 DOUBLE, vc VARCHAR,"
                  " ts TIMESTAMP, d DATE, b BOOLEAN, bl BLOB)",
        types_rows=(
            (32767, -2147483648, 9223372036854775807, decimal.Decimal("12345.670"), 0.1, "héllo wörld ✓ 日本語 \\ ok",
             dt.datetime(2001, 2, 28, 23, 59, 59, 123456), dt.date(2000, 2, 29), True, b"\x00\xff\x10\\"),
            (-32768, 0, -9223372036854775808, decimal.Decimal("-0.001"), -2.5e-300, "", dt.datetime(1969, 12, 31, 23, 59, 59),
             dt.date(1969, 1, 1), False, b""),
            (None,) * 10,
        ),
    ),
))
