"""SQLite: a database file in the run's work directory, reached in process; its description
(``SQLITE``) at the end."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
import urllib.parse
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable

from ..protocol.sqltext import as_sqlite
from .base import Target, column_ddl, index_ddl
from .registry import DBMS, Conformance, DBMSLimits, register

if TYPE_CHECKING:
    from ..suite.model import Table

_TYPES = {"timestamp": "TEXT", "date": "TEXT", "boolean": "INTEGER", "bytes": "BLOB", "double": "REAL",
          # SQLite has no exact decimal: a NUMERIC column keeps 12.50 as a REAL but 12.00 as an
          # INTEGER, so one column holds two types, which a columnar reader (one type per
          # column) widens to float and a row reader does not. REAL keeps every value a REAL.
          "numeric": "REAL"}


def _sqlite_type(neutral: str) -> str:
    return _TYPES.get(neutral.split("(")[0], neutral.upper())


class SQLiteTarget(Target):
    name = "sqlite"
    dbms = "sqlite"
    managed = True
    paths = ("inproc",)

    def __init__(self) -> None:
        self.file: str | None = None
        self.conn: sqlite3.Connection | None = None
        self.timeout: float | None = None
        self.deadline = float("inf")  # loading and creating tables are not bounded

    def bound(self, seconds: float) -> None:
        # SQLite runs in this process: a progress handler interrupts a statement past its time
        self.timeout = seconds
        self.conn.set_progress_handler(lambda: int(time.monotonic() > self.deadline), 10_000)

    @contextmanager
    def _bounded(self):
        self.deadline = time.monotonic() + (self.timeout or float("inf"))
        try:
            yield
        finally:
            self.deadline = float("inf")

    def start(self, workdir: str) -> None:
        self.file = os.path.join(workdir, "accessbench.sqlite")
        self.conn = sqlite3.connect(self.file, isolation_level=None)
        # WAL is a property of the file, so every connection gets it; it is the journal
        # mode applications are told to use.
        self.conn.execute("PRAGMA journal_mode=WAL")

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.file:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(self.file + suffix):
                    os.remove(self.file + suffix)

    def load_data(self, file: str) -> None:
        """The user's database file copied into the work directory (the user's own is only
        read), then opened read-only, as every worker opens it."""
        self.conn.close()
        shutil.copyfile(file, self.file)
        self.conn = sqlite3.connect(f"file:{urllib.parse.quote(self.file)}?mode=ro", uri=True, isolation_level=None)
        if self.timeout is not None:
            self.bound(self.timeout)

    def refuses_statement(self, sql: str, params: tuple) -> str | None:
        try:
            with self._bounded():
                self.conn.execute("EXPLAIN QUERY PLAN " + sql, as_sqlite(params)).fetchall()
        except sqlite3.Error as e:
            return str(e)
        return None

    def endpoint(self, path: str) -> dict[str, Any]:
        return {"dbms": "sqlite", "file": self.file, **({"read_only": True} if self.existing else {})}

    def describe(self) -> dict[str, Any]:
        pragma = lambda name: self.conn.execute(f"PRAGMA {name}").fetchone()[0]  # noqa: E731
        return {
            "server_version": sqlite3.sqlite_version,
            "settings": {
                "journal_mode": pragma("journal_mode"),
                "synchronous": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(pragma("synchronous")),
                "page_size": pragma("page_size"),
                "cache_size": pragma("cache_size"),
            },
        }

    def create(self, tables: list[Table]) -> None:
        for table in tables:
            self.conn.execute(f"DROP TABLE IF EXISTS {table.name}")
            self.conn.execute(column_ddl(table, _sqlite_type))
            for ddl in index_ddl(table):
                self.conn.execute(ddl)

    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        marks = ", ".join("?" * len(table.columns))
        names = ", ".join(c.name for c in table.columns)
        self.conn.execute("BEGIN")
        try:
            self.conn.executemany(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", map(as_sqlite, rows))
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        self.conn.execute(f"ANALYZE {table.name}")

    def execute(self, sql: str) -> None:
        with self._bounded():
            self.conn.execute(sql)

    def changes(self, sql: str, params: tuple = ()) -> int:
        with self._bounded():
            return self.conn.execute(sql, as_sqlite(params)).rowcount

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._bounded():
            return self.conn.execute(sql, as_sqlite(params)).fetchall()


SQLITE = register(DBMS(
    name="sqlite",
    title="SQLite",
    managed=SQLiteTarget,
    embedded=True,
    # Declared lengths mean nothing to SQLite; SQLITE_MAX_COLUMN and (since 3.32)
    # SQLITE_MAX_VARIABLE_NUMBER are its compiled-in defaults.
    limits=DBMSLimits("SQLite's", identifier=None, char=None, varchar=None, precision=None, scale=None,
                      columns=2000, markers=32_766),
    conformance=Conformance(
        # Only the storage classes SQLite has; its timestamps are text. BIGINT, not INTEGER, for
        # 64-bit values: the SQLite ODBC driver reads INTEGER columns as 32-bit SQL_INTEGER and
        # truncates larger values.
        types_ddl="CREATE TABLE conf_types (i4 INTEGER, i8 BIGINT, f8 REAL, vc TEXT, ts TEXT, by BLOB)",
        types_rows=(
            (2147483647, 9223372036854775807, 0.1, "héllo wörld ✓ 日本語", "2001-02-28 23:59:59.123456", b"\x00\xff\x10"),
            (-2147483648, -9223372036854775808, -2.5e-300, "", "1969-12-31 23:59:59", b""),
            (None,) * 6,
        ),
    ),
))
