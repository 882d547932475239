"""py-sqlalchemy-core+psycopg, py-sqlalchemy-core+sqlite3: SQLAlchemy Core over a driver
accessbench also measures bare (py-psycopg, py-sqlite3), so that the two cells side by side
give what the layer costs.

Core is used as its users use it: statements built from table constructs — ``select()``,
``insert()``, ``update()``, ``delete()`` — and executed on a ``Connection`` with a dict of
values; a batch is one ``execute(insert(table), [rows])``. The step's ``shape`` (worked out by
the runner, suite/shape.py) says which construct a statement is; a statement of no plain shape
goes through ``text()``, Core's raw-SQL API. Tables are Core's lightweight ``table()`` /
``column()`` constructs, columns without types: values reach the driver and come back exactly
as the bare driver binds and reads them, so that the checksums agree and the difference is
the layer's own work (building, compiling — cached — and executing statements, wrapping rows).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from ...protocol.sqltext import as_sqlite, count_markers
from ..base import Driver, Op, Unsupported
from .pg import connect_kwargs
from .py_sqlite3 import STATEMENT_CACHE


class CoreLayer(Driver):
    layer = "SQLAlchemy Core"
    driver = "sqlalchemy"
    paramstyle = "named"  # text(): :p1, :p2 …
    modes = ("extended", "prepared")
    batch_style = "execute(insert(table), [rows]): the driver's executemany, in one transaction per group"
    db_errors = (sa.exc.DBAPIError,)

    def url(self, endpoint: dict) -> sa.URL:
        raise NotImplementedError

    def sqlstate(self, error: BaseException) -> str | None:
        """The driver's own code, from the error SQLAlchemy wraps (``orig``)."""
        orig = getattr(error, "orig", None)
        return (getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
                or getattr(orig, "sqlite_errorname", None))

    def connect_args(self, endpoint: dict) -> dict:
        return {}

    def settings(self) -> dict[str, str]:
        return {
            "layer": f"SQLAlchemy {sa.__version__} Core (2.0 style)",
            "engine": "create_engine(..., isolation_level='AUTOCOMMIT', poolclass=NullPool): a connection is the "
                      "driver's own, opened by connect(); BEGIN/COMMIT explicit where a step groups statements",
            "statements": "select()/insert()/update()/delete() over table()/column() constructs, executed with a "
                          "dict of values; a statement of no plain shape: text() with named binds",
            "compiled cache": "on, SQLAlchemy's default (500 statements): a construct is compiled once per connection",
            "types": "columns untyped (NullType): values bound and read as the driver does, no result processing",
            "rows": "Result.all(): a list of Row; rowcount kept for every statement (preserve_rowcount=True)",
            "literal": "unsupported: SQLAlchemy binds every value (inlining them, literal_binds, is for DDL and "
                       "logging, not for running statements)",
        }

    # connection life
    def open(self, endpoint: dict, options: dict) -> dict:
        self.endpoint = endpoint
        self.engine = sa.create_engine(self.url(endpoint), isolation_level="AUTOCOMMIT", poolclass=NullPool,
                                       connect_args=self.connect_args(endpoint))
        # Rows changed are counted for every statement (verification checks them): Core counts
        # them for UPDATE and DELETE only unless asked.
        self.conn = self.active = self.engine.connect().execution_options(preserve_rowcount=True)
        return self.opened()

    def opened(self) -> dict:
        return {}

    def close(self) -> None:
        self.conn.close()
        self.engine.dispose()

    def execute(self, sql: str) -> None:
        # BEGIN/COMMIT (commit_every) and ROLLBACK reach the connection the step runs on.
        self.active.exec_driver_sql(sql)

    def use(self, mode: str):
        """The connection an ``extended`` or ``prepared`` step runs on, set up for that mode:
        SQLAlchemy has no preparation of its own, so a mode is the driver's, under the layer."""
        return self.conn

    def end_step(self) -> None:
        self.active = self.conn

    def connect_op(self, endpoint: dict) -> Op:
        engine = self.engine

        def connect(_):
            engine.connect().close()
            return 0

        return connect

    # statements, by the step's shape
    def _table(self, shape: dict):
        names = [*shape["columns"], *(c for c in shape["where"] if c not in shape["columns"])]
        return sa.table(shape["table"], *(sa.column(c) for c in names))

    def _where(self, table, shape: dict) -> list:
        return [table.c[c] == sa.bindparam(f"w{i}") for i, c in enumerate(shape["where"])]

    def _statement(self, shape: dict):
        """The Core construct for a shape, and how a parameter tuple becomes its dict of values."""
        t, where, n = self._table(shape), shape["where"], len(shape["columns"])
        keys = [f"w{i}" for i in range(len(where))]
        if shape["kind"] == "select":
            return sa.select(*(t.c[c] for c in shape["columns"])).where(*self._where(t, shape)), keys
        if shape["kind"] == "insert":
            return sa.insert(t), list(shape["columns"])
        if shape["kind"] == "update":
            values = {c: sa.bindparam(f"s{i}") for i, c in enumerate(shape["columns"])}
            return sa.update(t).where(*self._where(t, shape)).values(values), [f"s{i}" for i in range(n)] + keys
        return sa.delete(t).where(*self._where(t, shape)), keys

    def _raw(self, sql: str):
        return sa.text(self.markers(sql)), None

    def _built(self, sql: str):
        return self._statement(self.shape) if self.shape else self._raw(sql)

    def scan_op(self, sql: str) -> Op:
        conn, (statement, _) = self.conn, self._built(sql)
        return lambda _: conn.execute(statement).all()

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn, (statement, keys) = self.use(mode), self._built(sql)
        self.active = conn
        keys = keys if keys is not None else [f"p{i + 1}" for i in range(count_markers(sql))]
        if reads:
            return lambda args: conn.execute(statement, dict(zip(keys, args))).all()
        return lambda args: conn.execute(statement, dict(zip(keys, args))).rowcount

    def batch_op(self, sql: str) -> Op:
        if not self.shape or self.shape["kind"] != "insert":
            raise Unsupported(f"{self.name}: a batch is an insert of rows (execute(insert(table), [rows])); this "
                              "statement is not one")
        conn, (statement, keys) = self.conn, self._statement(self.shape)
        return self.in_transaction(lambda group: conn.execute(statement, [dict(zip(keys, row)) for row in group]))


class CoreOverPsycopg(CoreLayer):
    name = "py-sqlalchemy-core+psycopg"
    dbms = ("postgresql",)

    def url(self, endpoint: dict) -> sa.URL:
        return sa.URL.create("postgresql+psycopg")

    def connect_args(self, endpoint: dict) -> dict:
        # Everything in libpq keywords, as py-psycopg connects; automatic preparation off, as there.
        return {**connect_kwargs(endpoint), "prepare_threshold": None}

    def settings(self) -> dict[str, str]:
        return {**super().settings(), "driver": "psycopg 3 as py-psycopg: text results, client-side cursor",
                "extended": "psycopg's prepare_threshold=None: no automatic preparation, parsed every time",
                "prepared": "psycopg's prepare_threshold=0 on the connection: each statement prepared at its first "
                            "execution, as a SQLAlchemy user asks psycopg through connect_args"}

    def use(self, mode: str):
        self.conn.connection.dbapi_connection.prepare_threshold = 0 if mode == "prepared" else None
        return self.conn

    def end_step(self) -> None:
        super().end_step()
        self.conn.connection.dbapi_connection.prepare_threshold = None

    def opened(self) -> dict:
        info = self.conn.connection.dbapi_connection.info
        return {"server_pid": info.backend_pid, "server_version": info.parameter_status("server_version")}

    def version(self) -> str:
        import psycopg
        return f"{sa.__version__} (psycopg {psycopg.__version__})"


class CoreOverSqlite3(CoreLayer):
    name = "py-sqlalchemy-core+sqlite3"
    dbms = ("sqlite",)

    def url(self, endpoint: dict) -> sa.URL:
        return sa.URL.create("sqlite+pysqlite", database=endpoint["file"])

    def connect_args(self, endpoint: dict) -> dict:
        return {"cached_statements": 0}

    def settings(self) -> dict[str, str]:
        return {**super().settings(), "driver": "the standard library's sqlite3, as py-sqlite3",
                "extended": "sqlite3's cached_statements=0: sqlite3_prepare_v2 on every execute",
                "prepared": f"a second engine with cached_statements={STATEMENT_CACHE}: one prepared statement reused",
                "timestamps": "bound and read as ISO text, as py-sqlite3"}

    def open(self, endpoint: dict, options: dict) -> dict:
        opened = super().open(endpoint, options)
        self.cached_engine = sa.create_engine(self.url(endpoint), isolation_level="AUTOCOMMIT", poolclass=NullPool,
                                              connect_args={"cached_statements": STATEMENT_CACHE})
        self.cached = self.cached_engine.connect().execution_options(preserve_rowcount=True)
        return opened

    def close(self) -> None:
        self.cached.close()
        self.cached_engine.dispose()
        super().close()

    def use(self, mode: str):
        return self.cached if mode == "prepared" else self.conn

    def opened(self) -> dict:
        import sqlite3
        return {"server_version": sqlite3.sqlite_version}

    def version(self) -> str:
        import sqlite3
        return f"{sa.__version__} (sqlite3, SQLite {sqlite3.sqlite_version})"

    def adapt(self, args: list[tuple]) -> list:
        return [as_sqlite(row) for row in args]
