"""py-sqlite3: the standard library's sqlite3 module, in process."""

from __future__ import annotations

import sqlite3

from ...protocol.sqltext import as_sqlite
from ..association import BY_HAND
from ..base import Driver, Op
from .sqlite import database, read_only_setting

# The module keeps a per-connection cache of prepared statements keyed by SQL text. With it
# off every execute parses again (extended); with it on, repeating one statement reuses
# its prepared form (prepared).
STATEMENT_CACHE = 128


class Driver(Driver):
    name = "py-sqlite3"
    driver = "sqlite3"
    dbms = ("sqlite",)
    paramstyle = "qmark"
    batch_style = "executemany in one transaction per group"
    kinds = (*Driver.kinds, "load")
    db_errors = (sqlite3.Error,)

    def version(self) -> str:
        return f"{sqlite3.sqlite_version} (module {getattr(sqlite3, 'version', 'stdlib')})"

    def settings(self) -> dict[str, str]:
        return {
            "isolation_level": "None (autocommit; BEGIN/COMMIT explicit)",
            "literal/extended": "cached_statements=0: sqlite3_prepare_v2 on every execute",
            "prepared": f"cached_statements={STATEMENT_CACHE}: one prepared statement reused",
            "timestamps": "bound and read as ISO text",
            "read_only": read_only_setting("sqlite3.connect(uri, uri=True)"),
            "load": BY_HAND + "; execute(sql, params) on the cached_statements=0 connection, as extended",
        }

    def sqlstate(self, error: BaseException) -> str | None:
        return getattr(error, "sqlite_errorname", None)

    def _connect(self, cache: int) -> sqlite3.Connection:
        return sqlite3.connect(self.file, isolation_level=None, cached_statements=cache, check_same_thread=False,
                               uri=self.uri)

    def open(self, endpoint: dict, options: dict) -> dict:
        self.file, self.uri = database(endpoint)
        self.conn = self._connect(0)
        self.cached = self._connect(STATEMENT_CACHE)
        self.active = self.conn  # the connection the current step's statements use
        return {"server_version": sqlite3.sqlite_version}

    def close(self) -> None:
        self.conn.close()
        self.cached.close()

    def execute(self, sql: str) -> None:
        # BEGIN/COMMIT (commit_every) and ROLLBACK must reach the connection the step runs on.
        self.active.execute(sql)

    def end_step(self) -> None:
        self.active = self.conn

    def connect_op(self, endpoint: dict) -> Op:
        file, uri = database(endpoint)

        def connect(_):
            sqlite3.connect(file, isolation_level=None, uri=uri).close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        conn = self.conn
        return lambda _: conn.execute(sql).fetchall()

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        if mode == "literal":
            conn = self.conn
            if reads:
                return lambda text: conn.execute(text).fetchall()
            return lambda text: conn.execute(text).rowcount
        conn = self.active = self.cached if mode == "prepared" else self.conn
        sql = self.markers(sql)
        if reads:
            return lambda args: conn.execute(sql, args).fetchall()
        return lambda args: conn.execute(sql, args).rowcount

    def bound(self):
        conn = self.conn
        return lambda sql, params: conn.execute(sql, params).fetchall()

    def batch_op(self, sql: str) -> Op:
        conn, sql = self.conn, self.markers(sql)
        return self.in_transaction(lambda group: conn.executemany(sql, group))

    def adapt(self, args: list[tuple]) -> list:
        # Timestamps, dates and decimals are stored as text, as the data loader writes them.
        return [as_sqlite(row) for row in args]
