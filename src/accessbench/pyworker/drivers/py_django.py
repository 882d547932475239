"""py-django+psycopg: the Django ORM, standalone, over psycopg 3 as py-psycopg runs it, so that
the cells side by side give what the ORM costs.

Django is used as a script that imports it uses it: ``settings.configure()`` in the worker (no
project, no installed apps), no migrations ever run, no table created or dropped. A model per
table of the suite is made when a step first needs it, from the step's ``shape`` (the table's
columns, their SQL types and its primary key; ``Meta.managed = False``); each step kind goes
through the ORM's own API: ``objects.get(pk=…)`` for a read by key, a QuerySet iterated into
model instances for any other select, ``objects.create`` for an insert, get / set / ``save
(update_fields=…)`` for an update by key, ``QuerySet.update`` / ``delete`` otherwise, and
``bulk_create`` in ``transaction.atomic()`` for a batch group. A statement of no plain shape
goes through ``connection.cursor()``, Django's raw-SQL API. Django has no identity map: each
operation builds and evaluates a new QuerySet, so no read is answered from a cache.

The connection is psycopg's, configured through Django's ``OPTIONS`` as py-psycopg's is:
server-side binding (Django's own default is psycopg's ClientCursor, which merges the values
into the text on the client) and no automatic preparation, except for ``prepared`` steps.
"""

from __future__ import annotations

import os
import re

import django
import django.db
import psycopg
from django.conf import settings as django_settings

from ..base import Driver as BaseDriver, Op, Unsupported
from .pg import LIBPQ_READ_ONLY, connect_kwargs, libpq_tls, libpq_version, tls_setting

ALIAS = "default"  # the database the ORM uses when a query names none

# The suite's SQL types (as the shape's ``table_types`` gives them) → Django model fields.
_SIZED = re.compile(r"^(char|character|varchar)\((\d+)\)$")
_NUMERIC = re.compile(r"^(numeric|decimal)\((\d+), ?(\d+)\)$")
_PLAIN = {
    "integer": "IntegerField", "int": "IntegerField", "smallint": "SmallIntegerField", "bigint": "BigIntegerField",
    "text": "TextField", "timestamp": "DateTimeField", "date": "DateField", "boolean": "BooleanField",
    "double": "FloatField", "real": "FloatField", "bytes": "BinaryField",
}


def _configure() -> None:
    """Django's settings, once per process: no project, no apps, no query log, naive
    datetimes. The database itself is set when the worker opens (``Driver.open``)."""
    if django_settings.configured:
        return
    # Steps under load run the synchronous ops one at a time inside an asyncio coroutine (the
    # host's open-loop scheduler, pyworker/load.py), never two at once: Django's guard against
    # database calls from an event loop's thread would refuse them, so it is told they are safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    django_settings.configure(
        DEBUG=False,           # no query log (connection.queries), no debug cursor
        USE_TZ=False,          # timestamp columns as naive datetimes, as py-psycopg reads them
        TIME_ZONE=None,        # with USE_TZ off: no SET TIME ZONE on each new connection
        DATABASES={},
        INSTALLED_APPS=[],
        LOGGING_CONFIG=None,   # the worker's stderr is its log; Django configures no logging
    )
    django.setup()


def _field(sql_type: str, column: str, primary: bool, null: bool):
    from django.db import models

    kwargs = {"db_column": column, "primary_key": primary, "null": null}
    sql_type = sql_type.strip().lower()
    if m := _SIZED.match(sql_type):
        return models.CharField(max_length=int(m.group(2)), **kwargs)
    if m := _NUMERIC.match(sql_type):
        return models.DecimalField(max_digits=int(m.group(2)), decimal_places=int(m.group(3)), **kwargs)
    if sql_type in _PLAIN:
        return getattr(models, _PLAIN[sql_type])(**kwargs)
    raise Unsupported(f"py-django+psycopg: column {column} is {sql_type}, a type with no Django field here")


def _attribute(column: str, taken: set[str]) -> str:
    """The model attribute of a column: its own name where Django allows it as a field name."""
    name = column if column.isidentifier() and "__" not in column and not column.endswith("_") else ""
    if not name or name in ("pk", "objects", "save", "delete", "check", "clean") or name in taken:
        name = f"col_{len(taken)}"
    taken.add(name)
    return name


class Driver(BaseDriver):
    name = "py-django+psycopg"
    driver = "django"
    layer = "Django ORM"
    dbms = ("postgresql",)
    paramstyle = "format"  # connection.cursor(): %s markers
    modes = ("extended", "prepared")
    batch_style = ("Model.objects.bulk_create(instances) in transaction.atomic() per group: Django 5.2's one "
                   "INSERT … SELECT * FROM UNNEST(an array per column) on PostgreSQL")
    db_errors = (django.db.Error, psycopg.Error)

    def __init__(self) -> None:
        self.models: dict[str, tuple] = {}  # table → (model, {column: attribute}), made once per worker
        self.db = None       # the ORM's default database: a DatabaseWrapper
        self.reaches = None  # the DATABASES entry it was made from

    def version(self) -> str:
        return f"{django.__version__} (psycopg {psycopg.__version__})"

    def sqlstate(self, error: BaseException) -> str | None:
        """The SQLSTATE of psycopg's error, which Django wraps (its ``__cause__``)."""
        cause = error if isinstance(error, psycopg.Error) else error.__cause__
        return getattr(cause, "sqlstate", None)

    def settings(self) -> dict[str, str]:
        return {
            "layer": f"Django {django.__version__} ORM, standalone: settings.configure() in the worker (no project, "
                     "no installed apps), no migrations, no table created or dropped",
            "models": "one Model per table of the suite, made when a step first needs it from the table's columns, SQL "
                      "types and primary key (a composite key: CompositePrimaryKey); Meta.managed = False, db_table "
                      "= the table; non-key fields null=True; in an Apps registry of the worker's own",
            "database": "ENGINE django.db.backends.postgresql (psycopg 3); CONN_MAX_AGE None (the session's one "
                        "persistent connection), CONN_HEALTH_CHECKS False, AUTOCOMMIT True, ATOMIC_REQUESTS False; "
                        "host, port, TLS (OPTIONS, below) and search_path (OPTIONS 'options') as py-psycopg",
            "binding": "OPTIONS server_side_binding=True: psycopg's server-side binding cursor, values sent apart "
                       "from the text (Django's default, False, has psycopg's ClientCursor merge them into it)",
            "prepare_threshold": "OPTIONS prepare_threshold=None (Django's default too): no automatic preparation",
            "async guard": "DJANGO_ALLOW_ASYNC_UNSAFE=true: steps under load call the synchronous ops one at a time "
                           "from the host's asyncio scheduler, which Django's event-loop check would refuse",
            "DEBUG": "False: no query log (connection.queries), no debug cursor wrapper; LOGGING_CONFIG None",
            "time zones": "USE_TZ False, TIME_ZONE None: no SET TIME ZONE on connect; timestamp columns read as "
                          "naive datetimes, as py-psycopg reads them",
            "tls": "OPTIONS, passed by Django to psycopg.connect: " + tls_setting(psycopg.pq.version()),
            "read_only": "OPTIONS 'options', passed by Django to psycopg.connect, as py-psycopg: " + LIBPQ_READ_ONLY,
            "implementation": psycopg.pq.__impl__,
            "libpq": libpq_version(psycopg.pq.version()),
            "cursor": "a new Django cursor per statement (the ORM's own way), client-side (buffered), text results",
            "no identity map": "Django has none: each operation builds and evaluates a new QuerySet (its result "
                               "cache lives and dies with it), so no read is answered from a cache; no query cache",
            "reads": "by primary key: Model.objects.get(pk=key) (Django adds LIMIT 21); any other select: "
                     "Model.objects.filter(column=value, …) iterated into model instances (every column of the "
                     "table loaded), each value read from the instance's attribute",
            "writes": "insert: Model.objects.create(**values) (one INSERT); update by primary key: objects.get(pk=…), "
                      "set the fields, save(update_fields=[…]) (a SELECT then an UPDATE); any other update: "
                      "filter(…).update(…); delete: filter(…).delete() (Django's collector: a fast delete inside "
                      "transaction.atomic)",
            "statements": "a statement of no plain shape: connection.cursor().execute(sql, params), Django's raw-SQL "
                          "API; rows as the cursor returns them",
            "transactions": "commit_every: transaction.set_autocommit(False) … transaction.commit(), Django's manual "
                            "transactions (psycopg sends BEGIN before the first statement); a batch group: "
                            "transaction.atomic()",
            "literal": "unsupported: Django binds every value (the ORM and cursor.execute(sql, params) send values "
                       "apart from the SQL text, never the caller's literal statement)",
            "extended": "server-side binding, prepare_threshold None: parsed every time, as py-psycopg's extended",
            "prepared": "prepare_threshold=0 on the open connection for the step (as OPTIONS['prepare_threshold'] "
                        "= 0): psycopg prepares each statement at its first execution, then executes it prepared",
        }

    # connection life
    def database(self, endpoint: dict) -> dict:
        """``DATABASES['default']`` for the endpoint, reaching it as py-psycopg does."""
        libpq = connect_kwargs(endpoint, psycopg.pq.version())
        # TLS as py-psycopg connects: libpq's keywords, which Django hands psycopg from OPTIONS
        options = {**libpq_tls(endpoint, psycopg.pq.version()), "server_side_binding": True, "prepare_threshold": None}
        if "options" in libpq:  # the search path and read_only's setting, in the startup packet
            options["options"] = libpq["options"]
        return {
            "ENGINE": "django.db.backends.postgresql", "NAME": endpoint["database"], "USER": endpoint["user"],
            "PASSWORD": endpoint.get("password") or "", "HOST": str(endpoint["host"]), "PORT": str(endpoint["port"]),
            "CONN_MAX_AGE": None, "CONN_HEALTH_CHECKS": False, "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False,
            "TIME_ZONE": None, "OPTIONS": options,
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        _configure()
        from django.db import connections

        database = self.database(endpoint)
        if database != self.reaches:  # the ORM's default database, made once per endpoint
            connections.settings[ALIAS] = connections.configure_settings({ALIAS: dict(database)})[ALIAS]
            self.db = connections[ALIAS] = connections.create_connection(ALIAS)
            self.reaches = database
        # Connected as Django connects lazily (again, after a close: a request of the
        # per-request policy): psycopg.connect, then Django's set-up of the connection.
        self.db.ensure_connection()
        self.conn = self.db
        info = self.db.connection.info
        return {"server_pid": info.backend_pid, "server_version": info.parameter_status("server_version")}

    def close(self) -> None:
        self.db.close()

    def execute(self, sql: str) -> None:
        """The host's transaction control through Django's transaction API, so that the ORM
        knows the transaction it runs in; anything else on a Django cursor."""
        db, word = self.db, sql.strip().upper()
        if word == "BEGIN":
            db.set_autocommit(False)
        elif word in ("COMMIT", "ROLLBACK"):
            if not db.get_autocommit():
                if word == "COMMIT":
                    db.commit()
                else:
                    db.rollback()
                db.set_autocommit(True)
        else:
            with db.cursor() as cursor:
                cursor.execute(sql)

    def recover(self) -> None:
        db = self.db
        if db.in_atomic_block:  # an atomic block left by an error: Django rolls back on its way out
            return
        if not db.get_autocommit():
            db.rollback()
            db.set_autocommit(True)

    def use(self, mode: str) -> None:
        """A mode is psycopg's, under the ORM: preparation set on the open connection."""
        self.db.ensure_connection()
        self.db.connection.prepare_threshold = 0 if mode == "prepared" else None

    def end_step(self) -> None:
        if self.db.connection is not None:
            self.db.connection.prepare_threshold = None

    def connect_op(self, endpoint: dict) -> Op:
        from django.db import connections

        # A second DatabaseWrapper (made before the clock), connected and closed as Django does
        # for a request without persistent connections: connect() runs its whole set-up.
        wrapper = connections.create_connection(ALIAS)

        def connect(_):
            wrapper.ensure_connection()
            wrapper.close()
            return 0

        return connect

    # models, from the step's shape
    def _model(self, shape: dict):
        """The model of the shape's table and its attribute per column (made once per worker)."""
        table = shape["table"]
        if table not in self.models:
            from django.apps.registry import Apps
            from django.db import models

            key, columns = shape.get("key") or [], shape["table_columns"]
            if not key:
                raise Unsupported(f"{self.name}: table {table} has no primary key, and a Django model needs one "
                                  "(it would add an id column the table does not have)")
            if not hasattr(self, "apps"):
                self.apps = Apps(())  # the worker's own registry: its models never meet a project's
            taken: set[str] = set()
            attrs = {c: _attribute(c, taken) for c in columns}
            fields = {attrs[c]: _field(t, c, primary=key == [c], null=c not in key)
                      for c, t in zip(columns, shape["table_types"])}
            if len(key) > 1:
                fields["pk"] = models.CompositePrimaryKey(*(attrs[c] for c in key))
            meta = type("Meta", (), {"app_label": "accessbench", "db_table": table, "managed": False,
                                     "apps": self.apps})
            model = type(f"Table{len(self.models)}", (models.Model,), {"__module__": __name__, "Meta": meta, **fields})
            self.models[table] = (model, attrs)
        return self.models[table]

    def _mapped(self) -> dict | None:
        """The step's shape when a model can be made for its table; else None (raw SQL)."""
        return self.shape if self.shape and self.shape.get("table_columns") else None

    @staticmethod
    def _key(shape: dict, found: dict):
        """The primary key value ``pk=`` takes: the value, or the tuple in the key's order."""
        key = shape["key"]
        return found[key[0]] if len(key) == 1 else tuple(found[k] for k in key)

    # ops, by the step's shape
    def scan_op(self, sql: str) -> Op:
        shape = self._mapped()
        if shape is None or shape["kind"] != "select":
            return self._raw(sql, reads=True, params=False)
        return self._select(shape)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        self.use(mode)
        shape = self._mapped()
        if shape is None or (reads and shape["kind"] != "select"):
            return self._raw(sql, reads, params=True)
        if shape["kind"] == "select":
            return self._select(shape)
        model, attrs = self._model(shape)
        objects, columns, where = model._default_manager, shape["columns"], shape["where"]
        if shape["kind"] == "insert":
            names = [attrs[c] for c in columns]

            def insert(args):
                objects.create(**dict(zip(names, args)))
                return 1
            return insert
        if shape["kind"] == "update" and where and set(where) == set(shape["key"]):
            names, n, key = [attrs[c] for c in columns], len(columns), self._key

            def update(args):  # load, modify, save: as Django users update one object
                try:
                    row = objects.get(pk=key(shape, dict(zip(where, args[n:]))))
                except model.DoesNotExist:
                    return 0
                for name, value in zip(names, args[:n]):
                    setattr(row, name, value)
                row.save(update_fields=names)
                return 1
            return update
        filters = [attrs[c] for c in where]
        if shape["kind"] == "update":
            names, n = [attrs[c] for c in columns], len(columns)
            return lambda args: objects.filter(**dict(zip(filters, args[n:]))).update(**dict(zip(names, args[:n])))
        return lambda args: objects.filter(**dict(zip(filters, args))).delete()[0]

    def _select(self, shape: dict) -> Op:
        model, attrs = self._model(shape)
        objects, where = model._default_manager, shape["where"]
        names = [attrs[c] for c in shape["columns"]]
        if where and set(where) == set(shape["key"]):
            key = self._key

            def get(args):
                try:
                    row = objects.get(pk=key(shape, dict(zip(where, args))))
                except model.DoesNotExist:
                    return []
                return [tuple(getattr(row, name) for name in names)]
            return get
        filters = [attrs[c] for c in where]

        def select(args):
            rows = objects.filter(**dict(zip(filters, args or ())))
            return [tuple(getattr(row, name) for name in names) for row in rows]
        return select

    def _raw(self, sql: str, reads: bool, params: bool) -> Op:
        """Django's raw-SQL API: a cursor from the connection, the statement with %s markers
        (a scan's statement as it is, executed without parameters, as py-psycopg's)."""
        db, statement = self.db, self.markers(sql) if params else sql

        def raw(args):
            with db.cursor() as cursor:
                cursor.execute(statement, args if params else None)
                return cursor.fetchall() if reads else cursor.rowcount
        return raw

    def batch_op(self, sql: str) -> Op:
        shape = self._mapped()
        if shape is None or shape["kind"] != "insert":
            raise Unsupported(f"{self.name}: a batch is a bulk_create of model instances; this statement is not an "
                              "insert into a table of the suite")
        from django.db import transaction

        model, attrs = self._model(shape)
        objects, names = model._default_manager, [attrs[c] for c in shape["columns"]]

        def batch(group):
            with transaction.atomic(using=ALIAS):
                objects.bulk_create([model(**dict(zip(names, row))) for row in group])
            return len(group)
        return batch
