"""py-sqlalchemy-core+psycopg, py-sqlalchemy-core+sqlite3, py-sqlalchemy-core+mysqlclient,
py-sqlalchemy-orm+psycopg, py-sqlalchemy-orm+sqlite3, py-sqlalchemy-orm+mysqlclient: SQLAlchemy
Core and ORM over a driver accessbench also measures bare (py-psycopg, py-sqlite3,
py-mysqlclient), so that the cells side by side give what the layer costs.

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
import sqlalchemy.orm
from sqlalchemy.pool import NullPool

from ...protocol.sqltext import as_sqlite, count_markers
from ..base import Driver, Op, Unsupported
from . import mysql, sqlite
from .pg import LIBPQ_READ_ONLY, connect_kwargs, tls_setting
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

    def dbapi_connect(self):
        """What the dialect opens the driver's connection with, where not the driver module's
        own connect (its do_connect event): None."""
        return None

    def settings(self) -> dict[str, str]:
        return {
            "layer": f"SQLAlchemy {sa.__version__} Core (2.0 style)",
            "engine": "create_engine(..., isolation_level='AUTOCOMMIT', poolclass=NullPool): a connection is the "
                      "driver's own, opened by connect(); BEGIN/COMMIT explicit where a step groups statements",
            "statements": "select()/insert()/update()/delete() over table()/column() constructs, executed with a "
                          "dict of values; a statement of no plain shape: text() with named binds",
            "compiled cache": "on, SQLAlchemy's default (500 statements per engine): a construct is compiled once",
            "types": "columns untyped (NullType): values bound and read as the driver does, no result processing",
            "rows": "Result.all(): a list of Row; rowcount kept for every statement (preserve_rowcount=True)",
            "literal": "unsupported: SQLAlchemy binds every value (inlining them, literal_binds, is for DDL and "
                       "logging, not for running statements)",
        }

    # connection life
    def open(self, endpoint: dict, options: dict) -> dict:
        self.engine = sa.create_engine(self.url(endpoint), isolation_level="AUTOCOMMIT", poolclass=NullPool,
                                       connect_args=self.connect_args(endpoint))
        if (connect := self.dbapi_connect()) is not None:
            sa.event.listen(self.engine, "do_connect", lambda dialect, record, cargs, cparams: connect(*cargs, **cparams))
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

    @staticmethod
    def _where(columns, where: list[str]) -> tuple[list, list[str]]:
        """``column = :w0 AND …`` over ``columns`` (a table's ``.c``), and the names of its values."""
        keys = [f"w{i}" for i in range(len(where))]
        return [columns[c] == sa.bindparam(k) for c, k in zip(where, keys)], keys

    def _statement(self, shape: dict, target=None):
        """The construct for a shape on ``target`` — Core's ``table()`` construct, or an ORM
        entity — and the names of its values, in the order of the step's parameters."""
        target = self._table(shape) if target is None else target
        columns = getattr(target, "__table__", target).c
        condition, keys = self._where(columns, shape["where"])
        if shape["kind"] == "select":
            return sa.select(*(columns[c] for c in shape["columns"])).where(*condition), keys
        if shape["kind"] == "insert":
            return sa.insert(target), list(shape["columns"])
        if shape["kind"] == "update":
            sets = [f"s{i}" for i in range(len(shape["columns"]))]
            values = {c: sa.bindparam(k) for c, k in zip(shape["columns"], sets)}
            return sa.update(target).where(*condition).values(values), sets + keys
        return sa.delete(target).where(*condition), keys

    def _raw(self, sql: str):
        """Core's raw-SQL API for a statement of no plain shape: text() and its named binds."""
        return sa.text(self.markers(sql)), [f"p{i + 1}" for i in range(count_markers(sql))]

    def _built(self, sql: str):
        return self._statement(self.shape) if self.shape else self._raw(sql)

    def scan_op(self, sql: str) -> Op:
        conn, (statement, _) = self.conn, self._built(sql)
        return lambda _: conn.execute(statement).all()

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn, (statement, keys) = self.use(mode), self._built(sql)
        self.active = conn
        if reads:
            return lambda args: conn.execute(statement, dict(zip(keys, args))).all()
        return lambda args: conn.execute(statement, dict(zip(keys, args))).rowcount

    def batch_op(self, sql: str) -> Op:
        if not self.shape or self.shape["kind"] != "insert":
            raise Unsupported(f"{self.name}: a batch is an insert of rows (execute(insert(table), [rows])); this "
                              "statement is not one")
        conn, (statement, keys) = self.conn, self._statement(self.shape)
        return self.in_transaction(lambda group: conn.execute(statement, [dict(zip(keys, row)) for row in group]))


# The driver under the layer: how SQLAlchemy reaches it, and what each mode is there.

class OverPsycopg:
    dbms = ("postgresql",)

    def url(self, endpoint: dict) -> sa.URL:
        return sa.URL.create("postgresql+psycopg")

    def connect_args(self, endpoint: dict) -> dict:
        import psycopg

        # Everything in libpq keywords (TLS too), as py-psycopg connects; automatic preparation off, as there.
        return {**connect_kwargs(endpoint, psycopg.pq.version()), "prepare_threshold": None}

    def settings(self) -> dict[str, str]:
        import psycopg

        return {**super().settings(), "driver": "psycopg 3 as py-psycopg: text results, client-side cursor",
                "tls": "connect_args, as py-psycopg connects: " + tls_setting(psycopg.pq.version()),
                "read_only": "connect_args, as py-psycopg connects: " + LIBPQ_READ_ONLY,
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


class OverSqlite3:
    dbms = ("sqlite",)

    def url(self, endpoint: dict) -> sa.URL:
        database, uri = sqlite.database(endpoint)
        # uri=true: the pysqlite dialect hands the database to sqlite3 as a URI (uri=True), as it is
        return sa.URL.create("sqlite+pysqlite", database=database, query={"uri": "true"} if uri else {})

    def connect_args(self, endpoint: dict) -> dict:
        return {"cached_statements": 0}

    def settings(self) -> dict[str, str]:
        return {**super().settings(), "driver": "the standard library's sqlite3, as py-sqlite3",
                "extended": "sqlite3's cached_statements=0: sqlite3_prepare_v2 on every execute",
                "prepared": f"a second engine with cached_statements={STATEMENT_CACHE}: one prepared statement reused",
                "timestamps": "bound and read as ISO text, as py-sqlite3",
                "read_only": sqlite.read_only_setting("the URI as the engine URL's database, with the query uri=true: "
                                                      "the dialect passes it to sqlite3.connect(…, uri=True); both "
                                                      "engines")}

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


class OverMysqlclient:
    """MariaDB through mysqlclient (MySQLdb), connected as py-mysqlclient connects. MySQLdb
    interpolates every bound value into the statement text on the client and sends it over
    the text protocol: it has no binary protocol, so no ``extended`` or ``prepared`` mode —
    as py-mysqlclient, those are unsupported. What it has is ``literal``: SQLAlchemy binds the
    values and MySQLdb inlines them, so the server receives literal SQL, as py-mysqlclient's
    literal sends it (``literal_binds``: the host hands the op the values, not inlined text)."""

    dbms = ("mariadb",)
    modes = ("literal",)
    literal_binds = True

    def url(self, endpoint: dict) -> sa.URL:
        return sa.URL.create("mariadb+mysqldb")

    def connect_args(self, endpoint: dict) -> dict:
        from .py_mysqlclient import arguments

        # py-mysqlclient's connection: socket or host and port, TLS and compression, utf8mb4,
        # FOUND_ROWS (an UPDATE counts the rows it matched; SQLAlchemy's dialect asks for it too).
        return arguments(endpoint)

    def dbapi_connect(self):
        from .py_mysqlclient import Connection

        return Connection  # py-mysqlclient's: its errors carry the SQLSTATE

    def settings(self) -> dict[str, str]:
        import MySQLdb

        from .py_mysqlclient import SQLSTATE_SETTING

        return {**super().settings(),
                "driver": f"mysqlclient (MySQLdb) as py-mysqlclient, libmariadb {MySQLdb._mysql.get_client_info()}: "
                          "charset utf8mb4, client_flag FOUND_ROWS, Cursor (mysql_store_result: the whole result "
                          "read before execute returns)",
                "tls": "connect_args, as py-mysqlclient connects: " + mysql.MYSQLCLIENT_TLS,
                "compress": "connect_args, as py-mysqlclient: " + mysql.MYSQLCLIENT_COMPRESS,
                "read_only": "connect_args, as py-mysqlclient connects: " + mysql.INIT_COMMAND_READ_ONLY,
                "sqlstate": "the do_connect event makes py-mysqlclient's connection: " + SQLSTATE_SETTING,
                "connection": "the mariadb+mysqldb dialect: on every new connection SET NAMES utf8mb4 (its "
                              "on_connect) and autocommit(True) (isolation_level AUTOCOMMIT); the first connection "
                              "of the engine also reads the server's settings (version, sql_mode, case rules)",
                "executemany": "a batch group's execute(insert(...), [rows]) is cursor.executemany, which MySQLdb "
                               "rewrites into one multi-row INSERT, as py-mysqlclient's batch",
                "literal": "SQLAlchemy binds the values and MySQLdb inlines them into the text on the client "
                           "(its escaping): one COM_QUERY of literal SQL, as py-mysqlclient's literal sends",
                "extended": "unsupported: MySQLdb interpolates parameters on the client (no binary protocol), as "
                            "py-mysqlclient",
                "prepared": "unsupported: MySQLdb has no binary-protocol prepared statements, as py-mysqlclient"}

    def opened(self) -> dict:
        # The serving thread's OS id, read after connecting as py-mysqlclient reads it.
        tid = self.conn.exec_driver_sql(mysql.SERVER_TID).scalar()
        return {"server_pid": tid, "server_version": self.conn.connection.dbapi_connection.get_server_info()}

    def sqlstate(self, error: BaseException) -> str | None:
        return mysql.sqlstate(getattr(error, "orig", error))

    def version(self) -> str:
        from importlib.metadata import version
        return f"{sa.__version__} (mysqlclient {version('mysqlclient')})"


class OrmLayer(CoreLayer):
    """SQLAlchemy ORM: an entity per table of the suite, a Session per operation."""

    layer = "SQLAlchemy ORM"
    batch_style = "session.execute(insert(Entity), [rows]): the ORM's bulk insert, in one transaction per group"

    def settings(self) -> dict[str, str]:
        return {
            **super().settings(),
            "layer": f"SQLAlchemy {sa.__version__} ORM (2.0 style)",
            "entities": "one class per table of the suite, mapped imperatively when a step first needs it, from the "
                        "table's columns and primary key; columns untyped (values as the driver reads them)",
            "session": "a new Session per operation on the worker's connection (a session per request): its identity "
                       "map starts empty, so no read is answered from it; autoflush and expire_on_commit as default",
            "reads": "by primary key: session.get(Entity, key); any other select: session.scalars(select(Entity)"
                     ".where(...)); every value read from the entity's attribute",
            "writes": "insert: session.add(Entity(...)), commit; update by primary key: session.get, set the "
                      "attributes, commit (a SELECT then an UPDATE, the unit of work); any other update or delete: "
                      "an ORM-enabled update()/delete() statement",
            "statements": "a statement of no plain shape: session.execute(text(...))",
            "rows": "entities; each value read from its attribute (a statement of no plain shape: Row objects)",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        opened = super().open(endpoint, options)
        self.registry, self.entities = sa.orm.registry(), {}
        return opened

    def _entity(self, shape: dict):
        """The mapped class of the shape's table (made once per worker)."""
        name = shape["table"]
        if name not in self.entities:
            if not shape.get("key"):
                raise Unsupported(f"{self.name}: table {name} has no primary key, and an ORM entity needs one")
            table = sa.Table(name, self.registry.metadata,
                             *(sa.Column(c, primary_key=c in shape["key"]) for c in shape["table_columns"]))
            self.entities[name] = self.registry.map_imperatively(type(f"Entity_{name}", (), {}), table).class_
        return self.entities[name]

    def _mapped(self) -> dict | None:
        """The step's shape when the ORM can map its table; else None (raw SQL through the session)."""
        return self.shape if self.shape and self.shape.get("table_columns") else None

    def scan_op(self, sql: str) -> Op:
        return self._read(sql, self.conn)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn = self.active = self.use(mode)
        shape = self._mapped()
        if reads or shape is None:
            return self._read(sql, conn) if reads else self._raw_write(sql, conn)
        entity, where, columns = self._entity(shape), shape["where"], shape["columns"]
        Session = sa.orm.Session
        if shape["kind"] == "insert":
            def insert(args):
                with Session(conn) as session:
                    session.add(entity(**dict(zip(columns, args))))
                    session.commit()
                return 1
            return insert
        if shape["kind"] == "update" and set(where) == set(shape["key"]):
            key, n = shape["key"], len(columns)

            def update(args):
                found = dict(zip(where, args[n:]))
                with Session(conn) as session:
                    row = session.get(entity, tuple(found[k] for k in key))
                    if row is None:
                        return 0
                    for column, value in zip(columns, args[:n]):
                        setattr(row, column, value)
                    session.commit()
                return 1
            return update
        statement, keys = self._statement(shape, entity)

        def bulk(args):  # an ORM-enabled update() or delete() of the rows that match
            with Session(conn) as session:
                changed = session.execute(statement, dict(zip(keys, args))).rowcount
                session.commit()
            return changed
        return bulk

    def _read(self, sql: str, conn) -> Op:
        shape, Session = self._mapped(), sa.orm.Session
        if shape is None or shape["kind"] != "select":
            statement, keys = self._raw(sql)

            def raw(args):
                with Session(conn) as session:
                    return session.execute(statement, dict(zip(keys, args or ()))).all()
            return raw
        entity, columns, where = self._entity(shape), shape["columns"], shape["where"]
        if where and set(where) == set(shape["key"]):
            key = shape["key"]

            def get(args):
                found = dict(zip(where, args))
                with Session(conn) as session:
                    row = session.get(entity, tuple(found[k] for k in key))
                    return [] if row is None else [tuple(getattr(row, c) for c in columns)]
            return get
        condition, keys = self._where(entity.__table__.c, where)
        statement = sa.select(entity).where(*condition)

        def select(args):
            with Session(conn) as session:
                rows = session.scalars(statement, dict(zip(keys, args or ()))).all()
                return [tuple(getattr(row, c) for c in columns) for row in rows]
        return select

    def _raw_write(self, sql: str, conn) -> Op:
        (statement, keys), Session = self._raw(sql), sa.orm.Session

        def write(args):
            with Session(conn) as session:
                changed = session.execute(statement, dict(zip(keys, args))).rowcount
                session.commit()
            return changed
        return write

    def batch_op(self, sql: str) -> Op:
        shape = self._mapped()
        if shape is None or shape["kind"] != "insert":
            raise Unsupported(f"{self.name}: a batch is an insert of entities (session.execute(insert(Entity), "
                              "[rows])); this statement is not one")
        entity, columns, conn, Session = self._entity(shape), shape["columns"], self.conn, sa.orm.Session

        def write_group(group):
            with Session(conn) as session:
                session.execute(sa.insert(entity), [dict(zip(columns, row)) for row in group])
                session.commit()
        return self.in_transaction(write_group)


class CoreOverPsycopg(OverPsycopg, CoreLayer):
    name = "py-sqlalchemy-core+psycopg"


class CoreOverSqlite3(OverSqlite3, CoreLayer):
    name = "py-sqlalchemy-core+sqlite3"


class CoreOverMysqlclient(OverMysqlclient, CoreLayer):
    name = "py-sqlalchemy-core+mysqlclient"


class OrmOverPsycopg(OverPsycopg, OrmLayer):
    name = "py-sqlalchemy-orm+psycopg"


class OrmOverSqlite3(OverSqlite3, OrmLayer):
    name = "py-sqlalchemy-orm+sqlite3"


class OrmOverMysqlclient(OverMysqlclient, OrmLayer):
    name = "py-sqlalchemy-orm+mysqlclient"
