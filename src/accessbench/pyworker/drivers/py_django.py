"""py-django+psycopg: the Django ORM, standalone, over psycopg 3 as py-psycopg runs it, so that
the cells side by side give what the ORM costs.

Django is used as a script that imports it uses it: ``settings.configure()`` in the worker (no
project, no installed apps), no migrations ever run, no table created or dropped. Models are
made when a step first needs them, from the step's ``shape`` (each table's columns, their SQL
types, its primary key and the columns referencing other tables, which become ForeignKeys;
``Meta.managed = False``); each step kind goes through the ORM's own API: ``objects.get(pk=…)``
for a read by key, a QuerySet — ``filter``/``Q``/``order_by``/slicing, ``values_list`` across
relations, ``values().annotate()`` for a GROUP BY — for any other select (``Query``), both with
``only(…)`` where the step reads some of a table's columns into model instances,
``objects.create`` for an insert, get / set / ``save(update_fields=…)`` for an update by key,
``QuerySet.update`` / ``delete`` otherwise, and ``bulk_create`` in ``transaction.atomic()`` for
a batch group; associations load through the reverse relations, lazily or with
``prefetch_related``. A statement of no shape goes through ``connection.cursor()``, Django's
raw-SQL API, and the answer says so (``api``: raw). Django has no identity map: each operation
builds and evaluates a new QuerySet, so no read is answered from a cache. The statements a
verification pass sends are counted by ``connection.execute_wrapper``, there for that pass only.

The connection is psycopg's, configured through Django's ``OPTIONS`` as py-psycopg's is:
server-side binding (Django's own default is psycopg's ClientCursor, which merges the values
into the text on the client) and no automatic preparation, except for ``prepared`` steps.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import operator
import os
import re

import django
import django.db
import psycopg
from django.conf import settings as django_settings
from django.db.models import Avg, Count, F, Max, Min, Q, Sum

from ..association import Statements
from ..base import Driver as BaseDriver
from ..base import Op, Unsupported, shapes, some_columns
from .pg import LIBPQ_READ_ONLY, connect_kwargs, libpq_tls, libpq_version, tls_setting

ALIAS = "default"  # the database the ORM uses when a query names none

# What the Django ORM cannot express as a shape or a load asks, in the words hello gives.
NO_JOINED_LOAD = ("select_related() joins only along a ForeignKey's forward side (many-to-one, one-to-one); a "
                  "one-to-many collection has no JOIN loading in Django, whose eager loading of one is "
                  "prefetch_related() (a query per level: selectin)")
NO_FORWARD_LEFT_JOIN = ("a LEFT JOIN to the table a ForeignKey references: Django joins a non-null ForeignKey's target "
                        "with INNER JOIN (LEFT OUTER only for null=True, which would make every inner join through it "
                        "outer); a LEFT JOIN from the referenced table (its reverse relation) is mapped")
NO_NEGATION_ACROSS = ("<> on a column reached through a one-to-many relation: Django negates a condition across a "
                      "multi-valued relation as a subquery (rows with no related row matching), not per joined row")
LIKE_PREFIX = ("LIKE maps to __startswith, which takes a prefix: a pattern of text then one %, no other % or _ "
               "(answered unsupported when a pattern is anything else, at the operation that meets it)")

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


# What settings() says of the models and the connection, and of the API each step goes through.
CONNECTION = {
    "models": "one Model per table of the suite, made when a step first needs it from the table's columns, SQL "
              "types and primary key (a composite key: CompositePrimaryKey); Meta.managed = False, db_table "
              "= the table; non-key fields null=True; a column referencing another table the step names: "
              "ForeignKey(that model, DO_NOTHING, db_column=the column, related_name=this table's name; not "
              "null, Django's default), named without its _id (user_id: user); made per set of tables a "
              "step names, in an Apps registry of their own (with an app config, so reverse relations "
              "resolve)",
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
}
API = {
    "cursor": "a new Django cursor per statement (the ORM's own way), client-side (buffered), text results",
    "no identity map": "Django has none: each operation builds and evaluates a new QuerySet (its result "
                       "cache lives and dies with it), so no read is answered from a cache; no query cache",
    "reads": "by primary key: Model.objects.only('a', 'b').get(pk=key) (Django adds LIMIT 21); a select of "
             "one table's columns: Model.objects.filter(...).only('a', 'b').order_by(...)[offset:offset + limit] "
             "iterated into model instances, each value read from the instance's attribute; only() of the step's "
             "columns, to which Django adds the primary key (the other fields deferred, never read); SELECT * or "
             "every column: no only(), whole instances; "
             "joins: filter(...).values_list('col', 'fk__col', 'related__col') through the ForeignKeys; "
             "aggregates: values('group col').annotate(Count('*'), Max('col')…).values_list(…) for GROUP BY, "
             "aggregate(…) without one (Avg of integers and Sum of bigints with output_field=DecimalField(), "
             "the numeric PostgreSQL answers, as the driver reads it); a QuerySet built anew per operation",
    "conditions": "filter(col=x, col__gt=x, col__lt=x, col__gte=x, col__lte=x, col__range=(a, b), "
                  "col__in=[…], col__isnull=True/False, col__startswith=prefix) for ANDed terms, Q(…) | Q(…) "
                  "for OR, ~Q(col=x) for <> (with col__isnull=False where the field is nullable: SQL's <> "
                  "never keeps NULL); a ForeignKey's column as fk__key (answered from the column itself)",
    "like": "unsupported at run time for a pattern that is not a prefix: " + LIKE_PREFIX,
    "joins": "inner join along a ForeignKey: values_list('fk__col') (INNER JOIN); from the referenced table: "
             "values_list('related__col') (LEFT OUTER JOIN), filter(related__isnull=False) for an inner "
             "join; unsupported: " + NO_FORWARD_LEFT_JOIN,
    "writes": "insert: Model.objects.create(**values) (one INSERT); update by primary key: objects.get(pk=…), "
              "set the fields, save(update_fields=[…]) (a SELECT then an UPDATE); any other update: "
              "filter(…).update(col=x, col=F('col') + x); delete: filter(…).delete() (Django's collector: a "
              "fast delete inside transaction.atomic)",
    "load": "through the ForeignKeys' reverse relations: lazy = the parents' QuerySet iterated, then "
            "parent.<children>.all() for each parent and child.<grandchildren>.all() for each child (a query "
            "each); selectin = prefetch_related('<children>__<grandchildren>') on the parents' QuerySet (a "
            "query per level, the keys read IN a list), then the same attribute access, from its cache; "
            "joined unsupported: " + NO_JOINED_LOAD,
    "statement count": "connection.execute_wrapper(counter), entered for a verification pass and left after "
                       "it, so the timed loop runs without it: the statements Django executes on its cursors "
                       "(transaction.atomic()'s BEGIN and COMMIT are psycopg's own, not counted)",
    "statements": "a statement of no shape, or of a table not mapped: connection.cursor().execute(sql, "
                  "params), Django's raw-SQL API, answered as api raw; rows as the cursor returns them",
    "transactions": "commit_every: transaction.set_autocommit(False) … transaction.commit(), Django's manual "
                    "transactions (psycopg sends BEGIN before the first statement); a batch group: "
                    "transaction.atomic()",
    "literal": "unsupported: Django binds every value (the ORM and cursor.execute(sql, params) send values "
               "apart from the SQL text, never the caller's literal statement)",
    "extended": "server-side binding, prepare_threshold None: parsed every time, as py-psycopg's extended",
    "prepared": "prepare_threshold=0 on the open connection for the step (as OPTIONS['prepare_threshold'] "
                "= 0): psycopg prepares each statement at its first execution, then executes it prepared",
}


class Driver(BaseDriver):
    name = "py-django+psycopg"
    driver = "django"
    layer = "Django ORM"
    dbms = ("postgresql",)
    paramstyle = "format"  # connection.cursor(): %s markers
    modes = ("extended", "prepared")
    kinds = (*BaseDriver.kinds, "load")
    batch_style = ("Model.objects.bulk_create(instances) in transaction.atomic() per group: Django 5.2's one "
                   "INSERT … SELECT * FROM UNNEST(an array per column) on PostgreSQL")
    db_errors = (django.db.Error, psycopg.Error)

    def __init__(self) -> None:
        self.models: dict[frozenset, dict] = {}  # the tables a step names → their models (Mapped), made once
        self.db = None       # the ORM's default database: a DatabaseWrapper
        self.reaches = None  # the DATABASES entry it was made from

    def version(self) -> str:
        return f"{django.__version__} (psycopg {psycopg.__version__})"

    def shapes(self) -> dict:
        return shapes({"load-joined": NO_JOINED_LOAD})

    def sqlstate(self, error: BaseException) -> str | None:
        """The SQLSTATE of psycopg's error, which Django wraps (its ``__cause__``)."""
        cause = error if isinstance(error, psycopg.Error) else error.__cause__
        return getattr(cause, "sqlstate", None)

    def settings(self) -> dict[str, str]:
        return {
            "layer": f"Django {django.__version__} ORM, standalone: settings.configure() in the worker (no project, "
                     "no installed apps), no migrations, no table created or dropped",
            **CONNECTION,
            "tls": "OPTIONS, passed by Django to psycopg.connect: " + tls_setting(psycopg.pq.version()),
            "read_only": "OPTIONS 'options', passed by Django to psycopg.connect, as py-psycopg: " + LIBPQ_READ_ONLY,
            "implementation": psycopg.pq.__impl__,
            "libpq": libpq_version(psycopg.pq.version()),
            **API,
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
    def _tables(self, shape: dict, load: dict | None = None) -> dict[str, dict]:
        """Every table the step names, as the shape (and a load's levels) describe it: columns,
        SQL types, key and the columns referencing other tables."""
        tables = {name: {**info, "references": dict(info.get("references") or {})}
                  for name, info in (shape.get("tables") or {}).items()}
        above = shape["table"]
        for level in (load or {}).get("levels", []):
            info = tables.setdefault(level["table"], {"columns": level["table_columns"], "types": level["table_types"],
                                                      "key": level["key"], "references": {}})
            info["references"][level["column"]] = {"table": above, "column": level["parent_column"]}
            above = level["table"]
        return tables

    def _models(self, tables: dict[str, dict]) -> dict[str, Mapped]:
        """A model per table of ``tables``, with a ForeignKey for each column referencing another
        of them; made once per worker and set of tables, in an app registry of their own (a
        table has a ForeignKey where the step names the table it references, a plain field
        where it does not)."""
        group = frozenset(tables)
        if group not in self.models:
            for name, info in tables.items():
                if not info["key"]:
                    raise Unsupported(f"{self.name}: table {name} has no primary key, and a Django model needs one "
                                      "(it would add an id column the table does not have)")
            self.models[group] = models_of(tables)
        return self.models[group]

    def _mapped(self) -> dict | None:
        """The step's shape when a model can be made for every table it names; else None (raw SQL)."""
        shape = self.shape
        if not shape or not shape.get("table_columns"):
            return None
        named = [shape["table"], *(j["table"] for j in shape.get("joins") or ())]
        return shape if all(t in (shape.get("tables") or {}) for t in named) else None

    @staticmethod
    def _by_key(shape: dict) -> dict[str, int] | None:
        """The key's columns → their markers, when the condition is exactly the table's key by
        equalities (a find by key); else None."""
        where = shape.get("where")
        if not where or set(where) != set(shape["key"]):
            return None
        terms = shape["filter"].get("and") or [shape["filter"]]
        return {t["column"]["column"]: t["args"][0]["param"] for t in terms}

    @staticmethod
    def _pk(shape: dict, found: dict[str, int], args):
        """The primary key value ``pk=`` takes: the value, or the tuple in the key's order."""
        key = shape["key"]
        return args[found[key[0]]] if len(key) == 1 else tuple(args[found[k]] for k in key)

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
        models = self._models(self._tables(shape))
        mapped = models[shape["table"]]
        model, objects = mapped.model, mapped.model._default_manager
        if shape["kind"] == "insert":
            names = [mapped.attr[c] for c in shape["columns"]]

            def insert(args):
                objects.create(**dict(zip(names, args)))
                return 1
            return insert
        found = self._by_key(shape) if shape["kind"] == "update" else None
        if found is not None:
            pk = self._pk
            sets = [(mapped.attr[s["column"]], s["arg"]["param"]) for s in shape["set"]]
            names = [name for name, _ in sets]

            def update(args):  # load, modify, save: as Django users update one object
                try:
                    row = objects.get(pk=pk(shape, found, args))
                except model.DoesNotExist:
                    return 0
                for name, i in sets:
                    setattr(row, name, args[i])
                row.save(update_fields=names)
                return 1
            return update
        query = Query(self.name, shape, models)
        if shape["kind"] == "update":
            sets = [(mapped.attr[s["column"]], s["op"] == "+", operand(s["arg"])) for s in shape["set"]]

            def change(args):  # filter(…).update(col=value, col=F("col") + value)
                return query.filtered(args).update(**{name: F(name) + value(args) if adds else value(args)
                                                      for name, adds, value in sets})
            return change
        return lambda args: query.filtered(args).delete()[0]

    def _select(self, shape: dict) -> Op:
        models = self._models(self._tables(shape))
        mapped = models[shape["table"]]
        model, objects = mapped.model, mapped.model._default_manager
        found = self._by_key(shape)
        if found is None:
            return Query(self.name, shape, models).reader()
        names, pk, only = [mapped.attr[i["column"]] for i in shape["items"]], self._pk, mapped.only(shape)

        def get(args):
            try:
                row = (objects.only(*only) if only else objects).get(pk=pk(shape, found, args))
            except model.DoesNotExist:
                return []
            return [tuple(getattr(row, name) for name in names)]
        return get

    def _raw(self, sql: str, reads: bool, params: bool) -> Op:
        """Django's raw-SQL API: a cursor from the connection, the statement with %s markers
        (a scan's statement as it is, executed without parameters, as py-psycopg's); the answer
        then says api raw."""
        self.api = "raw"
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

        mapped = self._models(self._tables(shape))[shape["table"]]
        model, objects = mapped.model, mapped.model._default_manager
        names = [mapped.attr[c] for c in shape["columns"]]

        def batch(group):
            with transaction.atomic(using=ALIAS):
                objects.bulk_create([model(**dict(zip(names, row))) for row in group])
            return len(group)
        return batch

    # loading associations, through the reverse relations of the ForeignKeys
    def load_op(self, sql: str, load: dict) -> Op:
        shape = self._mapped()
        if shape is None or shape["kind"] != "select":
            raise Unsupported(f"{self.name}: a load's parents are a select of a table of the suite")
        strategy = load["strategy"]
        if strategy not in ("lazy", "selectin"):
            raise Unsupported(f"{self.name} has no {strategy} load: {NO_JOINED_LOAD}")
        models = self._models(self._tables(shape, load))
        parents = Query(self.name, shape, models)
        parent = models[shape["table"]]
        names = [parent.attr[c] for c in shape["table_columns"]]
        chain = []  # each level: the reverse relation from the level above, the level's attributes
        for level in load["levels"]:
            below = models[level["table"]]
            chain.append((below.related[level["column"]], [below.attr[c] for c in level["table_columns"]]))
        prefetch = "__".join(related for related, _ in chain)
        selectin = strategy == "selectin"

        def load_entities(args):
            found = parents.page(parents.filtered(args), args)
            if selectin:  # a query per level, the keys read IN a list
                found = found.prefetch_related(prefetch)
            above = list(found)
            rows = [tuple(getattr(e, n) for n in names) for e in above]
            for related, columns in chain:  # lazy: each related manager's all() queries here
                above = [child for e in above for child in getattr(e, related).all()]
                rows += [tuple(getattr(e, n) for n in columns) for e in above]
            return rows
        return load_entities

    # the statements a verification pass sends, counted by Django's own hook
    def count_statements(self, kind: str):
        if kind == "connect":
            return None
        counter = self.counter = Statements()

        def count(execute, sql, params, many, context):
            counter.n += 1
            return execute(sql, params, many, context)

        self.counting = contextlib.ExitStack()
        self.counting.enter_context(self.db.execute_wrapper(count))
        return counter

    def stop_counting(self) -> None:
        if getattr(self, "counting", None) is not None:
            self.counting.close()
        self.counting, self.counter = None, None


def operand(operand: dict):
    """A function of an op's argument giving the operand's value: a marker's, or the literal."""
    if "param" in operand:
        i = operand["param"]
        return lambda args: args[i]
    value = operand["value"]
    return lambda args: value


# Model classes are named Table1, Table2 …, one name per model the worker makes.
_MODELS = itertools.count(1)


class Mapped:
    """A model of one table, and how the ORM names each of its columns: ``attr`` the model's
    attribute (an instance's value; a ForeignKey's is its ``…_id`` attname, the key as stored),
    ``path`` the name a lookup, values() or order_by() takes (a ForeignKey's column as
    ``fk__key``, which Django answers from the column itself, with no join), ``null`` whether
    the field is nullable, and for each column referencing another table of the group: ``fk``
    the ForeignKey's name, ``links`` the column it references, ``related`` the reverse
    relation's name on the referenced model (the child table's name)."""

    def __init__(self, name: str, info: dict, group: set[str]) -> None:
        self.name, self.info, self.model = name, info, None
        self.links = {c: r for c, r in info["references"].items() if r["table"] in group}
        self.attr, self.path, self.fk, self.null, self.related = {}, {}, {}, {}, {}
        taken: set[str] = set()
        for column in info["columns"]:
            if column not in self.links:
                self.attr[column] = self.path[column] = _attribute(column, taken)
                self.null[column] = column not in info["key"]
        for column in self.links:  # user_id → ForeignKey user (attname user_id), as Django names them
            base = column[:-3] if column.endswith("_id") and len(column) > 3 else column
            fk = _attribute(base, taken | {a[:-3] for a in taken if a.endswith("_id")})
            taken |= {fk, f"{fk}_id"}
            self.fk[column], self.attr[column], self.null[column] = fk, f"{fk}_id", False

    def only(self, shape: dict) -> list[str]:
        """The fields ``only()`` takes for a select of some of the table's columns (Django adds the
        primary key); none for ``SELECT *`` or every column, read as whole instances."""
        return list(dict.fromkeys(self.fk.get(c) or self.attr[c] for c in some_columns(shape)))


def models_of(tables: dict[str, dict]) -> dict[str, Mapped]:
    """The models of a group of tables, in an app registry of their own (with an app config, so
    that each model finds the reverse relations of the ForeignKeys to it)."""
    from django.apps.registry import Apps
    from django.db import models
    from django.db.migrations.state import AppConfigStub

    mapped = {name: Mapped(name, info, set(tables)) for name, info in tables.items()}
    classes = {name: f"Table{next(_MODELS)}" for name in tables}
    for name, m in mapped.items():
        for column, target in m.links.items():
            other = mapped[target["table"]]
            m.path[column] = f"{m.fk[column]}__{other.attr[target['column']]}"
            taken = set(other.attr.values()) | set(other.fk.values()) | set(other.related.values())
            m.related[column] = _attribute(name if name not in taken else f"{name}_by_{m.fk[column]}", taken)
    apps = Apps([AppConfigStub("accessbench")])
    for name, m in mapped.items():
        info, key = m.info, m.info["key"]
        fields = {}
        for column, sql_type in zip(info["columns"], info["types"]):
            if column in m.links:
                target = m.links[column]
                # DO_NOTHING: the suite's tables hold no constraint, and a delete cascades nowhere
                fields[m.fk[column]] = models.ForeignKey(
                    f"accessbench.{classes[target['table']]}", models.DO_NOTHING, db_column=column,
                    to_field=mapped[target["table"]].attr[target["column"]], related_name=m.related[column],
                    primary_key=key == [column])
            else:
                fields[m.attr[column]] = _field(sql_type, column, primary=key == [column], null=column not in key)
        if len(key) > 1:
            fields["pk"] = models.CompositePrimaryKey(*(m.fk.get(c) or m.attr[c] for c in key))
        meta = type("Meta", (), {"app_label": "accessbench", "db_table": name, "managed": False, "apps": apps})
        m.model = type(classes[name], (models.Model,), {"__module__": __name__, "Meta": meta, **fields})
    return mapped


class Query:
    """A select, update or delete of a shape as a Django QuerySet, made anew for each operation
    as Django users make one: ``filter()`` with a lookup per condition (``=``, ``__gt``,
    ``__lt``, ``__gte``, ``__lte``, ``__range``, ``__in``, ``__isnull``, ``__startswith`` for a
    LIKE of a prefix), ``Q(…) | Q(…)`` for OR, ``~Q(col=x)`` for ``<>`` (and ``col__isnull=False``
    where the field is nullable: SQL's ``<>`` never keeps NULL, Django's negation would); joins
    through the ForeignKeys, a forward one by its name (INNER JOIN: the ForeignKey is not null),
    a reverse one by its related name (LEFT OUTER JOIN; ``rel__isnull=False`` makes it the inner
    join SQL asks for); ``order_by('-x')``; slicing for LIMIT/OFFSET; ``only(…)`` for model
    instances of some of the table's columns; ``values(…).annotate(…)`` for GROUP BY,
    ``aggregate(…)`` without one, ``values_list`` for the rest."""

    def __init__(self, who: str, shape: dict, models: dict[str, Mapped]) -> None:
        self.who, self.shape, self.models = who, shape, models
        self.objects = models[shape["table"]].model._default_manager
        self.paths = {shape["table"]: ""}
        self.many: set[str] = set()  # tables reached through a one-to-many relation
        inner = {}
        for join in shape.get("joins") or ():
            a, b = join["on"]
            holder, joined = models[a["table"]], models[join["table"]]
            if joined.links.get(b["column"]) == {"table": a["table"], "column": a["column"]}:
                relation, many = joined.related[b["column"]], True  # reverse: the joined table references it
            elif holder.links.get(a["column"]) == {"table": join["table"], "column": b["column"]}:
                relation, many = holder.fk[a["column"]], a["table"] in self.many
                if join["type"] == "left":
                    raise Unsupported(f"{who} has no left-join here: {NO_FORWARD_LEFT_JOIN}")
            else:
                raise Unsupported(f"{who}: a join on columns no ForeignKey relates")
            above = self.paths[a["table"]]
            path = self.paths[join["table"]] = f"{above}__{relation}" if above else relation
            if many:
                self.many.add(join["table"])
                if join["type"] == "inner":
                    inner[f"{path}__isnull"] = False
        self.inner = inner
        condition = shape.get("filter")
        terms = condition["and"] if condition and "and" in condition else [condition] if condition else []
        # ANDed terms of one lookup each go to filter(**kwargs), as users write them; others are Q objects
        plain = [t for t in terms if "op" in t and t["op"] != "<>"]
        lookups = [self._lookup(t) for t in plain]
        names = [name for name, _ in lookups]
        if len(set(names)) != len(names) or set(names) & set(inner):
            plain, lookups = [], []
        self.kwargs = lookups
        self.qs = [self._q(t) for t in terms if t not in plain]
        self.order = [("-" if o["desc"] else "") + self.path(o) for o in shape.get("order") or ()]
        self.limit = None if shape.get("limit") is None else operand(shape["limit"])
        self.offset = None if shape.get("offset") is None else operand(shape["offset"])

    def path(self, ref: dict) -> str:
        """A column's name in a lookup, values() or order_by(), through the joins' relations."""
        own = self.models[ref["table"]].path[ref["column"]]
        return f"{self.paths[ref['table']]}__{own}" if self.paths[ref["table"]] else own

    def _lookup(self, term: dict):
        """One term as (lookup, a function of the op's argument giving its value)."""
        path, op, values = self.path(term["column"]), term["op"], [operand(a) for a in term["args"]]
        if op in _LOOKUPS:
            return f"{path}{_LOOKUPS[op]}", values[0]
        if op == "between":
            low, high = values
            return f"{path}__range", lambda a: (low(a), high(a))
        if op == "in":
            return f"{path}__in", lambda a: [v(a) for v in values]
        if op in ("is null", "is not null"):
            flag = op == "is null"
            return f"{path}__isnull", lambda a: flag
        if op == "like":
            pattern, who = values[0], self.who
            return f"{path}__startswith", lambda a: prefix(pattern(a), who)
        raise Unsupported(f"{self.who}: no lookup for {op}")

    def _q(self, term: dict):
        """A term as a function of the op's argument giving a Q object."""
        if "and" in term or "or" in term:
            subs = [self._q(t) for t in term.get("and") or term["or"]]
            join = operator.and_ if "and" in term else operator.or_
            return lambda a: functools.reduce(join, (s(a) for s in subs))
        if term["op"] == "<>":
            if term["column"]["table"] in self.many:
                raise Unsupported(f"{self.who}: {NO_NEGATION_ACROSS}")
            path, value = self.path(term["column"]), operand(term["args"][0])
            if self.models[term["column"]["table"]].null[term["column"]["column"]]:
                isnull = f"{path}__isnull"
                return lambda a: ~Q(**{path: value(a)}) & Q(**{isnull: False})
            return lambda a: ~Q(**{path: value(a)})
        name, value = self._lookup(term)
        return lambda a: Q(**{name: value(a)})

    def filtered(self, args):
        """The QuerySet of the rows the condition keeps, for this operation's argument."""
        kwargs = {**self.inner, **{name: value(args) for name, value in self.kwargs}}
        if self.qs:
            return self.objects.filter(*(q(args) for q in self.qs), **kwargs)
        return self.objects.filter(**kwargs) if kwargs else self.objects.all()

    def page(self, query, args):
        """``order_by`` and the slice of a page, as the shape asks."""
        if self.order:
            query = query.order_by(*self.order)
        if self.limit is None and self.offset is None:
            return query
        start = self.offset(args) if self.offset is not None else 0
        return query[start:start + self.limit(args)] if self.limit is not None else query[start:]

    def reader(self) -> Op:
        """The op of a select: model instances for columns of its one table, else tuples."""
        shape, items = self.shape, self.shape["items"]
        if not shape.get("joins") and not shape.get("group") and all("fn" not in i for i in items):
            mapped = self.models[shape["table"]]
            names, only = [mapped.attr[i["column"]] for i in items], mapped.only(shape)

            def entities(args):
                query = self.filtered(args)
                if only:
                    query = query.only(*only)
                return [tuple(getattr(row, n) for n in names) for row in self.page(query, args)]
            return entities
        aggregates = {f"abagg{k}": self._aggregate(i) for k, i in enumerate(items) if "fn" in i}
        names = [f"abagg{k}" if "fn" in i else self.path(i) for k, i in enumerate(items)]
        if not aggregates:  # a join: values_list across the relations
            return lambda args: list(self.page(self.filtered(args).values_list(*names), args))
        if shape.get("group"):
            group = [self.path(c) for c in shape["group"]]
            return lambda args: list(self.page(self.filtered(args).values(*group).annotate(**aggregates)
                                               .values_list(*names), args))
        if shape.get("limit") is not None or shape.get("offset") is not None:
            raise Unsupported(f"{self.who}: a page of an aggregate without GROUP BY (aggregate() answers its one row, "
                              "which a QuerySet slice cannot page)")
        return lambda args: [tuple(self.filtered(args).aggregate(**aggregates)[n] for n in names)]

    def _aggregate(self, item: dict):
        from django.db import models

        fn = {"count": Count, "sum": Sum, "min": Min, "max": Max, "avg": Avg}[item["fn"]]
        if item["column"] is None:
            return fn("*")
        mapped = self.models[item["table"]]
        field = mapped.model._meta.get_field(mapped.fk.get(item["column"]) or mapped.attr[item["column"]])
        # The value as PostgreSQL answers it, and the driver reads it: its avg of integers and
        # sum of bigints are numeric, which Django would turn into a float / an int.
        if (item["fn"] == "avg" and isinstance(field, models.IntegerField)
                or item["fn"] == "sum" and isinstance(field, models.BigIntegerField)):
            return fn(self.path(item), output_field=models.DecimalField())
        return fn(self.path(item))


_LOOKUPS = {"=": "", "<": "__lt", "<=": "__lte", ">": "__gt", ">=": "__gte"}


def prefix(pattern, who: str) -> str:
    """A LIKE pattern as ``__startswith`` takes it: only a prefix (text, then one ``%``)."""
    if not isinstance(pattern, str) or not pattern.endswith("%") or any(c in pattern[:-1] for c in "%_\\"):
        raise Unsupported(f"{who}: LIKE {pattern!r} is not a prefix: {LIKE_PREFIX}")
    return pattern[:-1]
