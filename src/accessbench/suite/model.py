"""The suite as typed models: tables with deterministic generators, and steps.

These models are what a suite means after its ``vary`` and ``[parameters]`` are expanded;
``suite.loader`` turns TOML text into them and reports errors with file:line.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..errors import InputError
from ..protocol import generators
from ..protocol.sqltext import count_markers
from ..targets import registry
from ..tier.tfb import PAGES as TFB_PAGES  # the page steps that are TechEmpower's database tests
from .limits import LOOSEST, STEP_NAME, identifier_problem, type_problem

MODES = ("literal", "extended", "prepared")
KINDS = ("connect", "scan", "exec", "batch", "page", "load")
SQL_TYPE = re.compile(
    r"^(smallint|integer|bigint|boolean|double|real|text|date|timestamp|bytes"
    r"|char\(\d+\)|varchar\(\d+\)|numeric\(\d+, ?\d+\))$"
)
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _registered(name: str) -> str:
    """A DBMS a suite names (in sql_for, setup and server) is a registered one
    (targets/registry.py), refused as a name outside a Literal of them would be."""
    if name not in registry.REGISTRY:
        shown = [repr(n) for n in registry.names()]
        expected = f"{', '.join(shown[:-1])} or {shown[-1]}" if len(shown) > 1 else "".join(shown)
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return name


DBMS = Annotated[str, AfterValidator(_registered)]


class Strict(BaseModel):
    # strict: a TOML value of the wrong type is an error, not coerced (true is no 1, "5" no 5)
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class _Gen(Strict):
    null: float = Field(0.0, ge=0.0, le=1.0, description="fraction of NULLs")

    @property
    def value_type(self) -> str:
        """The type of the values (protocol/PROTOCOL.md, Types): int, bool, float, decimal,
        text, date, timestamp or bytes."""
        return generators.value_type(self.model_dump(exclude_none=True))

    def wire(self, seed: int) -> dict[str, Any]:
        """The spec as it travels to a worker: its own stream's seed and its values' type."""
        return {**self.model_dump(exclude_none=True), "seed": seed, "type": self.value_type}


class SeqGen(_Gen):
    kind: Literal["seq"]
    start: int = 1
    step: int = 1
    div: int = Field(1, ge=1)
    mod: int | None = Field(None, ge=1)


class UniformGen(_Gen):
    kind: Literal["uniform"]
    lo: int
    hi: int

    @model_validator(mode="after")
    def _ordered(self) -> "UniformGen":
        if self.hi < self.lo:
            raise ValueError(f"hi ({self.hi}) is below lo ({self.lo})")
        return self


# Types a choice's or const's string values may declare: the string is the value's text form.
TEXT_FORMS = ("text", "decimal", "date", "timestamp", "bytes")


def _typed_text(value: str, kind: str) -> str:
    """A string value of a declared type, checked now so a bad one is the suite's error."""
    try:
        if kind == "decimal":
            if not DECIMAL_TEXT.match(value):
                raise ValueError
        elif kind == "date":
            dt.date.fromisoformat(value)
        elif kind == "timestamp":
            if dt.datetime.fromisoformat(value).tzinfo is not None:
                raise ValueError
        elif kind == "bytes":
            bytes.fromhex(value)
            if value != value.lower() or " " in value:
                raise ValueError
    except ValueError:
        form = {"decimal": "plain digits like -12.50", "date": "YYYY-MM-DD",
                "timestamp": "an ISO timestamp without zone like 2001-01-01T00:00:00",
                "bytes": "lower-case hex like 00ff10"}[kind]
        raise ValueError(f"{value!r} is not a {kind} ({form})") from None
    return value


DECIMAL_TEXT = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
Value = Union[bool, int, float, str]   # bool first: strict mode keeps true a boolean


def _values_type(values: list, declared: str | None) -> str:
    kinds = {"bool" if isinstance(v, bool) else "int" if isinstance(v, int) else
             "float" if isinstance(v, float) else "text" for v in values}
    if kinds == {"int", "float"}:
        kinds = {"float"}  # 1 and 2.5 together: floats
    if len(kinds) > 1:
        raise ValueError(f"values mix {' and '.join(sorted(kinds))}: give values of one type")
    found = kinds.pop()
    if declared is None:
        return found
    if declared == "float" and found == "int":
        return "float"
    if found == "text" and declared in TEXT_FORMS:
        for v in values:
            _typed_text(v, declared)
        return declared
    raise ValueError(f"type = {declared!r} but the values are {found} "
                     f"({'declare a type for strings only: ' + ', '.join(TEXT_FORMS) if found != 'text' else ''})".rstrip(" ()"))


class ChoiceGen(_Gen):
    kind: Literal["choice"]
    values: list[Value] = Field(min_length=1)
    type: Literal["int", "bool", "float", "text", "decimal", "date", "timestamp", "bytes"] | None = Field(
        None, description="the values' type; strings can be decimal, date, timestamp or bytes")

    @model_validator(mode="after")
    def _one_type(self) -> "ChoiceGen":
        _values_type(list(self.values), self.type)
        return self

    @property
    def value_type(self) -> str:
        return _values_type(list(self.values), self.type)


class ListGen(ChoiceGen):
    """A table column's values in the order given: row i takes the i-th (a published data
    set's own rows, such as TechEmpower's twelve fortunes); for a table's columns only."""

    kind: Literal["list"]


class TextGen(_Gen):
    kind: Literal["text"]
    pattern: str = Field(min_length=1, description="'#' a digit, '?' a letter, others literal")


class TimestampGen(_Gen):
    kind: Literal["timestamp"]
    start: str
    step_us: int = 1_000_000
    jitter_us: int = Field(0, ge=0)

    @field_validator("start")
    @classmethod
    def _iso(cls, v: str) -> str:
        try:
            parsed = dt.datetime.fromisoformat(v)
        except ValueError:
            raise ValueError(f"start {v!r} is not an ISO timestamp like 2001-01-01T00:00:00") from None
        if parsed.tzinfo is not None:
            raise ValueError(f"start {v!r} has a time zone; timestamps have none")
        return v


class ConstGen(_Gen):
    kind: Literal["const"]
    value: Value
    scaled: bool = Field(False, description="an integer multiplied by --quick's scale, like iterations")
    type: Literal["int", "bool", "float", "text", "decimal", "date", "timestamp", "bytes"] | None = Field(
        None, description="the value's type; a string can be decimal, date, timestamp or bytes")

    @model_validator(mode="after")
    def _typed(self) -> "ConstGen":
        _values_type([self.value], self.type)
        return self

    @property
    def value_type(self) -> str:
        return _values_type([self.value], self.type)


class FloatGen(_Gen):
    kind: Literal["float"]
    lo: float
    hi: float
    digits: int | None = Field(None, ge=0, le=15, description="round to this many decimal places")

    @model_validator(mode="after")
    def _ordered(self) -> "FloatGen":
        if self.hi < self.lo:
            raise ValueError(f"hi ({self.hi}) is below lo ({self.lo})")
        return self


class DecimalGen(_Gen):
    """Exact decimals from lo to hi in steps of 10^-scale; lo and hi as numbers or as decimal
    text ("-100.00"), taken exactly."""

    kind: Literal["decimal"]
    lo: Union[int, str]
    hi: Union[int, str]
    scale: int = Field(0, ge=0, le=30)

    @model_validator(mode="after")
    def _ordered(self) -> "DecimalGen":
        for name in ("lo", "hi"):
            value = getattr(self, name)
            if isinstance(value, str):
                _typed_text(value, "decimal")
            if -decimal.Decimal(value).as_tuple().exponent > self.scale:
                raise ValueError(f"{name} {value} has more decimal places than scale = {self.scale}")
        if self.units("hi") < self.units("lo"):
            raise ValueError(f"hi ({self.hi}) is below lo ({self.lo})")
        return self

    def units(self, name: str) -> int:
        return int(decimal.Decimal(getattr(self, name)).scaleb(self.scale))

    def wire(self, seed: int) -> dict[str, Any]:
        # On the wire lo and hi count units of 10^-scale: -100.00 at scale 2 is -10000.
        return {**super().wire(seed), "lo": self.units("lo"), "hi": self.units("hi")}


class DateGen(_Gen):
    kind: Literal["date"]
    start: str
    step_days: int = 1
    jitter_days: int = Field(0, ge=0)

    @field_validator("start")
    @classmethod
    def _iso(cls, v: str) -> str:
        return _typed_text(v, "date")


class BytesGen(_Gen):
    kind: Literal["bytes"]
    length: int = Field(ge=0, le=1_000_000)


Generator = Annotated[
    Union[SeqGen, UniformGen, ChoiceGen, TextGen, TimestampGen, ConstGen, FloatGen, DecimalGen, DateGen, BytesGen],
    Field(discriminator="kind"),
]
# A table's column takes a table-only kind too (generators.TABLE_KINDS): the runner fills tables.
ColumnGenerator = Annotated[
    Union[SeqGen, UniformGen, ChoiceGen, ListGen, TextGen, TimestampGen, ConstGen, FloatGen, DecimalGen, DateGen,
          BytesGen],
    Field(discriminator="kind"),
]


def _identifier(kind: str, name: str) -> str:
    """A name no DBMS with a server takes is refused here; 63 vs 64 (PostgreSQL's and
    MariaDB's) is limits.check_for_dbms's, once the targets are known."""
    if problem := identifier_problem(kind, name):
        raise ValueError(problem)
    return name


class Column(Strict):
    name: str = Field(pattern=NAME.pattern)
    type: str
    gen: ColumnGenerator
    # A foreign key as the layers map it ("users.id": the other table's one-column primary key):
    # what joins and association loading follow. No FOREIGN KEY constraint is created — the
    # generators decide the values, and ORMs read relations from their mappings, not the schema.
    references: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")

    @field_validator("name")
    @classmethod
    def _short_name(cls, v: str) -> str:
        return _identifier("column name", v)

    @field_validator("type")
    @classmethod
    def _known_type(cls, v: str) -> str:
        if not SQL_TYPE.match(v):
            raise ValueError(
                f"unknown SQL type {v!r} (smallint, integer, bigint, boolean, double, real, text, "
                "date, timestamp, bytes, char(n), varchar(n), numeric(p,s))"
            )
        if problem := type_problem(v, LOOSEST):
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _values_fit(self) -> "Column":
        if problem := fit_problem(self.gen, self.type):
            raise ValueError(f"column {self.name} ({self.type}): {problem}")
        return self


# Which value types each SQL type takes (protocol/PROTOCOL.md, Types): a generator whose values
# a column cannot hold is the suite's error, before anything runs.
COLUMN_TAKES = {"smallint": {"int"}, "integer": {"int"}, "bigint": {"int"}, "boolean": {"bool"},
                "double": {"float", "int"}, "real": {"float", "int"}, "numeric": {"decimal", "int"},
                "text": {"text"}, "char": {"text"}, "varchar": {"text"}, "date": {"date"},
                "timestamp": {"timestamp"}, "bytes": {"bytes"}}
FITTING = {"int": "seq, uniform", "bool": "choice of true/false", "float": "float", "decimal": "decimal",
           "text": "text", "date": "date", "timestamp": "timestamp", "bytes": "bytes"}


def fit_problem(gen: "_Gen", sql_type: str) -> str | None:
    """Why ``gen``'s values cannot be given to a column of ``sql_type``, or None."""
    base = sql_type.split("(")[0]
    kind = gen.value_type
    takes = COLUMN_TAKES[base]
    if kind not in takes:
        wanted = " or ".join(FITTING[t] for t in sorted(takes))
        return f"a {gen.kind} generator makes {kind} values, which {base} columns do not take (use {wanted})"
    if base == "numeric" and isinstance(gen, DecimalGen):
        precision, scale = (int(x) for x in sql_type[len("numeric("):-1].split(","))
        if gen.scale > scale:
            return f"the decimal generator's scale {gen.scale} exceeds the column's {scale}"
        widest = max(abs(gen.units("lo")), abs(gen.units("hi"))) // 10 ** gen.scale
        if len(str(widest)) > precision - scale:
            return f"values up to {widest} need more than the column's {precision - scale} digits before the point"
    return None


class Table(Strict):
    name: str = Field(pattern=NAME.pattern)
    description: str = ""
    rows: int = Field(ge=0)
    quick_rows: int | None = Field(None, ge=0, description="rows under --quick (default: every row, since parameter "
                                                           "ranges refer to them)")
    columns: list[Column] = Field(min_length=1, max_length=LOOSEST.columns)
    primary_key: list[str] = []
    indexes: list[list[str]] = []
    engine: str | None = Field(None, pattern=r"^[A-Za-z][A-Za-z0-9_]*$", max_length=64,
                               description="MariaDB storage engine (InnoDB, MyISAM, Aria); other DBMSs have none")

    @field_validator("name")
    @classmethod
    def _short_name(cls, v: str) -> str:
        return _identifier("table name", v)

    @model_validator(mode="after")
    def _keys_name_columns(self) -> "Table":
        names = [c.name for c in self.columns]
        folded = [n.lower() for n in names]  # every DBMS compares column names without case
        if len(set(folded)) != len(folded):
            twice = next(n for n in names if folded.count(n.lower()) > 1)
            raise ValueError(f"table {self.name}: column name {twice!r} is repeated")
        for key in [self.primary_key, *self.indexes]:
            if not key and key is not self.primary_key:  # no primary key is [], an index no []
                raise ValueError(f"table {self.name}: an index needs at least one column")
            if len(set(key)) != len(key):
                raise ValueError(f"table {self.name}: a key or index names a column twice: {key}")
            for col in key:
                if col not in names:
                    raise ValueError(f"table {self.name}: no column {col!r} for a key or index")
        if len(set(map(tuple, self.indexes))) != len(self.indexes):
            raise ValueError(f"table {self.name}: an index is declared twice")
        for column in self.columns:  # PostgreSQL and MariaDB refuse NULL in a key
            if column.name in self.primary_key and column.gen.null:
                raise ValueError(f"table {self.name}: {column.name} is in the primary key but its "
                                 f"generator makes NULLs (null = {column.gen.null})")
        return self


class RecordAccess(Strict):
    """What a step reads, record by record: every record of ``table`` in its natural order
    (a scan), or the records whose ``index`` key equals the step's params (a keyed read).
    The step's SQL reads the same: ``SELECT * FROM table`` (every column, table order),
    with ``WHERE`` on the key for a keyed read."""

    table: str = Field(pattern=NAME.pattern, max_length=LOOSEST.identifier)
    index: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=LOOSEST.identifier,
                              description="PRIMARY or an index name")


class Step(Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-\[\]=,]+$", max_length=STEP_NAME)
    kind: Literal["connect", "scan", "exec", "batch", "page", "load"]
    description: str = ""
    params: list[Generator] = []  # before sql, so that sql's validator can count against it
    sql: str | None = None
    sql_for: dict[DBMS, str] = {}
    mode: Literal["literal", "extended", "prepared", "record"] | None = None
    # Record-level access (mode "record"): the step as reads of a table's records rather than
    # SQL — MariaDB's HANDLER … READ. Keyed reads name the index whose key the params give.
    record: RecordAccess | None = None
    # kind "page": a page of the web tier (docs/tier.md), measured on tier methods only: the app
    # server's static page, or its language's hello world, which run no statement; or one of
    # TechEmpower's database tests (TFB_PAGES), which the page runs as its framework's test does
    # with the step's statements: ``sql`` reads a row (db, queries, updates: by the key its one
    # parameter ranges over) or the table (fortunes), ``write`` sets a row's number by key.
    page: Literal["static", "hello", "db", "queries", "fortunes", "updates"] | None = None
    queries: int | None = Field(None, ge=1, le=500, description="queries and updates: rows per request")
    write: str | None = None
    # kind "load": the rows ``sql`` selects from a parent table, each with its children in
    # ``include``'s first table, theirs in the next … (each referencing the one before), loaded
    # by ``load``: ``lazy`` (a query per parent and per child: the N+1 pattern), ``joined`` (one
    # query of LEFT JOINs) or ``selectin`` (a query per level with an IN list of the keys read).
    include: list[str] = Field([], max_length=8)
    load: Literal["lazy", "joined", "selectin"] | None = None
    iterations: int = Field(ge=1)
    batch: int | None = Field(None, ge=1)
    commit_every: int = Field(0, ge=0)
    reset: list[str] = []
    check: str | None = None
    # Under load (see docs/suites.md): C clients at once, for a duration instead of a count
    # (iterations then sizes the pool of parameters the loop cycles through), optionally
    # open-loop at a total rate, with a connection policy.
    clients: int = Field(1, ge=1)  # at most the soft limit [suite.limits] clients: the loader checks
    duration: float | None = Field(None, gt=0, description="seconds")
    rate: float | None = Field(None, gt=0, description="operations per second, all clients together")
    arrival: Literal["poisson", "uniform"] = "poisson"
    policy: Literal["persistent", "per-request", "pooled"] = "persistent"
    pool_size: int | None = Field(None, ge=1, description="pooled: connections in the pool (default: clients)")
    # The paths this step is measured on, of those the run measures (default: all of them):
    # a study's million-statement loop need not cross the slow path in every mode.
    paths: list[str] | None = Field(None, min_length=1)
    # Under --cluster: the client hosts its clients are spread over (default: every host of the
    # cluster; vary it to compare one client host with several). Without --cluster, unused.
    hosts: int | None = Field(None, ge=1)
    # Set by the loader when ``vary`` sweeps clients or rate: (the [[steps]] entry's name as
    # written, the other varied values) — so a report can draw one curve per series.
    _sweep: tuple[str, str] | None = PrivateAttr(None)
    # Set by the loader: the [[steps]] entry this step was expanded from, so that a later
    # check (limits.check_for_dbms) can name the line it was written at.
    _entry: int | None = PrivateAttr(None)

    @field_validator("duration", mode="before")
    @classmethod
    def _seconds(cls, value):
        return _parse_unit(value, {"ms": 1e-3, "s": 1.0, "min": 60.0}, "a duration like 15s or 500ms")

    @field_validator("rate", mode="before")
    @classmethod
    def _per_second(cls, value):
        return _parse_unit(value, {"/s": 1.0, "/min": 1 / 60}, "a rate like 200/s")

    @field_validator("sql")
    @classmethod
    def _markers_match_params(cls, sql: str | None, info) -> str | None:
        _not_blank(sql)
        _check_markers(sql, info.data.get("params", []))
        return sql

    @field_validator("sql_for")
    @classmethod
    def _override_markers_match_params(cls, sql_for: dict, info) -> dict:
        for dbms, sql in sql_for.items():
            _not_blank(sql, f"sql_for.{dbms}")
            _check_markers(sql, info.data.get("params", []))
        return sql_for

    @field_validator("reset")
    @classmethod
    def _reset_statements(cls, reset: list[str]) -> list[str]:
        for sql in reset:
            _not_blank(sql, "a reset statement")
        return reset

    @field_validator("check")
    @classmethod
    def _check_query(cls, check: str | None) -> str | None:
        return _not_blank(check)

    @model_validator(mode="after")
    def _fits_kind(self) -> "Step":
        if self.kind != "page" and self.page is not None:
            raise ValueError(f"page applies to page steps only, not {self.kind}")
        if self.kind == "page" and self.page in TFB_PAGES:
            return self._fits_tfb()
        if self.queries is not None or self.write is not None:
            raise ValueError("queries and write apply to the page steps of TechEmpower's tests only "
                             f"(page = {', '.join(TFB_PAGES)})")
        if self.kind in ("connect", "page"):
            if self.sql or self.sql_for or self.params:
                raise ValueError(f"a {self.kind} step takes no sql or params")
            if self.kind == "page" and self.page is None:
                raise ValueError(f'a page step needs page = "static", "hello" or one of TechEmpower\'s tests '
                                 f'({", ".join(TFB_PAGES)})')
            return self
        if not self.sql:
            raise ValueError(f"a {self.kind} step needs sql")
        if self.kind == "load" and not (self.include and self.load):
            raise ValueError("a load step needs include = [child tables …] and load = lazy, joined or selectin")
        if self.kind != "load" and (self.include or self.load):
            raise ValueError(f"include and load apply to load steps only, not {self.kind}")
        if self.kind == "exec" and self.mode is None:
            raise ValueError("an exec step needs mode = literal, extended, prepared or record")
        if self.kind not in ("exec", "scan") and self.mode is not None or self.kind == "scan" and self.mode not in (None, "record"):
            raise ValueError(f"mode applies to exec steps only (and record to scans), not {self.kind}")
        if self.record is not None:
            head = f"select * from {self.record.table}".lower()
            text = " ".join((self.sql or "").split()).lower()
            if not (text == head or text.startswith(head + " where ")):
                raise ValueError(f"a step with record access reads every column: its sql must be "
                                 f"SELECT * FROM {self.record.table} [WHERE …]")
            if self.kind == "scan" and self.record.index:
                raise ValueError("record access for a scan reads the table in its natural order: no index")
            if self.kind == "exec" and not self.record.index:
                raise ValueError("record access for a keyed read needs index = \"PRIMARY\" or an index name")
        if self.mode == "record" and self.record is None:
            raise ValueError("mode = record needs record = { table = …, index = … }")
        if self.kind == "batch" and self.batch is None:
            raise ValueError("a batch step needs batch = rows per group")
        if self.kind != "batch" and self.batch is not None:
            raise ValueError(f"batch applies to batch steps only, not {self.kind}")
        if self.kind == "scan" and self.params:
            raise ValueError("a scan step runs one query without params")
        if self.kind != "exec" and self.commit_every:
            raise ValueError(f"commit_every applies to exec steps only, not {self.kind}")
        return self

    def _fits_tfb(self) -> "Step":
        """TechEmpower's tests (docs/tier.md): a read by key (db, queries, updates) with one
        parameter, the page's random key, or a read of the whole table (fortunes); updates also
        writes each row read with two markers, its new number then its key."""
        page = self.page
        if not self.sql:
            raise ValueError(f"the {page} page needs sql: the statement its test runs")
        if self.mode not in (None, "literal", "extended", "prepared"):
            raise ValueError(f"the {page} page takes mode = literal, extended or prepared, or none: each method's "
                             "own (extended where it has it, else literal)")
        keyed = page != "fortunes"
        if len(self.params) != keyed or keyed and self.params[0].kind != "uniform":
            raise ValueError(f"the {page} page takes "
                             + ("one parameter, its key: { kind = \"uniform\", lo = 1, hi = N }" if keyed else "no params"))
        if self.queries is None and page in ("queries", "updates"):
            raise ValueError(f"the {page} page needs queries = rows per request (1 to 500)")
        if self.queries is not None and page not in ("queries", "updates"):
            raise ValueError(f"queries applies to the queries and updates pages only, not {page}")
        if (self.write is None) == (page == "updates"):
            raise ValueError("the updates page needs write = \"UPDATE … SET number = ? WHERE key = ?\"" if page == "updates"
                             else f"write applies to the updates page only, not {page}")
        if self.write is not None:
            _not_blank(self.write, "write")
            if count_markers(self.write) != 2:
                raise ValueError(f"write has {count_markers(self.write)} '?' markers: it takes two, the row's new "
                                 "number then its key")
        if self.reset or self.check or self.batch or self.include or self.load or self.record:
            raise ValueError(f"the {page} page takes sql, params, mode, queries and write, not reset, check, "
                             "batch, include, load or record")
        return self

    @property
    def entry(self) -> int | None:
        """The index of the [[steps]] entry this step was written as."""
        return self._entry

    def sql_on(self, dbms: str) -> str | None:
        return self.sql_for.get(dbms, self.sql)

    @property
    def reads_rows(self) -> bool:
        """Whether the statement returns rows the worker must read (and checksum)."""
        if self.kind in ("scan", "load"):
            return True
        if self.kind == "page":
            return self.page in TFB_PAGES
        if self.kind == "connect" or not self.sql:
            return False
        head = self.sql.lstrip().split(None, 1)[0].lower()
        return head in ("select", "with", "values", "table", "show") or " returning " in self.sql.lower()

    @property
    def writes(self) -> bool:
        return bool(self.reset)

    @property
    def sweep(self) -> str | None:
        """The sweep this step is a point of (its [[steps]] entry's name), if any."""
        return self._sweep[0] if self._sweep else None

    @property
    def sweep_series(self) -> str:
        """Within its sweep, the curve this step is on: its other varied values."""
        return self._sweep[1] if self._sweep else ""

    @property
    def loaded(self) -> bool:
        """Runs as a load (histogram, barrier start) rather than the plain timed loop."""
        return self.clients > 1 or self.duration is not None or self.rate is not None or self.policy != "persistent"


def _parse_unit(value, units: dict[str, float], what: str):
    """'15s' → 15.0 with units {'s': 1}; numbers pass through."""
    if value is None or isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip().replace(" ", "")
        for unit in sorted(units, key=len, reverse=True):
            if text.endswith(unit):
                try:
                    return float(text[: -len(unit)]) * units[unit]
                except ValueError:
                    break
    raise ValueError(f"{value!r} is not {what}")


def _check_markers(sql: str | None, params: list) -> None:
    if sql is not None and count_markers(sql) != len(params):
        raise ValueError(f"{count_markers(sql)} '?' markers but {len(params)} params")


def _not_blank(sql: str | None, what: str | None = None) -> str | None:
    """SQL that is only spaces is a mistake every DBMS would answer with a syntax error."""
    if sql is not None and not sql.strip():
        raise ValueError(f"{what} is empty" if what else "is empty")
    return sql


class StudyFigure(Strict):
    """One published figure, and where the run's own measurement of it comes from.

    A value figure reads a cell's median time per operation (``step`` on ``path``; the
    first of several steps the method has a verified cell for; every path when no path is
    named; of several paths, the first the method has a cell on), divided by the value of
    the step's parameter ``per_param`` (an index) when the operation repeats work inside the
    server, and multiplied by ``times``; with ``per = "second"`` it is operations per second
    instead (all clients together), with ``per = "unit"`` the step's units per second (rows
    for a read: study S1's records per second), and with ``per = "1000"`` seconds per 1,000
    units (rows read or operations: study S2's form), times ``times``. ``view = "best"``
    takes the best trial instead of the median (a study that kept its best run). A ratio
    figure divides two other figures by label; or, with ``relative_to``, one figure of the
    row (the first of ``ratio`` that both rows have) by the same figure of another method on
    the same target and path: ``"over"`` (a layer's own driver) or a method's name."""

    label: str = Field(min_length=1)
    published: str = ""
    step: str | list[str] | None = None
    path: str | list[str] | None = None
    per_param: int | None = Field(None, ge=0)
    times: float = Field(1.0, gt=0)
    ratio: list[str] = Field(default_factory=list)
    relative_to: str | None = Field(None, min_length=1)
    per: Literal["operation", "second", "unit", "1000", "trial"] = "operation"
    view: Literal["median", "best"] = "median"

    @model_validator(mode="after")
    def _value_or_ratio(self) -> "StudyFigure":
        if bool(self.ratio) == bool(self.step):
            raise ValueError("a figure needs either step (and path) or ratio = [label, label]")
        if self.ratio and not self.relative_to and len(self.ratio) != 2:
            raise ValueError("ratio takes two figure labels (or, with relative_to, the figures it may divide)")
        if self.view == "best" and self.per != "unit":
            raise ValueError('view = "best" goes with per = "unit" (the best trial\'s units per second)')
        if self.relative_to and not self.ratio:
            raise ValueError("relative_to goes with ratio = [label]: the figure it divides")
        return self

    @property
    def steps(self) -> list[str]:
        return [self.step] if isinstance(self.step, str) else list(self.step or [])

    @property
    def paths(self) -> list[str | None]:
        return [self.path] if not isinstance(self.path, list) else list(self.path)


class StudyRow(Strict):
    """A row of the study's own table: what it published, per figure label."""

    label: str
    values: dict[str, str]


class StudyPair(Strict):
    """Study S3's comparison: each ``candidates`` method against each ``references`` method
    wherever both measured the same step on the same target and path (methods of different
    DBMSs never meet), over the figures with ``per = "trial"``: both means, Diff, R%, Diff%,
    and the tally in the study's words (``names``: what to call the candidate and the
    reference). ``published``: two of the study's rows (reference, candidate) whose R% stands
    beside today's."""

    label: str = Field(min_length=1)
    candidates: list[str] = Field(min_length=1)
    references: list[str] = Field(min_length=1)
    names: list[str] = Field(["candidate", "reference"], min_length=2, max_length=2)
    published: list[str] | None = Field(None, min_length=2, max_length=2)


class Study(Strict):
    """A published study's figures, printed beside today's: one ``published`` row from the
    figures, or the study's own ``rows``; and, for a study that compared methods in pairs,
    its ``pairs``."""

    title: str
    note: str = ""
    figures: list[StudyFigure] = Field(min_length=1)
    rows: list[StudyRow] = []
    pairs: list[StudyPair] = []

    @model_validator(mode="after")
    def _rows_name_figures(self) -> "Study":
        labels = {f.label for f in self.figures}
        if len(labels) != len(self.figures):
            raise ValueError("two figures have the same label")
        for row in self.rows:
            unknown = [k for k in row.values if k not in labels]
            if unknown:
                raise ValueError(f"study row {row.label!r} names no figure {unknown[0]!r}")
        rows = {row.label for row in self.rows}
        for pair in self.pairs:
            if pair.published and not set(pair.published) <= rows:
                raise ValueError(f"pair {pair.label!r}: published names a row that is not there: {list(pair.published)}")
        if self.pairs and not any(f.per == "trial" for f in self.figures):
            raise ValueError('pairs compare the figures with per = "trial": there are none')
        return self


class Variant(Strict):
    """One combination of the suite's [parameters]; data is loaded once per variant."""

    values: dict[str, Any] = {}
    tables: list[Table]
    steps: list[Step]

    @property
    def label(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.values.items())

    def as_seen_by(self, dbms: str) -> dict:
        """What this variant asks of a DBMS: a storage engine means nothing to a DBMS without
        them (``storage_engines`` in its description: MariaDB has them), so variants that differ
        only in engines are one and the same there."""
        data = self.model_dump(exclude={"values"})
        described = registry.REGISTRY.get(dbms)
        if not (described and described.storage_engines):
            for table in data["tables"]:
                table.pop("engine", None)
        return data


class Suite(Strict):
    name: str
    description: str = ""
    seed: int = 1
    source: str = Field(description="where the suite came from: a file path or builtin:NAME")
    text: str = Field(description="the suite's full TOML text, stored with every run")
    parameters: dict[str, list[Any]] = {}
    paths: list[str] | None = Field(None, description="default paths, where --path is not given")
    methods: list[str] | None = Field(None, description="default methods (or groups), where --method is not given")
    setup: dict[DBMS, list[str]] = {}
    server: dict[DBMS, dict[str, Any]] = Field({}, description="settings a managed server starts with, per DBMS")
    study: Study | None = None
    variants: list[Variant]
    # "existing": over the data already on the target — no table made, every session read-only
    data: Literal["generated", "existing"] = "generated"

    @property
    def existing(self) -> bool:
        return self.data == "existing"

    @property
    def step_names(self) -> list[str]:
        return list(dict.fromkeys(s.name for v in self.variants for s in v.steps))

    def with_steps(self, names: list[str] | None) -> "Suite":
        """The suite measuring only the steps named (``--step``; None: all of them), in the
        suite's order; a variant left with none is dropped (its data never loaded). An unknown
        name is an input error naming the suite's steps."""
        if not names:
            return self
        known = self.step_names
        for name in names:
            if name not in known:
                raise InputError(f"--step {name}: suite {self.name} has no such step (its steps: {', '.join(known)})")
        variants = [v.model_copy(update={"steps": [s for s in v.steps if s.name in names]}) for v in self.variants]
        return self.model_copy(update={"variants": [v for v in variants if v.steps]})
