"""py-psycopg: psycopg 3, with its automatic preparation switched off so the mode decides."""

from __future__ import annotations

import psycopg
import psycopg.rows

from ...protocol.checksum import float4_value
from ..association import BY_HAND
from ..base import Driver, Op, Unsupported
from .pg import LIBPQ_READ_ONLY, GetconnPool, connect_kwargs as _connect_kwargs, libpq_version as _libpq, tls_setting

NEVER = 2**62  # a prepare_threshold no statement is executed that often
FLOAT4_OID = 700
COPY_SETTING = ("COPY (statement) TO STDOUT (FORMAT {format}), every value decoded by psycopg's loader for its column's "
                "type (Copy.set_types, the types described before the clock), rows read with Copy.rows(); scans only "
                "(exec steps that read rows: unsupported)")


def connect_kwargs(endpoint: dict) -> dict:
    """libpq's keywords for the endpoint, held to what psycopg's own libpq has."""
    return _connect_kwargs(endpoint, psycopg.pq.version())


class Driver(Driver):
    name = "py-psycopg"
    driver = "psycopg"
    dbms = ("postgresql",)
    paramstyle = "format"
    batch_style = "executemany (pipeline mode) in one transaction per group"
    kinds = (*Driver.kinds, "load")
    db_errors = (psycopg.Error,)
    has_pool = True
    # row=dict: rows as dicts (psycopg.rows.dict_row), as many applications read them;
    # prepare=auto: psycopg's own automatic preparation (a statement executed 5 times is
    # prepared), its default, which a harness that leaves psycopg as it comes measures.
    # scan=copy-binary / copy-text: a scan reads its rows by COPY (…) TO
    # STDOUT in that format, each value decoded by psycopg's loader for the column's type.
    variants = {"row": ("tuple", "dict"), "prepare": ("off", "auto"), "scan": ("query", "copy-binary", "copy-text")}

    def configure(self, chosen: dict[str, str]) -> None:
        super().configure(chosen)
        if self.setting("scan") != "query":  # a scan variant: its statements are py-psycopg's
            self.modes = ()
        if self.setting("scan") != "query" or self.setting("row") == "dict":  # no load (settings say why)
            self.kinds = tuple(kind for kind in type(self).kinds if kind != "load")

    def settings(self) -> dict[str, str]:
        settings = self._settings()
        if self.setting("scan") != "query":
            for mode in ("literal", "extended", "prepared"):
                settings[mode] = f"unsupported: {self.name} measures scans; its statements are py-psycopg's"
            settings["load"] = f"unsupported: {self.name} measures scans; its loads are py-psycopg's"
        elif self.setting("row") == "dict":
            settings["load"] = ("unsupported: the joined statement's columns share names (each table's id), which "
                                "a dict row cannot hold apart; py-psycopg loads with tuple rows")
        return settings

    def _settings(self) -> dict[str, str]:
        auto = self.setting("prepare") == "auto"
        return {
            "implementation": psycopg.pq.__impl__,
            "libpq": _libpq(psycopg.pq.version()),
            "tls": tls_setting(psycopg.pq.version()),
            "read_only": LIBPQ_READ_ONLY,
            "prepare_threshold": ("5 (psycopg's default: automatic preparation after 5 executions of a statement)"
                                  if auto else "never reached (no automatic preparation; not None, which would "
                                  "disable prepare=True as well)"),
            "literal": "execute(text) without params: simple query protocol",
            "extended": ("execute(sql, params): PQexecParams until psycopg prepares the statement itself, after 5 "
                         "executions" if auto else "execute(sql, params, prepare=False): PQexecParams, parsed every time"),
            "prepared": "execute(sql, params, prepare=True): prepared once per connection, then PQexecPrepared",
            "cursor": "client-side (buffered), text result format",
            "scan": {"query": "the statement itself, its rows fetched (fetchall)",
                     "copy-binary": COPY_SETTING.format(format="binary"),
                     "copy-text": COPY_SETTING.format(format="text")}[self.setting("scan")],
            "load": BY_HAND + ("; execute(sql, params), prepared by psycopg itself after 5 executions" if auto
                               else "; execute(sql, params, prepare=False)"),
            "row factory": "dict_row: each row a dict" if self.setting("row") == "dict" else "tuple_row (the default)",
            "pooled": "psycopg_pool.ConnectionPool, min_size = max_size = pool_size per process, filled before the "
                      "start; no check on borrow, no lifetime or idle limit; getconn/putconn inside each operation",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        self.kwargs = connect_kwargs(endpoint)
        self.conn = psycopg.connect(**self.kwargs, autocommit=True, prepare_threshold=self._threshold())
        self.cur = self._cursor(self.conn)
        return {
            "server_pid": self.conn.info.backend_pid,
            "server_version": self.conn.info.parameter_status("server_version"),
        }

    def close(self) -> None:
        self.conn.close()

    def pool(self, endpoint: dict, size: int):
        from psycopg_pool import ConnectionPool

        # Filled before it returns; no check on borrow, no lifetime or idle limits.
        pool = ConnectionPool(kwargs={**connect_kwargs(endpoint), "autocommit": True,
                                      "prepare_threshold": self._threshold()},
                              min_size=size, max_size=size, max_lifetime=10**9, max_idle=10**9, open=True)
        pool.wait()
        return GetconnPool(pool)

    def attach(self, conn) -> None:
        self.conn, self.cur = conn, self._cursor(conn)

    def _threshold(self) -> int:
        # prepare=off: a count no step reaches. psycopg's None would turn preparation off
        # altogether, and execute(prepare=True) then parses every time, as extended does.
        return 5 if self.setting("prepare") == "auto" else NEVER

    def _cursor(self, conn):
        return conn.cursor(row_factory=psycopg.rows.dict_row) if self.setting("row") == "dict" else conn.cursor()

    def execute(self, sql: str) -> None:
        self.cur.execute(sql, prepare=False)

    def connect_op(self, endpoint: dict) -> Op:
        kwargs = connect_kwargs(endpoint)

        def connect(_):
            psycopg.connect(**kwargs, autocommit=True).close()
            return 0

        return connect

    def _named_rows(self) -> None:
        if self.setting("row") == "dict":
            self.dict_rows()

    def scan_op(self, sql: str) -> Op:
        self._named_rows()
        cur = self.cur
        if self.setting("scan") != "query":
            return self._copy_op(sql)

        def scan(_):
            cur.execute(sql, prepare=False)
            return cur.fetchall()

        return scan

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        self._named_rows()
        cur = self.cur
        if self.setting("scan") != "query" and reads:
            raise Unsupported(f"{self.name} reads whole results by COPY in scans; a statement that reads rows "
                              "runs on the other py-psycopg methods")
        if mode == "literal":
            def op(text):
                cur.execute(text, prepare=False)
                return cur.fetchall() if reads else cur.rowcount
        else:
            # prepare=auto leaves extended mode to psycopg (None: prepared once it has run 5 times)
            prepare = True if mode == "prepared" else None if self.setting("prepare") == "auto" else False
            sql = self.markers(sql)

            def op(args):
                cur.execute(sql, args, prepare=prepare)
                return cur.fetchall() if reads else cur.rowcount

        return op

    def bound(self):
        cur, prepare = self.cur, None if self.setting("prepare") == "auto" else False

        def query(sql, params):
            cur.execute(sql, params, prepare=prepare)
            return cur.fetchall()

        return query

    def _copy_op(self, sql: str) -> Op:
        """COPY (sql) TO STDOUT in the variant's format; the result's column types described
        now (untimed: an application knows its result's types), so the op decodes every value."""
        cur, fmt = self.cur, self.setting("scan").removeprefix("copy-")
        cur.execute(f"SELECT * FROM ({sql}) AS q LIMIT 0", prepare=False)
        types = [column.type_code for column in cur.description]
        self.reals = [i for i, t in enumerate(types) if t == FLOAT4_OID] if fmt == "binary" else []
        statement = f"COPY ({sql}) TO STDOUT (FORMAT {fmt})"
        dicts = self.setting("row") == "dict" and [column.name for column in cur.description]

        def copy_out(_):
            with cur.copy(statement) as copy:
                copy.set_types(types)
                rows = list(copy.rows())
            return [dict(zip(dicts, row)) for row in rows] if dicts else rows

        return copy_out

    def result_rows(self, result):
        """Binary COPY hands a real over as its float32, widened: checksummed as the canonical
        real (PostgreSQL's text for it), as the text format reads it."""
        reals = getattr(self, "reals", None)
        if not reals or self.setting("scan") != "copy-binary":
            return result
        rows = [list(row.values()) if isinstance(row, dict) else list(row) for row in result]
        for row in rows:
            for i in reals:
                if row[i] is not None:
                    row[i] = float4_value(row[i])
        return rows

    def batch_op(self, sql: str) -> Op:
        conn, cur, sql = self.conn, self.cur, self.markers(sql)

        def batch(group):
            with conn.transaction():
                cur.executemany(sql, group)
            return len(group)

        return batch
