"""py-adbc: Arrow Database Connectivity's drivers through their DB-API layer, reading every
result as an Arrow table (``fetch_arrow_table``). The PostgreSQL driver reads a query's
result with binary COPY and builds Arrow columns from it; the SQLite driver steps its
statement and builds them in process."""

from __future__ import annotations

from importlib.metadata import version

import adbc_driver_manager

from ...protocol.sqltext import as_sqlite
from ..base import Driver, Op, Unsupported
from .columnar import arrow_rows, arrow_size
from .sqlite import database
from .uri import LIBPQ_READ_ONLY, LIBPQ_TLS, SQLITE_READ_ONLY, uri


def _module(dbms: str):
    if dbms == "postgresql":
        import adbc_driver_postgresql.dbapi as module
    elif dbms == "sqlite":
        import adbc_driver_sqlite.dbapi as module
    else:
        raise Unsupported(f"py-adbc has no driver for {dbms}")
    return module


class Driver(Driver):
    name = "py-adbc"
    driver = "adbc-driver-manager"
    dbms = ("postgresql", "sqlite")
    modes = ("literal", "extended")
    batch_style = "executemany (parameters bound as one Arrow batch) in one transaction per group"
    db_errors = (adbc_driver_manager.Error,)

    def version(self) -> str:
        return (f"driver manager {version('adbc-driver-manager')}, postgresql {version('adbc-driver-postgresql')}, "
                f"sqlite {version('adbc-driver-sqlite')}")

    def settings(self) -> dict[str, str]:
        return {
            "autocommit": "on (BEGIN/COMMIT explicit)",
            "tls": "PostgreSQL: " + LIBPQ_TLS,
            "read_only": f"PostgreSQL: {LIBPQ_READ_ONLY}. {SQLITE_READ_ONLY} (connect's uri)",
            "result": "fetch_arrow_table(): a pyarrow Table; PostgreSQL results arrive by COPY … TO STDOUT "
                      "(FORMAT binary), SQLite's by stepping the statement",
            "literal": "execute(text)",
            "extended": "execute(sql, params): the statement prepared and bound on every execute",
            "prepared": "unsupported: the DB-API layer keeps no statement handle between executes",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        self.dbms_name = endpoint["dbms"]
        self.paramstyle = "numeric" if self.dbms_name == "postgresql" else "qmark"
        self.module = _module(self.dbms_name)
        self.target = uri(endpoint) if self.dbms_name == "postgresql" else database(endpoint)[0]
        self.conn = self.module.connect(self.target, autocommit=True)
        self.cur = self.conn.cursor()
        return {"server_pid": self._backend()}

    def _backend(self) -> int | None:
        if self.dbms_name != "postgresql":
            return None
        self.cur.execute("SELECT pg_backend_pid()")
        return self.cur.fetchone()[0]

    def close(self) -> None:
        self.cur.close()
        self.conn.close()

    def execute(self, sql: str) -> None:
        self.cur.execute(sql)

    def recover(self) -> None:
        # A statement that failed leaves its parameters bound to the cursor, and ADBC's SQLite
        # driver binds them to the cursor's next statement too: a fresh cursor.
        self.cur.close()
        self.cur = self.conn.cursor()
        super().recover()

    def adapt(self, args: list[tuple]) -> list:
        # SQLite keeps timestamps, dates and decimals as text, as the data loader writes them
        return [as_sqlite(row) for row in args] if self.dbms_name == "sqlite" else args

    def result_rows(self, result):
        return arrow_rows(result)

    def result_size(self, result) -> int:
        return arrow_size(result)

    def connect_op(self, endpoint: dict) -> Op:
        module, target = self.module, self.target

        def connect(_):
            module.connect(target, autocommit=True).close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        cur = self.cur

        def scan(_):
            cur.execute(sql)
            return cur.fetch_arrow_table()

        return scan

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        cur = self.cur

        def changed() -> int:
            if cur.rowcount < 0:
                raise Unsupported("py-adbc cannot say how many rows a statement changed (the driver reports -1)")
            return cur.rowcount

        if mode == "literal":
            def op(text):
                cur.execute(text)
                return cur.fetch_arrow_table() if reads else changed()
        else:
            sql = self.markers(sql)

            def op(args):
                cur.execute(sql, args)
                return cur.fetch_arrow_table() if reads else changed()

        return op

    def batch_op(self, sql: str) -> Op:
        cur, sql = self.cur, self.markers(sql)
        return self.in_transaction(lambda group: cur.executemany(sql, group))
