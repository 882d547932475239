"""The shape of a step's statement: what it does, in the terms a layer's API has.

A layer method (an ORM, a query builder, a row mapper) is measured through its own API, as its
users call it: a read by key is ``session.get(Entity, key)``, a scan reads entities, an insert
goes through the unit of work, a batch through the bulk API. So a layer must know what a step's
SQL *does* — which table, which columns, which keys — not just its text. The runner works that
out once, here, and the step carries it to the workers: no worker, in any language, parses SQL.

Only the plain shapes a layer can express idiomatically have one: a select of columns from one
table, optionally narrowed by equalities on columns; an insert of one row of markers; an update
setting columns to markers where columns equal markers; a delete likewise. Markers are the
suite's neutral ``?``; the order of ``columns`` then ``where`` is the order of the markers in
the text, i.e. of the step's parameters. Anything else (joins, functions, literals, ORDER BY,
``*``, OR, subqueries) has no shape, and a layer runs it through its raw-SQL API or answers
``unsupported`` with the reason. The parsing is sqlglot's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

KINDS = ("select", "insert", "update", "delete")


@dataclass(frozen=True)
class Shape:
    kind: str                    # one of KINDS
    table: str
    columns: tuple[str, ...]     # select: read, in order; insert: written; update: set — in marker order
    where: tuple[str, ...] = ()  # columns each compared with a marker, all ANDed, in marker order

    def message(self) -> dict:
        """The shape as the step message carries it."""
        return {"kind": self.kind, "table": self.table, "columns": list(self.columns), "where": list(self.where)}


def of_step(sql: str, tables: list) -> dict | None:
    """The ``shape`` a step message carries to a layer method: ``sql`` (the statement on the
    cell's DBMS) shaped against the suite's ``tables``; None when it has no shape. For a table
    of the suite it also gives the whole table — every column (``table_columns``), its SQL
    type as the suite declares it (``table_types``) and the primary key (``key``) — which is
    what an ORM maps an entity from."""
    return _cached(sql, tuple((t.name, tuple(c.name for c in t.columns), tuple(c.type for c in t.columns),
                               tuple(t.primary_key)) for t in tables))


@lru_cache(maxsize=256)  # a cell's message is built for every trial; the statement is parsed once
def _cached(sql: str, tables: tuple) -> dict | None:
    found = shape(sql, {name: list(columns) for name, columns, _, _ in tables})
    if found is None:
        return None
    message = found.message()
    for name, columns, types, key in tables:
        if name == found.table:
            message.update(table_columns=list(columns), table_types=list(types), key=list(key))
    return message


def shape(sql: str, tables: dict[str, list[str]] | None = None) -> Shape | None:
    """The statement's shape, or None when it has none (or does not parse). ``tables`` (each
    table's columns, in order) lets ``SELECT *`` from a known table be shaped: the suite's
    tables are the only ones a step reads."""
    try:
        statements = sqlglot.parse(sql)
    except SqlglotError:
        return None
    if len(statements) != 1 or statements[0] is None:
        return None
    node = statements[0]
    markers = len(list(node.find_all(exp.Placeholder)))
    found = _of(node, tables or {})
    # Every marker must be one the shape accounts for (none hidden in an expression).
    if found is None or markers != (0 if found.kind == "select" else len(found.columns)) + len(found.where):
        return None
    return found


def _of(node: exp.Expression, tables: dict[str, list[str]]) -> Shape | None:
    if isinstance(node, exp.Select):
        return _select(node, tables)
    if isinstance(node, exp.Insert):
        return _insert(node)
    if isinstance(node, exp.Update):
        return _update(node)
    if isinstance(node, exp.Delete):
        return _delete(node)
    return None


def _only(node: exp.Expression, *allowed: str) -> bool:
    """Nothing set on ``node`` but ``allowed``: an allow-list, so that a clause sqlglot learns
    to parse later (a hint, a lock, a sample …) never slips into a shape."""
    return not any(value for key, value in node.args.items() if key not in allowed)


def _select(node: exp.Select, tables: dict[str, list[str]]) -> Shape | None:
    if not _only(node, "expressions", "from", "from_", "where"):
        return None
    table = _from(node.args.get("from") or node.args.get("from_"))
    if table is None:
        return None
    if len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Star) and table in tables:
        columns = list(tables[table])
    else:
        columns = [_column(e, table) for e in node.expressions]
    where = _where(node, table)
    if None in columns or where is None:
        return None
    return Shape("select", table, tuple(columns), where)


def _insert(node: exp.Insert) -> Shape | None:
    target, values = node.this, node.expression
    if (not _only(node, "this", "expression") or not isinstance(target, exp.Schema)
            or not isinstance(values, exp.Values) or len(values.expressions) != 1):
        return None
    table = _table(target.this)
    columns = [c.name for c in target.expressions if isinstance(c, exp.Identifier)]
    row = values.expressions[0].expressions
    if (table is None or len(columns) != len(target.expressions) or len(row) != len(columns)
            or not all(isinstance(v, exp.Placeholder) for v in row)):
        return None
    return Shape("insert", table, tuple(columns))


def _update(node: exp.Update) -> Shape | None:
    if not _only(node, "this", "expressions", "where"):
        return None
    table = _table(node.this)
    if table is None:
        return None
    columns = [_assignment(e, table) for e in node.expressions]
    where = _where(node, table)
    if not columns or None in columns or where is None:
        return None
    return Shape("update", table, tuple(columns), where)


def _delete(node: exp.Delete) -> Shape | None:
    if not _only(node, "this", "where"):
        return None
    table = _table(node.this)
    where = _where(node, table) if table else None
    if where is None:
        return None
    return Shape("delete", table, (), where)


def _from(clause) -> str | None:
    if not isinstance(clause, exp.From) or not _only(clause, "this"):
        return None
    return _table(clause.this)


def _table(node) -> str | None:
    """A plain table name (no alias, no schema, no function)."""
    if not isinstance(node, exp.Table) or not _only(node, "this") or not isinstance(node.this, exp.Identifier):
        return None
    return node.name


def _column(node, table: str) -> str | None:
    """A plain column, unqualified or qualified by the statement's own table."""
    if not isinstance(node, exp.Column) or not _only(node, "this", "table") or not isinstance(node.this, exp.Identifier):
        return None
    return node.name if not node.table or node.table == table else None


def _assignment(node, table: str) -> str | None:
    """``column = ?`` in a SET list."""
    if not isinstance(node, exp.EQ) or not isinstance(node.expression, exp.Placeholder):
        return None
    return _column(node.this, table)


def _where(node: exp.Expression, table: str) -> tuple[str, ...] | None:
    """The columns a WHERE compares with markers (``a = ? AND b = ?``), () without one, None
    when it is anything else."""
    clause = node.args.get("where")
    if clause is None:
        return ()
    terms, todo = [], [clause.this]
    while todo:  # flatten the ANDs, keeping the text's order
        term = todo.pop(0)
        if isinstance(term, exp.And):
            todo[:0] = [term.this, term.expression]
        elif isinstance(term, exp.Paren):
            todo.insert(0, term.this)
        else:
            terms.append(term)
    columns = []
    for term in terms:
        if not isinstance(term, exp.EQ):
            return None
        left, right = term.this, term.expression
        if isinstance(left, exp.Placeholder):
            left, right = right, left
        if not isinstance(right, exp.Placeholder) or (name := _column(left, table)) is None:
            return None
        columns.append(name)
    return tuple(columns)
