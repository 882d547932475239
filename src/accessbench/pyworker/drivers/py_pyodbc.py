"""py-pyodbc: pyodbc over unixODBC, on the same ODBC drivers as c-odbc, so the difference is
the cost of the Python layer over the same call-level interface."""

from __future__ import annotations

import datetime as dt

import pyodbc

from ...protocol.sqltext import as_sqlite
from ..association import BY_HAND
from ..base import Driver, Op, Unsupported
from . import odbc
from .mysql import SERVER_TID

# The driver manager would otherwise keep closed connections for reuse, and a connect step
# would measure the pool.
pyodbc.pooling = False


class Driver(Driver):
    name = "py-pyodbc"
    driver = "pyodbc"
    dbms = ("postgresql", "sqlite", "mariadb")
    paramstyle = "qmark"
    batch_style = ("executemany in one transaction per group: fast_executemany (parameter arrays) on "
                   "PostgreSQL; one SQLExecute per row on SQLite")
    # fast_executemany binds timestamps with the precision the driver describes; psqlODBC's
    # makes them whole seconds, silently. Declared sizes keep the microseconds.
    TIMESTAMP_SIZE = (pyodbc.SQL_TYPE_TIMESTAMP, 26, 6)
    kinds = (*Driver.kinds, "load")
    db_errors = (pyodbc.Error,)

    def settings(self) -> dict[str, str]:
        return {
            "pooling": "False (no driver-manager connection pool)",
            "literal": "cursor.execute(text): SQLExecDirect",
            "extended": "a new cursor per execute: SQLPrepare + SQLExecute every time "
                        "(pyodbc keeps the last prepared statement on a cursor)",
            "prepared": "one cursor, the same statement: SQLPrepare once, then SQLExecute",
            "fetch": "fetchall()",
            "load": BY_HAND + "; a new cursor per statement, execute(sql, params), as extended",
            "batch on sqlite": "fast_executemany=False: with it the SQLite ODBC driver crashes the process",
            "batch timestamps": "setinputsizes (SQL_TYPE_TIMESTAMP, 26, 6): without it fast_executemany "
                                "sends psqlODBC timestamps truncated to whole seconds",
            "mariadb timestamps": "bound as ISO text: a datetime pyodbc binds reaches MariaDB Connector/ODBC 3.1 "
                                  "without its fractional seconds, whatever size is declared (c-odbc's "
                                  "SQL_C_TYPE_TIMESTAMP keeps them)",
            **odbc.settings(),
        }

    def sqlstate(self, error: BaseException) -> str | None:
        return error.args[0] if error.args and isinstance(error.args[0], str) and len(error.args[0]) == 5 else None

    def open(self, endpoint: dict, options: dict) -> dict:
        self.dbms = endpoint["dbms"]
        self.input_sizes: list = []
        self.conn = pyodbc.connect(odbc.connection_string(endpoint), autocommit=True)
        self.cur = self.conn.cursor()
        info = {"server_version": self.conn.getinfo(pyodbc.SQL_DBMS_VER)}
        if self.dbms == "postgresql":
            info["server_pid"] = self.cur.execute("SELECT pg_backend_pid()").fetchone()[0]
        elif self.dbms == "mariadb":
            info["server_pid"] = self.cur.execute(SERVER_TID).fetchone()[0]
        return info

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str) -> None:
        if sql in ("BEGIN", "COMMIT", "ROLLBACK"):  # ODBC owns transactions: no SQL for them
            if sql == "BEGIN":
                self.conn.autocommit = False
            else:
                (self.conn.commit if sql == "COMMIT" else self.conn.rollback)()
                self.conn.autocommit = True
            return
        self.cur.execute(sql)

    def connect_op(self, endpoint: dict) -> Op:
        text = odbc.connection_string(endpoint)

        def connect(_):
            pyodbc.connect(text, autocommit=True).close()
            return 0

        return connect

    def _untyped(self) -> None:
        """SQLite's ODBC driver gives a computed column (count(*), max(…)) no declared type and
        answers it as text: such a read would disagree with every other method about the data,
        so it is said, not measured."""
        if self.dbms == "sqlite" and self.shape and "aggregate" in self.shape.get("features", ()):
            raise Unsupported("the SQLite ODBC driver reads a computed column (an aggregate) as text, "
                              "not as its value's type")

    def scan_op(self, sql: str) -> Op:
        self._untyped()
        cur = self.cur
        return lambda _: cur.execute(sql).fetchall()

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        self._untyped()
        if mode == "literal":
            cur = self.cur
            if reads:
                return lambda text: cur.execute(text).fetchall()
            return lambda text: cur.execute(text).rowcount
        if mode == "extended":
            conn = self.conn
            if reads:
                return lambda args: conn.cursor().execute(sql, args).fetchall()
            return lambda args: conn.cursor().execute(sql, args).rowcount
        cur = self.conn.cursor()
        if reads:
            return lambda args: cur.execute(sql, args).fetchall()
        return lambda args: cur.execute(sql, args).rowcount

    def bound(self):
        conn = self.conn
        return lambda sql, params: conn.cursor().execute(sql, params).fetchall()

    def batch_op(self, sql: str) -> Op:
        cur = self.conn.cursor()
        cur.fast_executemany = self.dbms != "sqlite"
        if any(self.input_sizes):
            cur.setinputsizes(self.input_sizes)
        return self.in_transaction(lambda group: cur.executemany(sql, group))

    def adapt(self, args: list[tuple]) -> list:
        self.input_sizes = []
        if self.dbms == "sqlite":  # timestamps, dates, decimals as text, as the data loader writes them
            return [as_sqlite(row) for row in args]
        if self.dbms == "mariadb":  # pyodbc's timestamp binding loses the microseconds (see settings)
            return [tuple(v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v for v in row) for row in args]
        width = len(args[0]) if args else 0
        self.input_sizes = [self._input_size([row[i] for row in args]) for i in range(width)]
        return args

    def _input_size(self, column: list):
        """What fast_executemany binds a column as. Declared from every value of the group:
        pyodbc otherwise takes the first row's, so a NULL there binds a zero-length buffer
        (HY090), and psqlODBC's timestamps lose their microseconds."""
        values = [v for v in column if v is not None]
        if not values:
            return None
        first = values[0]
        if isinstance(first, dt.datetime):
            return self.TIMESTAMP_SIZE
        if isinstance(first, (bytes, bytearray)):
            return (pyodbc.SQL_VARBINARY, max(1, max(map(len, values))), 0)
        if isinstance(first, str):
            return (pyodbc.SQL_WVARCHAR, max(1, max(map(len, values))), 0)
        return None
