"""py-psycopg2: psycopg2 binds parameters on the client and always sends simple-protocol
queries, so it has no ``extended`` mode; ``prepared`` uses SQL-level PREPARE/EXECUTE."""

from __future__ import annotations

import itertools

import psycopg2
import psycopg2.extras
import psycopg2.extensions

from ...protocol import sqltext
from ..association import BY_HAND
from ..base import Driver, Op, Unsupported, cursor_scan, cursor_text
from .pg import LIBPQ_READ_ONLY, GetconnPool, connect_kwargs as _connect_kwargs, libpq_version as _libpq, tls_setting

_names = itertools.count(1)


def connect_kwargs(endpoint: dict) -> dict:
    """libpq's keywords for the endpoint, held to what the libpq psycopg2-binary bundles has."""
    return _connect_kwargs(endpoint, psycopg2.extensions.libpq_version())


class Driver(Driver):
    name = "py-psycopg2"
    driver = "psycopg2-binary"
    dbms = ("postgresql",)
    paramstyle = "format"
    batch_style = "executemany (one statement per row) in one transaction per group"
    modes = ("literal", "prepared")
    kinds = (*Driver.kinds, "load")
    db_errors = (psycopg2.Error,)
    has_pool = True

    def version(self) -> str:
        return psycopg2.__version__.split()[0]

    # cursor=dict: rows as dicts (psycopg2.extras.RealDictCursor), as many applications read them.
    variants = {"cursor": ("tuple", "dict")}

    def configure(self, chosen: dict[str, str]) -> None:
        super().configure(chosen)
        if self.setting("cursor") == "dict":  # no load (settings say why)
            self.kinds = tuple(kind for kind in type(self).kinds if kind != "load")

    def settings(self) -> dict[str, str]:
        return {
            "libpq": _libpq(psycopg2.extensions.libpq_version()),
            "cursor_factory": ("psycopg2.extras.RealDictCursor: each row a dict" if self.setting("cursor") == "dict"
                               else "the default cursor: each row a tuple"),
            "tls": tls_setting(psycopg2.extensions.libpq_version()),
            "read_only": LIBPQ_READ_ONLY,
            "autocommit": "True",
            "literal": "execute(text): simple query protocol",
            "extended": "unsupported: psycopg2 interpolates parameters on the client",
            "prepared": "SQL PREPARE once, then EXECUTE name(params) over the simple protocol",
            "cursor": "client-side (buffered)",
            "load": ("unsupported: the joined statement's columns share names (each table's id), which a dict row "
                     "cannot hold apart; py-psycopg2 loads with tuple rows" if self.setting("cursor") == "dict"
                     else BY_HAND + "; cursor.execute(sql, params), psycopg2 interpolating the values into the text "
                                    "on the client, its only way to pass them"),
            "pooled": "psycopg2.pool.SimpleConnectionPool, minconn = maxconn = pool_size per process, opened before "
                      "the start; getconn/putconn inside each operation",
        }

    def sqlstate(self, error: BaseException) -> str | None:
        return getattr(error, "pgcode", None)

    def open(self, endpoint: dict, options: dict) -> dict:
        self.conn = psycopg2.connect(**connect_kwargs(endpoint))
        self.conn.autocommit = True
        self.cur = self._cursor(self.conn)
        self.prepared: list[str] = []
        return {"server_pid": self.conn.get_backend_pid(), "server_version": self.conn.get_parameter_status("server_version")}

    def close(self) -> None:
        self.conn.close()

    def pool(self, endpoint: dict, size: int):
        from psycopg2.pool import SimpleConnectionPool

        pool = SimpleConnectionPool(size, size, **connect_kwargs(endpoint))  # opens all `size` now
        for conn in [pool.getconn() for _ in range(size)]:
            conn.autocommit = True
            pool.putconn(conn)
        return GetconnPool(pool, "closeall")

    def attach(self, conn) -> None:
        self.conn, self.cur, self.prepared = conn, self._cursor(conn), []

    def _cursor(self, conn):
        if self.setting("cursor") == "dict":
            return conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor)
        return conn.cursor()

    def execute(self, sql: str) -> None:
        self.cur.execute(sql)

    def connect_op(self, endpoint: dict) -> Op:
        kwargs = connect_kwargs(endpoint)

        def connect(_):
            psycopg2.connect(**kwargs).close()
            return 0

        return connect

    def _named_rows(self) -> None:
        if self.setting("cursor") == "dict":
            self.dict_rows()

    def scan_op(self, sql: str) -> Op:
        self._named_rows()
        return cursor_scan(self.cur, sql)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        self._named_rows()
        cur = self.cur
        if mode == "extended":
            raise Unsupported("psycopg2 has no extended-protocol path: it interpolates parameters on the client")
        if mode == "literal":
            return cursor_text(cur, reads)
        name = f"ab_{next(_names)}"
        numbered = sqltext.convert(sql, "numeric")
        count = sqltext.count_markers(sql)
        execute = f"EXECUTE {name} ({', '.join(['%s'] * count)})" if count else f"EXECUTE {name}"
        state = {"ready": False}

        def op(args):
            if not state["ready"]:  # prepared once, inside the first operation's time
                cur.execute(f"PREPARE {name} AS {numbered}")
                self.prepared.append(name)
                state["ready"] = True
            cur.execute(execute, args)
            return cur.fetchall() if reads else cur.rowcount

        return op

    def bound(self):
        return self.cursor_bound(self.cur)

    def batch_op(self, sql: str) -> Op:
        cur, sql = self.cur, self.markers(sql)
        return self.in_transaction(lambda group: cur.executemany(sql, group))

    def end_step(self) -> None:
        while self.prepared:
            self.cur.execute(f"DEALLOCATE {self.prepared.pop()}")
