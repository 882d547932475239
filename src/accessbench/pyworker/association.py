"""Loading associations (a ``load`` step, protocol/PROTOCOL.md): a parent table's rows with their
children and grandchildren — the one place this worker runs the three hand-written strategies.

A method supplies how each statement runs (``Fetch``: the parents' select, a level's rows of
one parent, of many parents, and the one joined statement); ``loader`` runs the step's strategy
over them and answers the entities read, each as a row of its table's columns:

- ``lazy``: the parents, then each level's rows one parent at a time (``one`` per row of the
  level above: the N+1 pattern);
- ``selectin``: the parents, then per level one statement over the keys of the level above
  (``in``), none once a level reads no rows;
- ``joined``: the one statement of LEFT JOINs, each row split by the levels' column counts and
  each entity kept once by its key (a level whose key is NULL in a row has no entity there).

A lazy or select-in load reads each entity once by construction (each child row references one
parent, and each parent is read once), so only the joined load keeps entities by key — as a
programmer who writes the join by hand must. Drivers run the statements the message carries
(``by_hand``); SQLAlchemy Core builds the same statements as constructs (drivers/py_sqlalchemy.py).
The ORMs load through their relations instead and do not come here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

Op = Callable[[Any], Any]  # as pyworker/base.py's: one operation, given its parameters

BY_HAND = ("the message's hand-written statements, their values passed to the driver's parameter API (its extended "
           "mode where it has one): lazy = the parents' "
           "statement, then levels[i].one for each row of the level above (a statement per parent and per child); "
           "selectin = the parents' statement, then per level levels[i].in over the keys read (IN with one marker "
           "per key); joined = the joined statement once, each row split by the levels' column counts and each "
           "entity kept once by its key; the statements counted by the driver code that sends them (verification "
           "only)")


class Statements:
    """The statements a verification pass sent: counted where they are sent (a driver's code, a
    layer's own hook), for the pass only, so the timed loop runs without counting."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class Fetch(Protocol):
    """How one method runs a load's statements; each returns the rows read, as sequences."""

    def parents(self, args: Sequence) -> Sequence: ...

    def one(self, level: int, value: Any) -> Sequence: ...

    def many(self, level: int, values: list) -> Sequence: ...

    def joined(self, args: Sequence) -> Sequence: ...


def loader(fetch: Fetch, load: dict, parent_columns: list[str], parent_key: list[str],
           counter: Statements | None = None) -> Op:
    """The op of a load step: ``load`` (the message's field) by its strategy over ``fetch``,
    returning every entity read (parents, then children, then grandchildren). With
    ``counter`` each statement sent is counted (a driver's verification pass)."""
    if counter is not None:
        fetch = _Counted(fetch, counter)
    levels = load["levels"]
    # where each level's parent_column sits in the rows of the level above
    columns = [parent_columns, *(level["table_columns"] for level in levels)]
    at = [columns[k].index(level["parent_column"]) for k, level in enumerate(levels)]
    strategy = load["strategy"]
    if strategy == "lazy":
        return _lazy(fetch, at)
    if strategy == "selectin":
        return _selectin(fetch, at)
    if strategy == "joined":
        return _joined(fetch, columns, [parent_key, *(level["key"] for level in levels)])
    raise ValueError(f"unknown load strategy {strategy!r}")


def _lazy(fetch: Fetch, at: list[int]) -> Op:
    """The parents, then one statement per row above for each level below."""
    parents, one = fetch.parents, fetch.one

    def lazy(args):
        above = list(parents(args))
        found = list(above)
        for k, i in enumerate(at):
            below: list = []
            for row in above:
                if row[i] is not None:
                    below += one(k, row[i])
            found += below
            above = below
        return found
    return lazy


def _selectin(fetch: Fetch, at: list[int]) -> Op:
    """The parents, then one statement per level below, its keys IN a list."""
    parents, many = fetch.parents, fetch.many

    def selectin(args):
        above = list(parents(args))
        found = list(above)
        for k, i in enumerate(at):
            keys = list(dict.fromkeys(row[i] for row in above if row[i] is not None))
            if not keys:
                break
            above = list(many(k, keys))
            found += above
        return found
    return selectin


def _joined(fetch: Fetch, columns: list[list[str]], keys: list[list[str]]) -> Op:
    """One joined statement, each entity taken once from the rows it repeats in."""
    # each entity's slice of a joined row, and its key's positions in the row
    spans, start = [], 0
    for names, key in zip(columns, keys):
        spans.append((start, start + len(names), [start + names.index(k) for k in key]))
        start += len(names)
    joined = fetch.joined

    def join(args):
        kept: list[dict] = [{} for _ in spans]
        for row in joined(args):
            for (first, end, key), entities in zip(spans, kept):
                found = tuple(row[i] for i in key)
                if None in found:  # no entity at this level, nor below it (left joins)
                    break
                if found not in entities:
                    entities[found] = tuple(row[first:end])
        return [row for entities in kept for row in entities.values()]
    return join


class _Counted:
    """A ``Fetch`` whose every statement is counted."""

    def __init__(self, fetch: Fetch, counter: Statements) -> None:
        self.fetch, self.counter = fetch, counter

    def parents(self, args):
        self.counter.n += 1
        return self.fetch.parents(args)

    def one(self, level, value):
        self.counter.n += 1
        return self.fetch.one(level, value)

    def many(self, level, values):
        self.counter.n += 1
        return self.fetch.many(level, values)

    def joined(self, args):
        self.counter.n += 1
        return self.fetch.joined(args)


class ByHand:
    """A driver's ``Fetch``: the statements the message carries, with the driver's markers
    (``markers``), each run by ``query`` (statement, parameters) → rows, the driver's bound
    execution. An IN statement's text is made once per number of keys."""

    def __init__(self, query: Callable[[str, Sequence], Sequence], markers: Callable[[str], str], sql: str,
                 load: dict) -> None:
        self.query, self.markers = query, markers
        self.sql, self.join = markers(sql), markers(load["joined"])
        self.ones = [markers(level["one"]) for level in load["levels"]]
        self.ins = [level["in"] for level in load["levels"]]
        self.texts: dict[tuple[int, int], str] = {}

    def parents(self, args):
        return self.query(self.sql, args)

    def one(self, level, value):
        return self.query(self.ones[level], (value,))

    def many(self, level, values):
        text = self.texts.get((level, len(values)))
        if text is None:
            head, tail = self.ins[level]
            text = self.texts[level, len(values)] = self.markers(head + ", ".join("?" * len(values)) + tail)
        return self.query(text, values)

    def joined(self, args):
        return self.query(self.join, args)


def by_hand(query: Callable[[str, Sequence], Sequence], markers: Callable[[str], str], sql: str, load: dict,
            shape: dict, counter: Statements | None = None) -> Op:
    """A driver's load op: the message's statements run by ``query`` (see ``ByHand``)."""
    return loader(ByHand(query, markers, sql, load), load, shape["table_columns"], shape["key"], counter)
