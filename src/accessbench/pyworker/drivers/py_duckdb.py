"""py-duckdb: DuckDB's Python API, in process, reading rows (``fetchall``) or, with
``result=arrow``, an Arrow table (DuckDB's own columnar result, no row objects made)."""

from __future__ import annotations

import duckdb

from ..association import BY_HAND
from ..base import Driver, Op
from .columnar import arrow_rows, arrow_size


class Driver(Driver):
    name = "py-duckdb"
    driver = "duckdb"
    dbms = ("duckdb",)
    paramstyle = "qmark"
    modes = ("literal", "extended")
    batch_style = "executemany in one transaction per group"
    db_errors = (duckdb.Error,)
    kinds = (*Driver.kinds, "load")
    variants = {"result": ("rows", "arrow")}

    def configure(self, chosen: dict[str, str]) -> None:
        super().configure(chosen)
        if self.setting("result") == "arrow":  # no load (settings say why)
            self.kinds = tuple(kind for kind in type(self).kinds if kind != "load")

    def version(self) -> str:
        return duckdb.__version__

    def settings(self) -> dict[str, str]:
        threads = self.conn.execute("SELECT current_setting('threads')").fetchone()[0] if self.conn else "one per core"
        return {
            "access_mode": "READ_ONLY where the target says so (a DuckDB file has one writer or many readers)",
            "read_only": "endpoint read_only: duckdb.connect(file, read_only=True), every connection (open's and a "
                         "connect step's): DuckDB refuses writes; absent or false: read_only=False",
            "threads": f"{threads} (DuckDB's default: one per core)",
            "literal": "execute(text)",
            "extended": "execute(sql, params): the statement prepared on every execute",
            "prepared": "unsupported: the Python API prepares a parameterised statement on every execute and "
                        "keeps no statement handle",
            "load": ("unsupported: a load reads entities as rows, and py-duckdb/result=arrow measures Arrow results"
                     if self.setting("result") == "arrow" else BY_HAND + "; execute(sql, params), as extended"),
            "result": ("to_arrow_table(): a pyarrow Table, DuckDB's own columnar result" if self.setting("result") == "arrow"
                       else "fetchall(): a list of tuples"),
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        self.file, self.read_only = endpoint["file"], bool(endpoint.get("read_only"))
        self.conn = duckdb.connect(self.file, read_only=self.read_only)
        return {"server_version": duckdb.__version__}

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str) -> None:
        self.conn.execute(sql)

    def result_rows(self, result):
        return arrow_rows(result) if self.setting("result") == "arrow" else result

    def result_size(self, result) -> int:
        return arrow_size(result) if self.setting("result") == "arrow" else super().result_size(result)

    def _fetch(self):
        return (lambda cur: cur.to_arrow_table()) if self.setting("result") == "arrow" else (lambda cur: cur.fetchall())

    def connect_op(self, endpoint: dict) -> Op:
        file, read_only = endpoint["file"], bool(endpoint.get("read_only"))

        def connect(_):
            duckdb.connect(file, read_only=read_only).close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        conn, fetch = self.conn, self._fetch()
        return lambda _: fetch(conn.execute(sql))

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn, fetch = self.conn, self._fetch()
        if mode == "literal":
            if reads:
                return lambda text: fetch(conn.execute(text))
            return lambda text: conn.execute(text).fetchone()[0]
        sql = self.markers(sql)
        if reads:
            return lambda args: fetch(conn.execute(sql, args))
        return lambda args: conn.execute(sql, args).fetchone()[0]

    def bound(self):
        conn = self.conn
        return lambda sql, params: conn.execute(sql, params).fetchall()

    def batch_op(self, sql: str) -> Op:
        conn, sql = self.conn, self.markers(sql)
        return self.in_transaction(lambda group: conn.executemany(sql, group))
