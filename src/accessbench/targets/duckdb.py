"""DuckDB: a database file in the run's work directory, reached in process.

A DuckDB file has one writer or many readers, never both: a process that opens it read-write
locks every other process out. Each method's worker is its own process, and a run keeps
several open at once (one per method, and one per client under load), so the workers open the
file read-only and the runner holds no connection while they run: it opens one per use,
read-write to create and load the tables (before any worker starts), read-only to check.
A step that writes is refused before it reaches a worker (``refuses``): it is measured on the
other targets.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Any, Iterable

from ..suite.model import Step, Table
from .base import Target, TargetUnavailable, column_ddl, index_ddl

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
