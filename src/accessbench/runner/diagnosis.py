"""A mismatch explained: where a method read otherwise than the plurality.

When a cell's checksum differs from what most methods on its target read, the runner asks
the cell's worker and one worker of the plurality for the rows they read (an untimed
verification pass with `dump`, protocol/PROTOCOL.md), and this module finds the first row
the cell read that the plurality did not, pairs it with the plurality's closest unmatched
row (the most columns alike: the same record, read otherwise), and names the column and both
values — "column typdelim: text ',' from 6 methods, bytes 2c from py-asyncpg" — so nobody
bisects a 6,000-row table by hand. Rows are compared as multisets: SQL promises no order
without ORDER BY, and the checksum does not depend on one either.
"""

from __future__ import annotations

import json
import re
import struct
from collections import Counter

DUMP_ROWS = 10_000  # rows read back from each side: the first difference is almost always early

_SELECT = re.compile(r"^\s*SELECT\s+(.+?)\s+FROM\s", re.I | re.S)
# a column, optionally qualified and cast (t.oid::int8), or anything AS a name
_NAME = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)?([A-Za-z_][A-Za-z0-9_]*)(?:::[A-Za-z_][A-Za-z0-9_ ]*)?$|\sAS\s+([A-Za-z_][A-Za-z0-9_]*)$",
                   re.I)


def _key(row: list[dict]) -> str:
    return json.dumps(row, sort_keys=True)


def first_difference(mine: list[list[dict]], theirs: list[list[dict]]):
    """(row number in ``mine`` from 1, column index or None, my row, their closest row or
    None) for the first row ``mine`` read that ``theirs`` did not; None when every row of
    ``mine`` is among ``theirs`` (they read more rows, or the dumps stopped too early)."""
    left = Counter(_key(r) for r in theirs)
    for i, row in enumerate(mine, 1):
        k = _key(row)
        if left[k] > 0:
            left[k] -= 1
            continue
        unmatched = [r for r in theirs if left[_key(r)] > 0]
        if not unmatched:
            return i, None, row, None
        closest = max(unmatched, key=lambda r: sum(a == b for a, b in zip(r, row)))
        column = next((j for j, (a, b) in enumerate(zip(row, closest)) if a != b), None)
        if column is None:  # one row has more columns
            column = min(len(row), len(closest))
        return i, column, row, closest
    return None


def shown(value: dict | None) -> str:
    """A typed value as a person reads it: text ',' · bytes 2c · float 0.1 · null."""
    if value is None:
        return "no value"
    kind, v = value["type"], value.get("value")
    if kind == "null":
        return "NULL"
    if kind == "text":
        return f"text {v!r}"
    if kind == "float":
        return f"float {struct.unpack('>d', bytes.fromhex(v))[0]!r}"
    return f"{kind} {v}"


def column_names(sql: str | None) -> list[str] | None:
    """The names of a plain SELECT list (``SELECT a, t.b FROM …``), else None."""
    match = _SELECT.match(sql or "")
    if not match:
        return None
    names = []
    for part in match.group(1).split(","):
        name = _NAME.search(part.strip())
        if not name:
            return None
        names.append(name.group(1) or name.group(2))
    return names


def explain(mine: list[list[dict]], theirs: list[list[dict]], method: str, agreeing: int, sql: str | None) -> str:
    """One sentence: where ``method`` read otherwise than the ``agreeing`` methods."""
    found = first_difference(mine, theirs)
    if found is None:
        return (f"every one of the first {len(mine):,} rows {method} read is among the other methods' rows: "
                "they differ further on, or in how many rows there are")
    number, column, row, closest = found
    others = f"{agreeing} method{'s' if agreeing != 1 else ''}"
    if closest is None:
        return f"row {number} {method} read ({', '.join(shown(v) for v in row[:4])}) is not among the other methods' rows"
    names = column_names(sql)
    name = names[column] if names and column < len(names) else f"{column + 1}"
    mine_v = row[column] if column < len(row) else None
    theirs_v = closest[column] if column < len(closest) else None
    return (f"first difference at row {number} read, column {name}: {shown(theirs_v)} from {others}, "
            f"{shown(mine_v)} from {method}")
