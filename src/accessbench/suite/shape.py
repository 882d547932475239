"""The shape of a step's statement: what it does, in the terms a layer's API has.

A layer method (an ORM, a query builder, a row mapper) is measured through its own API, as its
users call it: a read by key is ``session.get(Entity, key)``, a page is
``Where("id > ?").Order("id").Limit(100).Find(&rows)``, a count by group is
``values("dept").annotate(Count("*"))``, an insert goes through the unit of work. So a layer must
know what a step's SQL *does* — which tables, columns, conditions, order, page, aggregates — not
just its text. The runner works that out once, here, and the step carries it to the workers: no
worker, in any language, parses SQL.

What has a shape is what the layers' builders express: a select of columns, ``*`` or aggregates
(count, sum, min, max, avg) from one table, inner and left joins over the suite's declared
``references``, a condition of comparisons (``= <> < <= > >= BETWEEN IN IS [NOT] NULL LIKE``)
joined by AND and OR, ``GROUP BY`` columns, ``ORDER BY`` columns with direction, ``LIMIT`` and
``OFFSET``; an insert of one row of markers; an update setting columns to markers (or adding a
marker to themselves: ``salary = salary + ?``) under such a condition; a delete likewise. Each
operand is a marker — ``{"param": i}``, the i-th ``?`` of the text, i.e. of the step's
parameters — or a literal (``{"value": v}``). Anything else (subqueries, functions in a
condition, expressions, DISTINCT, HAVING, joins on undeclared keys) has no shape: a layer runs
it through its raw-SQL API, and every report says so beside the figure (report/model.py).

``features`` names what a shape uses (``order``, ``left-join``, ``aggregate`` …): a layer says
in its hello which it maps through its own API and why not the others, and the runner marks a
cell ``unsupported`` with that reason rather than let a layer fall back silently.

The parsing is sqlglot's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

KINDS = ("select", "insert", "update", "delete")

# Every feature a shape can use, in the order `methods --long` lists them: the four kinds, then
# what a select or a condition adds to them, then a load step's strategies (suite/association.py;
# the runner adds the step's to its parents' shape). ``get`` is a select whose condition is exactly the
# table's key (an ORM's find-by-key); ``where`` a condition of ANDed equalities.
FEATURES = ("select", "get", "where", "star", "compare", "between", "in", "null", "like", "or", "join",
            "left-join", "aggregate", "group", "order", "limit", "offset", "insert", "update", "increment",
            "delete", "load-lazy", "load-joined", "load-selectin")
AGGREGATES = ("count", "sum", "min", "max", "avg")
_COMPARE = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_MIRROR = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_MARK = "abp"  # a marker's name once numbered: ``?`` → ``:abp0`` (sqlglot keeps the name)


@dataclass(frozen=True)
class Shape:
    kind: str                    # one of KINDS
    table: str
    columns: tuple[str, ...]     # select: plain columns of ``table`` read; insert: written; update: set
    where: tuple[str, ...] | None = ()  # the plain form: columns compared with markers by `=`, ANDed, in
    #                                     marker order; None when the condition or anything else is richer
    items: tuple = ()            # select: what each result column is (a column or an aggregate)
    star: bool = False
    filter: dict | None = None   # the condition as a tree (module docstring)
    joins: tuple = ()
    group: tuple = ()
    order: tuple = ()
    limit: dict | None = None
    offset: dict | None = None
    set: tuple = ()              # update: each assignment
    features: tuple[str, ...] = field(default=(), compare=False)

    @property
    def tables(self) -> tuple[str, ...]:
        return (self.table, *(j["table"] for j in self.joins))

    def message(self) -> dict:
        """The shape as the step message carries it (protocol/PROTOCOL.md, ``shape``)."""
        message = {"kind": self.kind, "table": self.table, "columns": list(self.columns),
                   "where": None if self.where is None else list(self.where), "features": list(self.features),
                   "filter": self.filter}
        if self.kind == "select":
            message.update(items=list(self.items), star=self.star, joins=list(self.joins), group=list(self.group),
                           order=list(self.order), limit=self.limit, offset=self.offset)
        if self.kind == "update":
            message["set"] = list(self.set)
        return message


def unmapped(message: dict, shapes: dict | None, layer: str) -> str | None:
    """Why a layer whose hello maps ``shapes`` (``capabilities.shapes``) cannot run the step
    ``message`` through its own API — the first feature of the step's shape (and, for a load
    step, its strategy) that the layer does not map, with the layer's reason — or None."""
    shape = message.get("shape")
    if shape is None or shapes is None:
        return None
    needed = list(shape.get("features", []))
    if message.get("load"):
        needed.append(f"load-{message['load']['strategy']}")
    for feature in needed:
        if feature not in shapes.get("maps", []):
            why = shapes.get("unsupported", {}).get(feature)
            return f"{layer} has no {feature} in its API" + (f": {why}" if why else "")
    return None


class _NoShape(Exception):
    """The statement has no shape (anything the module docstring does not list)."""


def of_step(sql: str, tables: list) -> dict | None:
    """The ``shape`` a step message carries to a layer method: ``sql`` (the statement on the
    cell's DBMS) shaped against the suite's ``tables``; None when it has none. For each table of
    the suite it names it also gives the whole table — every column, its SQL type as the suite
    declares it, the primary key and the columns referencing other tables — which is what an
    ORM maps an entity from: the statement's own table as ``table_columns``, ``table_types``
    and ``key``, every table it names under ``tables``."""
    return _cached(sql, tuple(_entity(t) for t in tables))


def _entity(table) -> tuple:
    refs = tuple((c.name, c.references) for c in table.columns if getattr(c, "references", None))
    return (table.name, tuple(c.name for c in table.columns), tuple(c.type for c in table.columns),
            tuple(table.primary_key), refs)


@lru_cache(maxsize=256)  # a cell's message is built for every trial; the statement is parsed once
def _cached(sql: str, tables: tuple) -> dict | None:
    known = {name: list(columns) for name, columns, _, _, _ in tables}
    references = {(name, column): target for name, _, _, _, refs in tables for column, target in refs}
    found = shape(sql, known, references)
    if found is None:
        return None
    message = found.message()
    key = next((list(k) for name, _, _, k, _ in tables if name == found.table), [])
    if found.kind == "select" and found.where and key and sorted(found.where) == sorted(key):
        message["features"] = list(_ordered([*found.features, "get"]))  # an ORM's find by key
    entities = {}
    for name, columns, types, key, refs in tables:
        if name in found.tables:
            entities[name] = {"columns": list(columns), "types": list(types), "key": list(key),
                              "references": {column: _split(target) for column, target in refs}}
        if name == found.table:
            message.update(table_columns=list(columns), table_types=list(types), key=list(key))
    if entities:
        message["tables"] = entities
    return message


def _split(target: str) -> dict:
    table, column = target.split(".")
    return {"table": table, "column": column}


def shape(sql: str, tables: dict[str, list[str]] | None = None,
          references: dict[tuple[str, str], str] | None = None) -> Shape | None:
    """The statement's shape, or None when it has none (or does not parse). ``tables`` (each
    table's columns, in order) lets ``SELECT *`` from a known table be shaped, and
    ``references`` (``(table, column)`` → ``"table.column"``) are the joins a shape may make."""
    try:
        node, markers = _parse(sql)
        found = _Shaper(tables or {}, references or {}).of(node)
    except (SqlglotError, _NoShape):
        return None
    # Every marker must be one the shape accounts for (none hidden in an expression).
    if found is None or _params(found) != list(range(markers)):
        return None
    return found


def _parse(sql: str) -> tuple[exp.Expression, int]:
    """The one statement of ``sql``, its ``?`` markers numbered in the order of the text (the
    order of the step's parameters), and how many there are."""
    tokens = sqlglot.tokenize(sql)
    text, at, markers = [], 0, 0
    for token in tokens:
        if token.token_type == TokenType.PLACEHOLDER and token.text == "?":
            text += [sql[at:token.start], f":{_MARK}{markers}"]
            at, markers = token.end + 1, markers + 1
    statements = sqlglot.parse("".join(text) + sql[at:])
    if len(statements) != 1 or statements[0] is None:
        raise _NoShape
    return statements[0], markers


def _params(found: Shape) -> list[int]:
    """The markers a shape uses, in the order of their numbers' appearance in it."""
    seen: list[int] = []

    def walk(value):
        if isinstance(value, dict):
            if "param" in value:
                seen.append(value["param"])
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    walk([found.set, found.filter, found.limit, found.offset])
    return sorted(seen) if found.kind != "insert" else list(range(len(found.columns)))


def _only(node: exp.Expression, *allowed: str) -> bool:
    """Nothing set on ``node`` but ``allowed``: an allow-list, so that a clause sqlglot learns
    to parse later (a hint, a lock, a sample …) never slips into a shape."""
    return not any(value for key, value in node.args.items() if key not in allowed)


def _require(condition: bool) -> None:
    if not condition:
        raise _NoShape


class _Shaper:
    """One statement's shaping: the tables it names (by alias too) and the references it may join."""

    def __init__(self, tables: dict[str, list[str]], references: dict[tuple[str, str], str]):
        self.tables, self.references = tables, references
        self.names: dict[str, str] = {}  # alias or name → table
        self.main = ""

    def of(self, node: exp.Expression) -> Shape:
        if isinstance(node, exp.Select):
            return self.select(node)
        if isinstance(node, exp.Insert):
            return self.insert(node)
        if isinstance(node, exp.Update):
            return self.update(node)
        if isinstance(node, exp.Delete):
            return self.delete(node)
        raise _NoShape

    # ---- statements ------------------------------------------------------------------------

    def select(self, node: exp.Select) -> Shape:
        _require(_only(node, "expressions", "from", "from_", "where", "joins", "group", "order", "limit", "offset"))
        clause = node.args.get("from") or node.args.get("from_")
        _require(isinstance(clause, exp.From) and _only(clause, "this"))
        self.main = self.table(clause.this, alias=True)
        joins = tuple(self.join(j) for j in node.args.get("joins") or ())
        star = len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Star)
        if star:
            _require(not joins and self.main in self.tables)
            items = tuple({"table": self.main, "column": c} for c in self.tables[self.main])
        else:
            items = tuple(self.item(e) for e in node.expressions)
        group = tuple(self.column(c) for c in (node.args["group"].expressions if node.args.get("group") else ()))
        _require(not node.args.get("group") or _only(node.args["group"], "expressions"))
        order = tuple(self.ordered(o) for o in (node.args["order"].expressions if node.args.get("order") else ()))
        limit = self.count(node.args.get("limit"), exp.Limit)
        offset = self.count(node.args.get("offset"), exp.Offset)
        condition = self.condition(node)
        plain_columns = [i["column"] for i in items if "fn" not in i and i["table"] == self.main]
        aggregated = any("fn" in i for i in items)
        _require(not (aggregated or group) or all("fn" in i or i in group for i in items))
        features = ["select"]
        if star:
            features.append("star")
        features += self.condition_features(condition)
        features += ["join"] * any(j["type"] == "inner" for j in joins) + ["left-join"] * any(
            j["type"] == "left" for j in joins)
        features += ["aggregate"] * aggregated + ["group"] * bool(group) + ["order"] * bool(order)
        features += ["limit"] * (limit is not None) + ["offset"] * (offset is not None)
        plain = not (joins or aggregated or group or order or limit or offset) and len(plain_columns) == len(items)
        where = self.plain_where(condition) if plain else None
        columns = tuple(plain_columns) if len(plain_columns) == len(items) else ()
        return Shape("select", self.main, columns, where, items, star, condition, joins, group, order, limit,
                     offset, features=_ordered(features))

    def insert(self, node: exp.Insert) -> Shape:
        target, values = node.this, node.expression
        _require(_only(node, "this", "expression") and isinstance(target, exp.Schema)
                 and isinstance(values, exp.Values) and len(values.expressions) == 1)
        self.main = self.table(target.this)
        columns = [c.name for c in target.expressions if isinstance(c, exp.Identifier)]
        row = values.expressions[0].expressions
        _require(len(columns) == len(target.expressions) == len(row)
                 and all(isinstance(v, exp.Placeholder) for v in row))
        _require([self.param(v)["param"] for v in row] == list(range(len(row))))
        return Shape("insert", self.main, tuple(columns), (), features=("insert",))

    def update(self, node: exp.Update) -> Shape:
        _require(_only(node, "this", "expressions", "where"))
        self.main = self.table(node.this)
        assignments = tuple(self.assignment(e) for e in node.expressions)
        _require(bool(assignments))
        condition = self.condition(node)
        increments = any(a["op"] == "+" for a in assignments)
        plain = not increments and all("param" in a["arg"] for a in assignments)
        where = self.plain_where(condition) if plain else None
        features = ["update", *self.condition_features(condition)] + ["increment"] * increments
        return Shape("update", self.main, tuple(a["column"] for a in assignments), where, filter=condition,
                     set=assignments, features=_ordered(features))

    def delete(self, node: exp.Delete) -> Shape:
        _require(_only(node, "this", "where"))
        self.main = self.table(node.this)
        condition = self.condition(node)
        return Shape("delete", self.main, (), self.plain_where(condition), filter=condition,
                     features=_ordered(["delete", *self.condition_features(condition)]))

    # ---- pieces ----------------------------------------------------------------------------

    def table(self, node, alias: bool = False) -> str:
        """A plain table name (no schema, no function), with an alias where a FROM or JOIN may
        give one; recorded so that columns qualified by either resolve."""
        allowed = ("this", "alias") if alias else ("this",)
        _require(isinstance(node, exp.Table) and _only(node, *allowed) and isinstance(node.this, exp.Identifier))
        name = node.name
        given = node.args.get("alias")
        if given is not None:
            _require(isinstance(given, exp.TableAlias) and _only(given, "this"))
        for handle in {name, node.alias or name}:
            _require(handle not in self.names)
            self.names[handle] = name
        return name

    def join(self, node: exp.Join) -> dict:
        _require(isinstance(node, exp.Join) and _only(node, "this", "on", "side", "kind"))
        side, kind = (node.args.get("side") or "").lower(), (node.args.get("kind") or "").lower()
        _require((side, kind) in {("", ""), ("", "inner"), ("left", ""), ("left", "outer")})
        table = self.table(node.this, alias=True)
        on = node.args.get("on")
        _require(isinstance(on, exp.EQ))
        left, right = self.column(on.this), self.column(on.expression)
        _require(table in (left["table"], right["table"]) and left["table"] != right["table"])
        _require(self.references.get((left["table"], left["column"])) == f"{right['table']}.{right['column']}"
                 or self.references.get((right["table"], right["column"])) == f"{left['table']}.{left['column']}")
        mine, theirs = (left, right) if left["table"] == table else (right, left)
        return {"type": "left" if side == "left" else "inner", "table": table, "on": [theirs, mine]}

    def column(self, node) -> dict:
        """A plain column, unqualified (of the statement's first table) or qualified by a table
        or alias the statement names: ``{"table", "column"}``, the table by its name."""
        _require(isinstance(node, exp.Column) and _only(node, "this", "table")
                 and isinstance(node.this, exp.Identifier))
        if node.table:
            table = self.names.get(node.table)
        else:  # unqualified: the one table of the statement's that has it, else the first table
            holders = {t for t in self.names.values() if node.name in self.tables.get(t, ())}
            table = holders.pop() if len(holders) == 1 else self.main
        _require(table is not None and (table not in self.tables or node.name in self.tables[table]))
        return {"table": table, "column": node.name}

    def item(self, node) -> dict:
        alias = None
        if isinstance(node, exp.Alias):
            _require(_only(node, "this", "alias"))
            node, alias = node.this, node.alias
        if isinstance(node, exp.Column):
            _require(alias is None)  # a renamed column reads the same values, but no builder renames plainly
            return self.column(node)
        fn = next((name for name in AGGREGATES if isinstance(node, getattr(exp, name.capitalize()))), None)
        _require(fn is not None and _only(node, "this", "big_int"))
        if isinstance(node.this, exp.Star):
            _require(fn == "count")
            return {"fn": "count", "table": None, "column": None, "as": alias}
        return {"fn": fn, **self.column(node.this), "as": alias}

    def ordered(self, node) -> dict:
        _require(isinstance(node, exp.Ordered) and _only(node, "this", "desc", "nulls_first"))
        return {**self.column(node.this), "desc": bool(node.args.get("desc"))}

    def count(self, node, kind) -> dict | None:
        if node is None:
            return None
        _require(isinstance(node, kind) and _only(node, "expression"))
        return self.operand(node.expression, integer=True)

    def assignment(self, node) -> dict:
        """``column = ?`` or ``column = column + ?`` in a SET list."""
        _require(isinstance(node, exp.EQ))
        target = self.column(node.this)
        _require(target["table"] == self.main)
        value = node.expression
        if isinstance(value, exp.Add):
            _require(self.column(value.this) == target)
            return {"column": target["column"], "op": "+", "arg": self.operand(value.expression)}
        return {"column": target["column"], "op": "=", "arg": self.operand(value)}

    def param(self, node) -> dict:
        _require(isinstance(node, exp.Placeholder) and str(node.name).startswith(_MARK))
        return {"param": int(str(node.name)[len(_MARK):])}

    def operand(self, node, integer: bool = False) -> dict:
        """A marker or a literal (a number, a string, TRUE/FALSE)."""
        if isinstance(node, exp.Placeholder):
            return self.param(node)
        negative = isinstance(node, exp.Neg)
        if negative:
            node = node.this
        if isinstance(node, exp.Literal) and not node.is_string:
            text = node.this
            value = int(text) if text.lstrip("-").isdigit() else float(text)
            return {"value": -value if negative else value}
        _require(not negative and not integer)
        if isinstance(node, exp.Literal):
            return {"value": node.this}
        if isinstance(node, exp.Boolean):
            return {"value": bool(node.this)}
        raise _NoShape

    def condition(self, node) -> dict | None:
        clause = node.args.get("where")
        if clause is None:
            return None
        return self.term(clause.this)

    def term(self, node) -> dict:
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, (exp.And, exp.Or)):
            word = "and" if isinstance(node, exp.And) else "or"
            terms = []
            for side in (node.this, node.expression):
                sub = self.term(side)
                terms += sub[word] if word in sub else [sub]  # a AND (b AND c): one list, in order
            return {word: terms}
        if type(node) in _COMPARE:
            op, left, right = _COMPARE[type(node)], node.this, node.expression
            if not isinstance(left, exp.Column):  # ? = k: the column on the left, the operator mirrored
                op, left, right = _MIRROR[op], right, left
            return {"op": op, "column": self.column(left), "args": [self.operand(right)]}
        if isinstance(node, exp.Between):
            return {"op": "between", "column": self.column(node.this),
                    "args": [self.operand(node.args["low"]), self.operand(node.args["high"])]}
        if isinstance(node, exp.In):
            _require(_only(node, "this", "expressions") and bool(node.expressions))
            return {"op": "in", "column": self.column(node.this), "args": [self.operand(e) for e in node.expressions]}
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return {"op": "is null", "column": self.column(node.this), "args": []}
        if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.expression, exp.Null):
            return {"op": "is not null", "column": self.column(node.this.this), "args": []}
        if isinstance(node, exp.Like) and _only(node, "this", "expression"):
            return {"op": "like", "column": self.column(node.this), "args": [self.operand(node.expression)]}
        raise _NoShape

    def condition_features(self, condition: dict | None) -> list[str]:
        if condition is None:
            return []
        found = []

        def walk(term):
            if "and" in term or "or" in term:
                found.extend(["or"] * ("or" in term))
                for sub in term.get("and") or term.get("or"):
                    walk(sub)
            else:
                op = term["op"]
                found.append({"=": "where", "between": "between", "in": "in", "is null": "null",
                              "is not null": "null", "like": "like"}.get(op, "compare"))
        walk(condition)
        return found

    def plain_where(self, condition: dict | None) -> tuple[str, ...] | None:
        """The columns of a condition that is only ``column = ?`` terms ANDed on the statement's
        table, markers in order (what every layer mapped before richer shapes); else None."""
        if condition is None:
            return ()
        terms = condition.get("and") or [condition]
        if any("op" not in t or t["op"] != "=" or "param" not in t["args"][0] or t["column"]["table"] != self.main
               for t in terms):
            return None
        return tuple(t["column"]["column"] for t in terms)


def _ordered(features) -> tuple[str, ...]:
    return tuple(f for f in FEATURES if f in set(features))
