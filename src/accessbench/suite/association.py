"""A ``load`` step's association: a parent table's rows with their children and grandchildren,
as the step message carries it (protocol/PROTOCOL.md, ``load``).

A layer loads it through its relations — the entities its mapping gives each table, related by
the suite's ``references`` — with its own names for the strategy (SQLAlchemy's ``lazyload``,
``joinedload``, ``selectinload``; Django's attribute access and ``prefetch_related``; GORM's
``Preload`` …). A driver has no relations: it runs what a programmer would write by hand for the
same strategy, and those statements are written here, once, for every worker — so that no
worker parses or composes SQL beyond joining ``?`` markers into an IN list:

- ``lazy``: the parents' statement, then ``one`` per row read at each level (children by
  their parent's key: the N+1 pattern, a statement per parent and per child);
- ``selectin``: the parents' statement, then per level ``in`` — the children of every row of
  the level above at once, the keys as an IN list of markers (``in[0]``, the markers joined by
  ``, ``, then ``in[1]``);
- ``joined``: one statement, the parents' as a derived table left-joined to each level, every
  row holding a parent's columns, then its child's, then its grandchild's (NULL where none); a
  worker splits each row by the levels' column counts and keeps each entity once (by its key).

Every strategy reads the same entities, so verification checksums every entity once — each
level's rows, in its table's column order — whatever the strategy.
"""

from __future__ import annotations

QUOTE = {"mariadb": "`"}  # every other DBMS quotes names as the standard does


def quoted(name: str, dbms: str) -> str:
    mark = QUOTE.get(dbms, '"')
    return f"{mark}{name.replace(mark, mark * 2)}{mark}"


def levels(parent: str, include: list[str], tables: dict) -> list[tuple]:
    """Each level of ``include`` as (table, its column referencing the level above, the
    referenced column of the level above); raises ValueError when a table does not reference
    the one before it."""
    found, above = [], parent
    for name in include:
        table = tables.get(name)
        if table is None:
            raise ValueError(f"include names {name!r}, which is not a table of the suite")
        fk = [c.name for c in table.columns if (c.references or "").split(".")[0] == above]
        if len(fk) != 1:
            raise ValueError(f"include: table {name} needs exactly one column with references = \"{above}.…\" "
                             f"(it has {len(fk)})")
        column = next(c for c in table.columns if c.name == fk[0])
        found.append((table, column.name, column.references.split(".")[1]))
        above = name
    return found


def message(step, sql: str, dbms: str, tables: list) -> dict:
    """The ``load`` field of ``step``'s message on ``dbms``: the strategy and, per level, the
    table's entity (columns, types, key), its reference and the drivers' statements."""
    by_name = {t.name: t for t in tables}
    parent = by_name[_parent(step, by_name)]
    q = lambda name: quoted(name, dbms)  # noqa: E731 — the DBMS's quoting, once per name
    chain = levels(parent.name, step.include, by_name)
    out = []
    for table, column, referenced in chain:
        columns = ", ".join(q(c.name) for c in table.columns)
        head = f"SELECT {columns} FROM {q(table.name)} WHERE {q(column)}"
        out.append({"table": table.name, "column": column, "parent_column": referenced,
                    "table_columns": [c.name for c in table.columns], "table_types": [c.type for c in table.columns],
                    "key": list(table.primary_key), "one": f"{head} = ?", "in": [f"{head} IN (", ")"]})
    every = [f"p0.{q(c.name)}" for c in parent.columns]
    joins = []
    for k, (table, column, referenced) in enumerate(chain, start=1):
        every += [f"p{k}.{q(c.name)}" for c in table.columns]
        joins.append(f"LEFT JOIN {q(table.name)} p{k} ON p{k}.{q(column)} = p{k - 1}.{q(referenced)}")
    joined = f"SELECT {', '.join(every)} FROM ({sql}) p0 {' '.join(joins)}"
    return {"strategy": step.load, "levels": out, "joined": joined}


def check(step, tables: dict) -> None:
    """Why ``step`` (a load step) cannot be loaded from ``tables``, as a ValueError."""
    parent = _parent(step, tables)
    for table in [tables[parent], *(level[0] for level in levels(parent, step.include, tables))]:
        if not table.primary_key:
            raise ValueError(f"table {table.name} needs a primary key: a layer keeps each entity once by it")


def _parent(step, tables: dict) -> str:
    """The table the step's statement selects from (its shape's), the association's root."""
    from .shape import shape

    found = shape(step.sql, {name: [c.name for c in t.columns] for name, t in tables.items()})
    if found is None or found.kind != "select" or found.joins or found.table not in tables:
        raise ValueError("a load step's sql selects the parent rows: a select of one table of the suite")
    if list(found.columns) != [c.name for c in tables[found.table].columns]:
        raise ValueError(f"a load step's sql reads every column of {found.table}, in order (SELECT * FROM "
                         f"{found.table} …): a layer loads whole entities")
    return found.table


def entities(query, sql: str, params: tuple, parent_columns: list[str], load: dict) -> list[tuple]:
    """Every entity a load reads, each once — the parents ``sql`` selects (rows of
    ``parent_columns``), then each level's rows of the level above's — as rows of their
    tables' columns: what every strategy must checksum. ``query(sql, params)`` is the runner's
    own connection (Target.query)."""
    above = list(query(sql, params))
    found, columns = list(above), parent_columns
    for level in load["levels"]:
        at = columns.index(level["parent_column"])
        keys = sorted({row[at] for row in above if row[at] is not None}, key=repr)
        above = [row for value in keys for row in query(level["one"], (value,))]
        found += above
        columns = level["table_columns"]
    return found
