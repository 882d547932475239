"""py-sqlalchemy-core+psycopg, py-sqlalchemy-core+sqlite3, py-sqlalchemy-core+mysqlclient,
py-sqlalchemy-orm+psycopg, py-sqlalchemy-orm+sqlite3, py-sqlalchemy-orm+mysqlclient: SQLAlchemy
Core and ORM over a driver accessbench also measures bare (py-psycopg, py-sqlite3,
py-mysqlclient), so that the cells side by side give what the layer costs.

Core is used as its users use it: statements built from table constructs — ``select()``,
``insert()``, ``update()``, ``delete()`` with joins, conditions, grouping, ordering and pages —
and executed on a ``Connection`` with a dict of values; a batch is one ``execute(insert(table),
[rows])``. The step's ``shape`` (worked out by the runner, suite/shape.py) says what the
statement does; ``Builder`` makes the construct once per step, each marker a ``bindparam``, so
that SQLAlchemy compiles it once (its compiled cache) and each operation executes it with the
op's values. A statement of no shape goes through ``text()``, Core's raw-SQL API, and the answer
says so (``api``: raw). Tables are Core's lightweight ``table()`` / ``column()`` constructs,
columns without types: values reach the driver and come back exactly as the bare driver binds
and reads them, so that the checksums agree and the difference is the layer's own work
(building, compiling — cached — and executing statements, wrapping rows).

The ORM maps an entity per table, reads them through a Session per operation and loads
associations through ``relationship()`` with each of its loader strategies. The statements a
verification pass sends are counted by a ``before_cursor_execute`` listener, there for that pass
only.
"""

from __future__ import annotations

import operator

import sqlalchemy as sa
import sqlalchemy.orm
from sqlalchemy.pool import NullPool

from ...protocol.sqltext import as_sqlite, count_markers
from ..association import Statements, loader
from ..base import Driver, Op, Unsupported, shapes, some_columns
from . import mysql, sqlite
from .pg import LIBPQ_READ_ONLY, connect_kwargs, tls_setting
from .py_sqlite3 import STATEMENT_CACHE

# Operators of a comparison in a shape's condition, as SQLAlchemy's column operators.
_COMPARE = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}
_LOADS = {"lazy": "lazyload", "joined": "joinedload", "selectin": "selectinload"}


class Binds:
    """The bound parameters of a statement built from a shape: a ``bindparam`` per marker of the
    step's text, named by its position (``abp0``, ``abp1`` …), or one expanding ``bindparam``
    for an IN list of markers, as ``col.in_(values)`` binds it; ``values`` then turns an op's
    argument (the step's parameters, in marker order) into the dict SQLAlchemy executes with."""

    def __init__(self) -> None:
        self.names: dict[str, int | list[int]] = {}

    def operand(self, operand: dict):
        """A marker as a bindparam; a literal as the Python value, which SQLAlchemy binds."""
        if "param" not in operand:
            return operand["value"]
        name = f"abp{operand['param']}"
        self.names[name] = operand["param"]
        return sa.bindparam(name)

    def listed(self, operands: list[dict]):
        """The IN list: one expanding bindparam over markers (the list ``in_`` makes of values)."""
        if not all("param" in o for o in operands):
            return [self.operand(o) for o in operands]
        name = f"abp{operands[0]['param']}_in"
        self.names[name] = [o["param"] for o in operands]
        return sa.bindparam(name, expanding=True)

    def named(self, names: list[str]) -> None:
        """The markers bound by name in order (an insert's columns: ``execute(insert(t), {col: …})``)."""
        self.names = {name: i for i, name in enumerate(names)}

    @property
    def values(self):
        names = list(self.names)
        if all(isinstance(i, int) for i in self.names.values()) and list(self.names.values()) == list(range(len(names))):
            return lambda args: dict(zip(names, args or ()))
        positions = list(self.names.items())
        return lambda args: {n: args[i] if isinstance(i, int) else [args[j] for j in i] for n, i in positions}


class Builder:
    """A shape (protocol: Shapes) as SQLAlchemy constructs: ``select()`` with ``join``,
    ``where`` (``and_``, ``or_``, the column operators, ``between``, ``in_``, ``is_(None)``,
    ``like``), ``group_by``, ``order_by`` (``desc()``), ``limit``, ``offset`` and ``func``
    aggregates; ``insert()``; ``update()`` with ``values`` (``col + x`` for an increment);
    ``delete()``. ``source`` gives what a table name stands for — a Core ``table()``, or an ORM
    entity — and ``column`` a ``{"table", "column"}`` on it."""

    def __init__(self, source, column) -> None:
        self.source, self.column, self.binds = source, column, Binds()

    def condition(self, term: dict):
        if "and" in term:
            return sa.and_(*(self.condition(t) for t in term["and"]))
        if "or" in term:
            return sa.or_(*(self.condition(t) for t in term["or"]))
        column, op, args, operand = self.column(term["column"]), term["op"], term["args"], self.binds.operand
        if op == "in":
            return column.in_(self.binds.listed(args))
        if op == "is null":
            return column.is_(None)
        if op == "is not null":
            return column.is_not(None)
        if op == "between":
            return column.between(operand(args[0]), operand(args[1]))
        if op == "like":
            return column.like(operand(args[0]))
        return _COMPARE[op](column, operand(args[0]))

    def item(self, item: dict):
        if "fn" not in item:
            return self.column(item)
        fn = getattr(sa.func, item["fn"])
        made = fn() if item["column"] is None else fn(self.column(item))
        return made.label(item["as"]) if item["as"] else made

    def select(self, shape: dict, whole=None):
        """The select of ``shape``: of ``whole`` (a table or an entity read whole) or of its items."""
        main = self.source(shape["table"])
        if whole is not None:
            statement = sa.select(whole)
        else:
            statement = sa.select(*(self.item(i) for i in shape["items"])).select_from(main)
        for join in shape.get("joins") or ():
            a, b = join["on"]
            statement = statement.join(self.source(join["table"]), self.column(a) == self.column(b),
                                       isouter=join["type"] == "left")
        return self.page(self.where(statement, shape), shape)

    def where(self, statement, shape: dict):
        return statement.where(self.condition(shape["filter"])) if shape.get("filter") else statement

    def page(self, statement, shape: dict):
        if shape.get("group"):
            statement = statement.group_by(*(self.column(c) for c in shape["group"]))
        if shape.get("order"):
            statement = statement.order_by(*(self.column(o).desc() if o["desc"] else self.column(o)
                                             for o in shape["order"]))
        if shape.get("limit") is not None:
            statement = statement.limit(self.binds.operand(shape["limit"]))
        if shape.get("offset") is not None:
            statement = statement.offset(self.binds.operand(shape["offset"]))
        return statement

    def statement(self, shape: dict, whole=None):
        """The construct of any shape, and the function making its parameters from an op's argument."""
        kind, target = shape["kind"], self.source(shape["table"])
        if kind == "select":
            built = self.select(shape, whole)
        elif kind == "insert":
            built = sa.insert(target)
            self.binds.named(shape["columns"])
        elif kind == "update":
            values = {}
            for s in shape["set"]:
                value = self.binds.operand(s["arg"])
                values[s["column"]] = (self.column({"table": shape["table"], "column": s["column"]}) + value
                                       if s["op"] == "+" else value)
            built = self.where(sa.update(target), shape).values(values)
        else:
            built = self.where(sa.delete(target), shape)
        return built, self.binds.values


def _mentioned(shape: dict, table: str) -> list[str]:
    """The columns of ``table`` a shape names, for a table of no entity info (not the suite's)."""
    names: list[str] = []

    def walk(value):
        if isinstance(value, dict):
            if value.get("table") == table and isinstance(value.get("column"), str):
                names.append(value["column"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk([shape.get(k) for k in ("items", "filter", "joins", "group", "order")])
    if shape["table"] == table:
        names += [*shape.get("columns", []), *(shape.get("where") or []), *(s["column"] for s in shape.get("set", []))]
    return list(dict.fromkeys(names))


class CoreLayer(Driver):
    layer = "SQLAlchemy Core"
    driver = "sqlalchemy"
    paramstyle = "named"  # text(): :p1, :p2 …
    modes = ("extended", "prepared")
    kinds = (*Driver.kinds, "load")
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

    def shapes(self) -> dict:
        return shapes({})

    def settings(self) -> dict[str, str]:
        return {
            "layer": f"SQLAlchemy {sa.__version__} Core (2.0 style)",
            "engine": "create_engine(..., isolation_level='AUTOCOMMIT', poolclass=NullPool): a connection is the "
                      "driver's own, opened by connect(); BEGIN/COMMIT explicit where a step groups statements",
            "statements": "built from the step's shape, once per step, over table()/column() constructs: select() "
                          "(select(table) for SELECT *, else its columns and func.count()/sum()/min()/max()/avg(), "
                          "select_from, join(…, isouter=True for a left join), where() with and_/or_, ==, !=, <, <=, "
                          ">, >=, between(), in_() (one expanding bindparam, as in_(values) binds), is_(None), "
                          "is_not(None), like(), group_by(), order_by(col / col.desc()), limit(), offset()); insert(); "
                          "update().values(col=value or col + value); delete(); each marker a bindparam, executed with "
                          "a dict of values; a statement of no shape: text() with named binds, answered as api raw",
            "compiled cache": "on, SQLAlchemy's default (500 statements per engine): a construct is compiled once",
            "types": "columns untyped (NullType): values bound and read as the driver does, no result processing",
            "rows": "Result.all(): a list of Row; rowcount kept for every statement (preserve_rowcount=True)",
            "load": "no relations in Core: the hand-written statements built as Core constructs, run on the Connection "
                    "(pyworker/association.py): lazy = the parents' select, then select(child).where(child.c.fk == "
                    "bindparam) per row of the level above; selectin = the parents' select, then per level "
                    "select(child).where(child.c.fk.in_(keys)) (an expanding bindparam); joined = select(parents "
                    "subquery, child aliases…) with outerjoin per level, each entity kept once by its key",
            "statement count": "a before_cursor_execute listener on the step's connections, added for a "
                               "verification pass and removed after it (their _has_events flag restored, so the "
                               "timed loop runs without event dispatch)",
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
        self.tables: dict[tuple, sa.TableClause] = {}
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

    def connections(self) -> list:
        """Every connection a step's ops may run on (the statement count listens on each)."""
        return [self.conn]

    def end_step(self) -> None:
        self.active = self.conn

    def count_statements(self, kind: str):
        if kind == "connect":
            return None
        counter = self.counter = Statements()

        def count(*_):
            counter.n += 1

        # Listening on a Connection sets its _has_events, which makes every execute go through
        # the event dispatch; restored when the pass ends, so the timed loop runs as before.
        self.counting = [(conn, conn._has_events) for conn in self.connections()]
        for conn, _ in self.counting:
            sa.event.listen(conn, "before_cursor_execute", count)
        self.count_hook = count
        return counter

    def stop_counting(self) -> None:
        for conn, had in getattr(self, "counting", ()):
            sa.event.remove(conn, "before_cursor_execute", self.count_hook)
            conn._has_events = had
        self.counting, self.counter = [], None

    def connect_op(self, endpoint: dict) -> Op:
        engine = self.engine

        def connect(_):
            engine.connect().close()
            return 0

        return connect

    # statements, by the step's shape
    def _table(self, name: str, shape: dict) -> sa.TableClause:
        """Core's lightweight table() of a table the shape names: every column of a table of the
        suite (``tables``), else the columns the shape names; one construct per table and columns."""
        info = (shape.get("tables") or {}).get(name)
        columns = tuple(info["columns"] if info else _mentioned(shape, name))
        key = (name, columns)
        if key not in self.tables:
            self.tables[key] = sa.table(name, *(sa.column(c) for c in columns))
        return self.tables[key]

    def _statement(self, shape: dict):
        """The construct for a shape on Core's table() constructs, and the function making its
        parameters from an op's argument."""
        builder = Builder(lambda name: self._table(name, shape),
                          lambda ref: self._table(ref["table"], shape).c[ref["column"]])
        whole = self._table(shape["table"], shape) if shape.get("star") else None
        return builder.statement(shape, whole)

    def _raw(self, sql: str):
        """Core's raw-SQL API for a statement of no shape: text() and its named binds; the
        answer then says api raw."""
        self.api = "raw"
        names = [f"p{i + 1}" for i in range(count_markers(sql))]
        return sa.text(self.markers(sql)), lambda args: dict(zip(names, args or ()))

    def _built(self, sql: str):
        return self._statement(self.shape) if self.shape else self._raw(sql)

    def scan_op(self, sql: str) -> Op:
        conn, (statement, values) = self.conn, self._built(sql)
        return lambda _: conn.execute(statement, values(())).all()

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn, (statement, values) = self.use(mode), self._built(sql)
        self.active = conn
        if reads:
            return lambda args: conn.execute(statement, values(args)).all()
        return lambda args: conn.execute(statement, values(args)).rowcount

    def batch_op(self, sql: str) -> Op:
        if not self.shape or self.shape["kind"] != "insert":
            raise Unsupported(f"{self.name}: a batch is an insert of rows (execute(insert(table), [rows])); this "
                              "statement is not one")
        conn, (statement, values) = self.conn, self._statement(self.shape)
        return self.in_transaction(lambda group: conn.execute(statement, [values(row) for row in group]))

    def load_op(self, sql: str, load: dict) -> Op:
        """Core has no relations: the statements a Core user writes by hand for each strategy,
        as constructs (``CoreFetch``), run by the strategy's one implementation."""
        shape = self.shape
        if not shape or not shape.get("table_columns"):
            raise Unsupported(f"{self.name}: a load's parents are a select of a table of the suite")
        return loader(CoreFetch(self, shape, load), load, shape["table_columns"], shape["key"])


class CoreFetch:
    """A load's statements as a Core user writes them by hand (a ``Fetch`` of
    pyworker/association.py), on the layer's connection."""

    def __init__(self, layer: CoreLayer, shape: dict, load: dict) -> None:
        self.conn = layer.conn
        self.parents_statement, self.values = layer._statement(shape)
        parents = self.parents_statement.subquery("p0")
        tables, outer = [parents], parents
        self.ones, self.manys = [], []
        for k, level in enumerate(load["levels"], start=1):
            child = sa.table(level["table"], *(sa.column(c) for c in level["table_columns"]))
            fk = child.c[level["column"]]
            self.ones.append(sa.select(child).where(fk == sa.bindparam("key")))
            self.manys.append(sa.select(child).where(fk.in_(sa.bindparam("keys", expanding=True))))
            alias = child.alias(f"p{k}")
            outer = outer.outerjoin(alias, alias.c[level["column"]] == tables[-1].c[level["parent_column"]])
            tables.append(alias)
        self.joined_statement = sa.select(*tables).select_from(outer)

    def parents(self, args):
        return self.conn.execute(self.parents_statement, self.values(args)).all()

    def one(self, level, value):
        return self.conn.execute(self.ones[level], {"key": value}).all()

    def many(self, level, values):
        return self.conn.execute(self.manys[level], {"keys": values}).all()

    def joined(self, args):
        return self.conn.execute(self.joined_statement, self.values(args)).all()


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

    def connections(self) -> list:
        return [self.conn, self.cached]

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
                        "table's columns and primary key; columns untyped (values as the driver reads them); a "
                        "relationship() per association a load step follows (parent → children, one-to-many, "
                        "primaryjoin parent.key == foreign(child.fk), lazy='select' as declared by default), named "
                        "after the child table",
            "session": "a new Session per operation on the worker's connection (a session per request): its identity "
                       "map starts empty, so no read is answered from it; autoflush and expire_on_commit as default",
            "reads": "by primary key: session.get(Entity, key, options=[load_only(Entity.a, Entity.b)]); a select "
                     "of one table's columns: session.scalars(select(Entity).options(load_only(Entity.a, Entity.b))"
                     ".where(...).order_by(...).limit(...).offset(...)), each value read from the entity's attribute; "
                     "load_only of the step's columns (the option built once per step, with the statement), to which "
                     "SQLAlchemy adds the primary key (the identity map needs it); SELECT * or every column: no "
                     "option, "
                     "whole entities; joins and aggregates: session.execute(select(Entity.a, "
                     "Other.b, func.count()…).select_from(Entity).join(Other, Entity.k == Other.fk, isouter=…)"
                     ".where(...).group_by(...).order_by(...)), Row objects; the conditions as Core's (statements)",
            "writes": "insert: session.add(Entity(...)), commit; update by primary key: session.get, set the "
                      "attributes, commit (a SELECT then an UPDATE, the unit of work); any other update or delete: "
                      "an ORM-enabled update(Entity).where(...).values(col=value or Entity.col + value) / "
                      "delete(Entity).where(...) through session.execute, synchronize_session as default ('auto': "
                      "'evaluate' where SQLAlchemy can evaluate the condition in Python, else 'fetch', which adds "
                      "RETURNING of the keys, or a SELECT first on MariaDB), commit",
            "load": "through the relationships, the parents by session.scalars(select(Parent).where(...)"
                    ".options(...)): lazy = lazyload(Parent.children).lazyload(Child.children), each parent's "
                    "collection then each child's touched (a SELECT per parent and per child); joined = "
                    "joinedload(...).joinedload(...) (one SELECT of LEFT OUTER JOINs, Result.unique()); selectin = "
                    "selectinload(...).selectinload(...) (a SELECT … IN per level, SQLAlchemy's batches of 500 keys); "
                    "every entity read once from the session's identity map, its values from its attributes",
            "statements": "a statement of no shape, or of a table not mapped: session.execute(text(...)), answered "
                          "as api raw",
            "rows": "entities; each value read from its attribute (joins, aggregates and raw SQL: Row objects)",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        opened = super().open(endpoint, options)
        self.registry, self.entities, self.relations = sa.orm.registry(), {}, {}
        return opened

    def _entity(self, name: str, columns: list[str], key: list[str]):
        """The mapped class of a table of the suite (made once per worker)."""
        if name not in self.entities:
            if not key:
                raise Unsupported(f"{self.name}: table {name} has no primary key, and an ORM entity needs one")
            table = sa.Table(name, self.registry.metadata, *(sa.Column(c, primary_key=c in key) for c in columns))
            self.entities[name] = self.registry.map_imperatively(type(f"Entity_{name}", (), {}), table).class_
        return self.entities[name]

    def _entity_of(self, name: str, shape: dict):
        info = shape["tables"][name]
        return self._entity(name, info["columns"], info["key"])

    def _mapped(self) -> dict | None:
        """The step's shape when the ORM can map every table it names; else None (raw SQL
        through the session, answered as api raw)."""
        shape = self.shape
        if not shape or not shape.get("table_columns"):
            return None
        tables = shape.get("tables") or {}
        named = [shape["table"], *(j["table"] for j in shape.get("joins") or ())]
        return shape if all(t in tables for t in named) else None

    def _orm_statement(self, shape: dict, whole: bool = False):
        builder = Builder(lambda name: self._entity_of(name, shape),
                          lambda ref: getattr(self._entity_of(ref["table"], shape), ref["column"]))
        return builder.statement(shape, self._entity_of(shape["table"], shape) if whole else None)

    @staticmethod
    def _entities_read(shape: dict) -> bool:
        """A select the ORM answers with entities: of columns of its one table, no aggregate, no group."""
        return (not shape.get("joins") and not shape.get("group")
                and all("fn" not in i and i["table"] == shape["table"] for i in shape["items"]))

    def _load_only(self, entity, shape: dict) -> list:
        """``[load_only(Entity.a, …)]`` for an entities read of some of its table's columns, as
        SQLAlchemy's users load part of an entity (SQLAlchemy selects the primary key besides);
        none for ``SELECT *`` or every column, read as whole entities."""
        columns = some_columns(shape) if self._entities_read(shape) else []
        return [sa.orm.load_only(*(getattr(entity, c) for c in columns))] if columns else []

    @staticmethod
    def _by_key(shape: dict) -> dict[str, int] | None:
        """The key's columns → their markers, when the condition is exactly the table's key by
        equalities (a find by key: session.get); else None."""
        where = shape.get("where")
        if not where or set(where) != set(shape["key"]):
            return None
        terms = shape["filter"].get("and") or [shape["filter"]]
        return {t["column"]["column"]: t["args"][0]["param"] for t in terms}

    def scan_op(self, sql: str) -> Op:
        return self._read(sql, self.conn)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn = self.active = self.use(mode)
        shape = self._mapped()
        if reads or shape is None:
            return self._read(sql, conn) if reads else self._raw_write(sql, conn)
        entity, Session = self._entity_of(shape["table"], shape), sa.orm.Session
        if shape["kind"] == "insert":
            columns = shape["columns"]

            def insert(args):
                with Session(conn) as session:
                    session.add(entity(**dict(zip(columns, args))))
                    session.commit()
                return 1
            return insert
        found = self._by_key(shape) if shape["kind"] == "update" else None
        if found is not None:
            key = [found[k] for k in shape["key"]]
            sets = [(s["column"], s["arg"]["param"]) for s in shape["set"]]

            def update(args):
                with Session(conn) as session:
                    row = session.get(entity, tuple(args[i] for i in key))
                    if row is None:
                        return 0
                    for column, i in sets:
                        setattr(row, column, args[i])
                    session.commit()
                return 1
            return update
        statement, values = self._orm_statement(shape)

        def bulk(args):  # an ORM-enabled update() or delete() of the rows that match
            with Session(conn) as session:
                changed = session.execute(statement, values(args)).rowcount
                session.commit()
            return changed
        return bulk

    def _read(self, sql: str, conn) -> Op:
        shape, Session = self._mapped(), sa.orm.Session
        if shape is None or shape["kind"] != "select":
            statement, values = self._raw(sql)

            def raw(args):
                with Session(conn) as session:
                    return session.execute(statement, values(args)).all()
            return raw
        entity = self._entity_of(shape["table"], shape)
        columns, only = [i["column"] for i in shape["items"]], self._load_only(entity, shape)
        found = self._by_key(shape)
        if found is not None:
            key = [found[k] for k in shape["key"]]

            def get(args):
                with Session(conn) as session:
                    row = session.get(entity, tuple(args[i] for i in key), options=only)
                    return [] if row is None else [tuple(getattr(row, c) for c in columns)]
            return get
        if not self._entities_read(shape):
            statement, values = self._orm_statement(shape)

            def rows(args):
                with Session(conn) as session:
                    return session.execute(statement, values(args)).all()
            return rows
        statement, values = self._orm_statement(shape, whole=True)
        statement = statement.options(*only)

        def select(args):
            with Session(conn) as session:
                found = session.scalars(statement, values(args)).all()
                return [tuple(getattr(row, c) for c in columns) for row in found]
        return select

    def _raw_write(self, sql: str, conn) -> Op:
        (statement, values), Session = self._raw(sql), sa.orm.Session

        def write(args):
            with Session(conn) as session:
                changed = session.execute(statement, values(args)).rowcount
                session.commit()
            return changed
        return write

    def batch_op(self, sql: str) -> Op:
        shape = self._mapped()
        if shape is None or shape["kind"] != "insert":
            raise Unsupported(f"{self.name}: a batch is an insert of entities (session.execute(insert(Entity), "
                              "[rows])); this statement is not one")
        entity, columns, conn, Session = self._entity_of(shape["table"], shape), shape["columns"], self.conn, \
            sa.orm.Session

        def write_group(group):
            with Session(conn) as session:
                session.execute(sa.insert(entity), [dict(zip(columns, row)) for row in group])
                session.commit()
        return self.in_transaction(write_group)

    # loading associations, through relationships
    def _relation(self, parent, parent_column: str, child, column: str) -> str:
        """The one-to-many relationship() from ``parent`` to ``child`` (child.column references
        parent.parent_column), added to the parent's mapper the first time a load follows it;
        its attribute is named after the child table."""
        key = (parent, parent_column, child, column)
        if key not in self.relations:
            mapper, table = sa.inspect(parent), child.__table__
            name = table.name
            while name in mapper.attrs or hasattr(parent, name):
                name += "_"
            mapper.add_property(name, sa.orm.relationship(
                child, primaryjoin=parent.__table__.c[parent_column] == sa.orm.foreign(table.c[column]),
                lazy="select"))
            self.relations[key] = name
        return self.relations[key]

    def load_op(self, sql: str, load: dict) -> Op:
        shape = self._mapped()
        if shape is None or shape["kind"] != "select" or not self._entities_read(shape):
            raise Unsupported(f"{self.name}: a load's parents are a select of a table of the suite")
        above = parent = self._entity_of(shape["table"], shape)
        chain = []  # (the relationship's attribute on the level above, the level's columns)
        for level in load["levels"]:
            child = self._entity(level["table"], level["table_columns"], level["key"])
            chain.append((self._relation(above, level["parent_column"], child, level["column"]),
                          level["table_columns"], above))
            above = child
        strategy = load["strategy"]
        option = getattr(sa.orm, _LOADS[strategy])(getattr(parent, chain[0][0]))
        for name, _, holder in chain[1:]:
            option = getattr(option, _LOADS[strategy])(getattr(holder, name))
        statement, values = self._orm_statement(shape, whole=True)
        statement = statement.options(option)
        conn, Session, columns, joined = self.conn, sa.orm.Session, shape["table_columns"], strategy == "joined"
        levels = [(name, level_columns) for name, level_columns, _ in chain]

        def load_entities(args):
            with Session(conn) as session:
                result = session.scalars(statement, values(args))
                above = (result.unique() if joined else result).all()  # joined rows repeat each parent
                rows = [tuple(getattr(e, c) for c in columns) for e in above]
                for name, level_columns in levels:  # each collection touched: a lazy load queries here
                    above = [child for e in above for child in getattr(e, name)]
                    rows += [tuple(getattr(e, c) for c in level_columns) for e in above]
                return rows
        return load_entities


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
