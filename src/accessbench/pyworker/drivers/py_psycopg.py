"""py-psycopg: psycopg 3, with its automatic preparation switched off so the mode decides."""

from __future__ import annotations

import psycopg

from ..base import Driver, Op
from .pg import connect_kwargs, libpq_version as _libpq


class Driver(Driver):
    name = "py-psycopg"
    driver = "psycopg"
    dbms = ("postgresql",)
    paramstyle = "format"
    batch_style = "executemany (pipeline mode) in one transaction per group"
    db_errors = (psycopg.Error,)

    def settings(self) -> dict[str, str]:
        return {
            "implementation": psycopg.pq.__impl__,
            "libpq": _libpq(psycopg.pq.version()),
            "sslmode": "the target's (disable on managed servers)",
            "prepare_threshold": "None (no automatic preparation)",
            "literal": "execute(text) without params: simple query protocol",
            "extended": "execute(sql, params, prepare=False): PQexecParams, parsed every time",
            "prepared": "execute(sql, params, prepare=True): prepared once per connection, then PQexecPrepared",
            "cursor": "client-side (buffered), text result format",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        self.kwargs = connect_kwargs(endpoint)
        self.conn = psycopg.connect(**self.kwargs, autocommit=True, prepare_threshold=None)
        self.cur = self.conn.cursor()
        return {
            "server_pid": self.conn.info.backend_pid,
            "server_version": self.conn.info.parameter_status("server_version"),
        }

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str) -> None:
        self.cur.execute(sql, prepare=False)

    def connect_op(self, endpoint: dict) -> Op:
        kwargs = connect_kwargs(endpoint)

        def connect(_):
            psycopg.connect(**kwargs, autocommit=True).close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        cur = self.cur

        def scan(_):
            cur.execute(sql, prepare=False)
            return cur.fetchall()

        return scan

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        cur = self.cur
        if mode == "literal":
            def op(text):
                cur.execute(text, prepare=False)
                return cur.fetchall() if reads else cur.rowcount
        else:
            prepare, sql = mode == "prepared", self.markers(sql)

            def op(args):
                cur.execute(sql, args, prepare=prepare)
                return cur.fetchall() if reads else cur.rowcount

        return op

    def batch_op(self, sql: str) -> Op:
        conn, cur, sql = self.conn, self.cur, self.markers(sql)

        def batch(group):
            with conn.transaction():
                cur.executemany(sql, group)
            return len(group)

        return batch
