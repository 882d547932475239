"""The bounds a suite must respect, so that a mistaken or hostile suite is one suite error
before anything starts — not a worker aborting, a disk filling up or a DBMS refusing a
CREATE TABLE half-way through a run.

- Soft limits (``Limits``): sizes past which a suite is far likelier a typo than an intent.
  A suite that means it raises them in ``[suite.limits]``.
- accessbench's own bounds (``FILE_CEILING``, ``NESTING``, ``STEP_NAME``, 64-bit integers):
  what its parser, protocol and workers can carry; no suite can raise them.
- Hard limits per DBMS (``DBMS_LIMITS``: each DBMS's description, targets/registry.py): what
  the DBMS itself refuses. ``loader.parse`` applies the loosest of the DBMSs with a server
  (what none of them could create), ``check_for_dbms`` a DBMS's own once the run's targets are
  known, with any rule of its own on a table (``DBMS.table_rule``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Iterator

from pydantic import BaseModel, ConfigDict, Field

from ..errors import SuiteError
from ..targets import registry
from ..targets.base import declared
from ..targets.registry import DBMSLimits
from .locate import line_of

if TYPE_CHECKING:
    from .model import Column, Suite, Table

INT64 = (-(2**63), 2**63 - 1)  # TOML's integers, and every worker's (JSON → int64)
# accessbench reads no more of a suite file than this, whatever [suite.limits] says: the
# soft limit is checked after parsing (it may be raised in the file), so this bounds the work.
FILE_CEILING = 16 << 20
NESTING = 20  # arrays and tables inside each other; a suite needs 5 (a choice's values in a column)
STEP_NAME = 128  # characters; vary makes names longer (`name[k=v,…]`), reports show them whole


class Limits(BaseModel):
    """The soft limits, each a default a suite may raise in ``[suite.limits]``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    # Suites are written by hand (the built-in ones are under 12 KB): 1 MiB is a hundred times
    # that, and parsing and locating lines are linear but slow in Python (~0.1 s per MiB).
    file_bytes: int = Field(1 << 20, gt=0, le=FILE_CEILING, description="bytes of the suite file")
    # Table data is generated in Python (100,000 rows a second for quick.toml's webhits, a few
    # million for integer sequences) and bulk-loaded per target and per variant: 100 million
    # rows is minutes to most of an hour, and gigabytes, per target. The largest built-in
    # table has 500,000.
    rows: int = Field(100_000_000, gt=0, le=INT64[1], description="rows of one table")
    total_rows: int = Field(300_000_000, gt=0, le=INT64[1], description="rows of all tables of one variant")
    # Every worker makes all of a step's parameters before its clock starts (Python holds some
    # 100 bytes per operation) and a step not under load keeps one latency per operation and
    # trial: 10 million is ~1 GB in a Python worker and 80 MB of latencies a trial. The
    # largest built-in step has a million. Bounds commit_every too (statements it groups).
    iterations: int = Field(10_000_000, gt=0, le=INT64[1], description="operations (or rows) of one step")
    # A group is one driver call and one transaction, held whole in the worker's memory.
    batch: int = Field(100_000, gt=0, le=INT64[1], description="rows per group of a batch step")
    # The work of reading the suite: every value (key, list item, table; a string counts one
    # per 100 characters) of every table and step, once `like`, [parameters] and vary have
    # made their copies, is validated, at some 3 µs each. `like` copies a table's columns in
    # one line and vary a step in one key, so a 1 MiB suite could otherwise ask for hours.
    # 500,000 is a second or two; the largest built-in suite has some 1,300.
    values: int = Field(500_000, gt=0, le=INT64[1], description="values of all tables and steps, expanded")
    # Each variant reloads every table on every target and runs every step again.
    variants: int = Field(1_000, gt=0, le=INT64[1], description="[parameters] combinations")
    # Each step is a cell per method, target and path, each run warmup + trials times:
    # 10,000 steps is days of running.
    steps: int = Field(10_000, gt=0, le=INT64[1], description="steps after vary, all variants together")
    # Connections at once (clients, a pool): each is a server process or thread. The C
    # worker takes at most 100,000, so no override goes beyond.
    clients: int = Field(1_000, gt=0, le=100_000, description="clients (and pool_size) of one step")
    # One trial of a step by duration, or of an open loop (iterations / rate) without one.
    duration: int = Field(3_600, gt=0, le=INT64[1], description="seconds of one trial")
    # Open-loop arrivals of all clients together: a million a second is one every
    # microsecond, beyond what any method completes; past it every operation is only late.
    rate: int = Field(1_000_000, gt=0, le=INT64[1], description="operations per second of an open loop")
    # A generated text (a text pattern, a const or choice string) is made for every row or
    # operation: a 10,000-character pattern is already 1 GB per 100,000 rows.
    value_chars: int = Field(10_000, gt=0, le=INT64[1], description="characters of one generated text value")


# How a soft limit's value reads in a message: (unit, scope).
_WORDING = {
    "file_bytes": ("bytes", "for a suite file"), "rows": ("rows", "per table"),
    "total_rows": ("rows", "for all tables of a variant"), "iterations": ("", "per step"),
    "batch": ("rows", "per group"), "variants": ("variants", "per suite"),
    "steps": ("steps", "for all variants together"), "clients": ("connections", "per step"),
    "duration": ("seconds", "per trial"), "rate": ("operations a second", "per step"),
    "value_chars": ("characters", "per generated value"),
}


def _num(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.6g}"


def exceeded(limits: Limits, key: str, value: float) -> str | None:
    """The message for ``value`` above the soft limit ``key``, or None when it is within."""
    limit = getattr(limits, key)
    if value <= limit:
        return None
    unit, scope = _WORDING[key]
    return (f"{_num(value)}{' ' + unit if unit else ''} is above the limit of {limit:,} {scope} "
            f"(raise it with [suite.limits] {key} = …)")


class _Limits(Mapping):
    """Each registered DBMS's limits, by name (read from the registry as it is now)."""

    def __getitem__(self, name: str) -> DBMSLimits:
        return registry.described(name).limits

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())


DBMS_LIMITS: Mapping[str, DBMSLimits] = _Limits()


def _loosest() -> DBMSLimits:
    """What none of the server DBMSs could create: the largest of their limits (no limit
    where one of them has none). SQLite takes nearly anything, but a suite is written to
    run on each DBMS, and these are refused everywhere a server runs it."""
    fields = {}
    for field in DBMSLimits.__dataclass_fields__:
        if field == "name":
            continue
        values = [getattr(DBMS_LIMITS[d], field) for d in registry.servers()]
        fields[field] = None if None in values else max(values)
    return DBMSLimits("any DBMS's", **fields)


LOOSEST = _loosest()


def type_problem(sql_type: str, bounds: DBMSLimits = LOOSEST) -> str | None:
    """What is wrong with a declared length or precision (on every DBMS, or on ``bounds``'s)."""
    base, n, scale = declared(sql_type)
    if base in ("char", "varchar"):
        if n < 1:
            return f"{sql_type}: a length is at least 1"
        limit = getattr(bounds, base)
        if limit is not None and n > limit:
            return f"{sql_type}: {n:,} characters is above {bounds.name} limit of {limit:,} for {base}"
    if base == "numeric":
        if n < 1 or scale > n:
            return f"{sql_type}: numeric(p,s) needs 1 <= p and s <= p"
        if bounds.precision is not None and n > bounds.precision:
            return f"{sql_type}: precision {n:,} is above {bounds.name} limit of {bounds.precision:,}"
        if bounds.scale is not None and scale > bounds.scale:
            return f"{sql_type}: scale {scale:,} is above {bounds.name} limit of {bounds.scale:,}"
    return None


def identifier_problem(kind: str, name: str, bounds: DBMSLimits = LOOSEST) -> str | None:
    if bounds.identifier is not None and len(name.encode()) > bounds.identifier:
        shown = name if len(name) <= 40 else name[:37] + "…"
        return (f"{kind} {shown!r} has {len(name.encode()):,} characters, above {bounds.name} limit of "
                f"{bounds.identifier} for a name")
    return None


def index_names(table: "Table") -> list[str]:
    """The names targets/base.index_ddl gives the table's indexes."""
    return [f"{table.name}_{'_'.join(cols)}_idx" for cols in table.indexes]


def table_problem(table: "Table", bounds: DBMSLimits = LOOSEST) -> tuple[tuple, str] | None:
    """(where in the table, what) for the first name, type or width ``bounds`` refuses."""
    if problem := identifier_problem("table name", table.name, bounds):
        return ("name",), problem
    if bounds.columns is not None and len(table.columns) > bounds.columns:
        return ("columns",), f"{len(table.columns):,} columns is above {bounds.name} limit of {bounds.columns:,}"
    for j, column in enumerate(table.columns):
        problem = identifier_problem("column name", column.name, bounds) or type_problem(column.type, bounds)
        if problem:
            return ("columns", j), problem
    for k, name in enumerate(index_names(table)):
        if problem := identifier_problem("index name", name, bounds):
            return ("indexes", k), problem + " (an index is named table_column…_idx)"
    return None


def timestamp_range(gen, count: int) -> tuple[dt.datetime, dt.datetime] | None:
    """The first and last timestamp a generator makes in ``count`` values (None if it makes
    none, or some would fall outside the years 1–9999 every language's datetime covers)."""
    if count < 1:
        return None
    start = dt.datetime.fromisoformat(gen.start)
    last = (count - 1) * gen.step_us
    try:
        return (start + dt.timedelta(microseconds=min(0, last)),
                start + dt.timedelta(microseconds=max(0, last) + gen.jitter_us))
    except OverflowError:
        return None


def integer_range(gen, count: int) -> tuple[int, int] | None:
    """The smallest and largest integer a generator makes in ``count`` values (None when it
    makes none or no integers). ``seq``'s are its ends, before ``mod``: workers compute
    start + i·step in 64 bits."""
    if count < 1:
        return None
    kind = gen.kind
    if kind == "seq":
        ends = (gen.start, gen.start + (count - 1) * gen.step)
        return min(ends), max(ends)
    if kind == "uniform":
        return gen.lo, gen.hi
    values = [gen.value] if kind == "const" else list(gen.values) if kind in ("choice", "list") else []
    ints = [v for v in values if isinstance(v, int)]
    return (min(ints), max(ints)) if ints else None


def generator_problem(gen, count: int, limits: Limits) -> tuple[tuple, str] | None:
    """(where in the generator, what) for values no worker can make alike, or too long."""
    if gen.kind == "seq":
        low, high = integer_range(gen, count) or (0, 0)
        if low < INT64[0] or high > INT64[1]:
            return ("step",), (f"start + {count - 1:,} × step = {high if high > INT64[1] else low:,} leaves the "
                               "64-bit integers the workers compute in")
    if gen.kind == "timestamp" and count and timestamp_range(gen, count) is None:
        return ("step_us",), f"{count:,} timestamps from {gen.start} every {gen.step_us:,} µs leave the years 1–9999"
    texts = [gen.pattern] if gen.kind == "text" else [gen.value] if gen.kind == "const" else \
        list(gen.values) if gen.kind in ("choice", "list") else []
    longest = max((len(v) for v in texts if isinstance(v, str)), default=0)
    if message := exceeded(limits, "value_chars", longest):
        return ("pattern" if gen.kind == "text" else "value" if gen.kind == "const" else "values",), message
    return None


_INTEGER_TYPES = {"smallint": (-(2**15), 2**15 - 1), "integer": (-(2**31), 2**31 - 1), "bigint": INT64}


def column_problem(column: "Column", rows: int) -> str | None:
    """Values the column's generator makes that its type cannot hold (PostgreSQL and
    MariaDB refuse them at load time; SQLite would store them as they come)."""
    base, n, scale = declared(column.type)
    gen = column.gen
    span = integer_range(gen, rows)
    if gen.kind == "seq" and span and gen.mod is None:  # what the column gets: divided
        span = (span[0] // gen.div, span[1] // gen.div)
    elif gen.kind == "seq" and span:
        span = (0, gen.mod - 1)
    if span and base in _INTEGER_TYPES:
        low, high = _INTEGER_TYPES[base]
        if span[0] < low or span[1] > high:
            return f"{column.name}: values {span[0]:,}…{span[1]:,} do not fit {base} ({low:,}…{high:,})"
    if span and base == "numeric" and max(abs(span[0]), abs(span[1])) >= 10 ** (n - scale):
        return f"{column.name}: values up to {max(abs(span[0]), abs(span[1])):,} do not fit {column.type}"
    if base in ("char", "varchar") and rows:
        texts = [gen.pattern] if gen.kind == "text" else [gen.value] if gen.kind == "const" else \
            list(gen.values) if gen.kind in ("choice", "list") else []
        longest = max([len(str(v)) for v in texts] + ([len(str(x)) for x in span] if span else []), default=0)
        if longest > n:
            return f"{column.name}: values of {longest:,} characters do not fit {column.type}"
    return None


def earliest_problem(table: "Table", bounds: DBMSLimits) -> tuple[tuple, str] | None:
    """(where, what) for a timestamp or date column whose generator starts before the first day
    ``bounds``'s DBMS holds."""
    if bounds.earliest is None:
        return None
    first = dt.datetime.combine(bounds.earliest, dt.time())
    for j, column in enumerate(table.columns):
        span = timestamp_range(column.gen, table.rows) if column.gen.kind == "timestamp" else None
        if span and column.type in ("timestamp", "date") and span[0] < first:
            return ("columns", j), (f"{column.name}: {span[0]} is before {bounds.name} first {column.type}, "
                                    f"{bounds.earliest}")
    return None


def check_for_dbms(suite: "Suite", dbms: str) -> None:
    """Raise a SuiteError (file:line) for the first thing in ``suite`` that ``dbms`` itself
    refuses: names, declared lengths and precisions, its own rules on a table (row and key
    widths), the first day it holds, parameter counts."""
    described = registry.described(dbms)
    bounds, settings = described.limits, suite.server.get(dbms, {})

    def fail(loc: tuple, message: str) -> SuiteError:
        return SuiteError(suite.source, line_of(suite.text, loc), f"{'.'.join(map(str, loc))}: {message}")

    for variant in suite.variants:
        for i, table in enumerate(variant.tables):
            found = (table_problem(table, bounds) or (described.table_rule and described.table_rule(table, settings))
                     or earliest_problem(table, bounds))
            if found:
                raise fail(("tables", i, *found[0]), found[1])
        for step in variant.steps:
            binds = step.mode not in ("literal", "record")  # literals and HANDLER keys bind nothing
            if binds and bounds.markers is not None and len(step.params) > bounds.markers:
                raise fail(("steps", step.entry, "params"), f"{len(step.params):,} parameters is above "
                                                            f"{bounds.name} limit of {bounds.markers:,} per statement")
