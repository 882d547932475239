"""Suite TOML → validated ``Suite``. Every error is one ``SuiteError`` naming file:line.

Expansion happens here, before validation of each piece, so an error in an expanded step
still points at the line where the user wrote it:
- ``[parameters] name = [v1, v2]`` makes one *variant* per combination (data reloaded per
  variant); ``${name}`` anywhere in tables or steps takes the variant's value;
- ``vary = { name = [v1, v2] }`` in a step makes one step per combination; its name gets
  ``${name}`` substituted or, without a placeholder, a ``[name=value]`` suffix.

The bounds of ``suite.limits`` hold before anything is expanded or run: the file's size and
nesting, the combinations counted (not made), the soft limits (raised in ``[suite.limits]``)
and what no DBMS takes; a DBMS's own limits are ``limits.check_for_dbms``'s.
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError, SuiteError
from ..paths import parse as parse_path
from ..protocol import generators
from ..targets import registry
from .limits import (FILE_CEILING, INT64, LOOSEST, NESTING, Limits, column_problem, exceeded, generator_problem,
                     index_names, table_problem)
from . import association
from .locate import line_of
from .model import Step, Study, Suite, Table, Variant, fit_problem
from .readonly import write_in

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what a placeholder can name
_TOP_KEYS = {"suite", "parameters", "tables", "steps", "setup", "server", "study"}
# Step settings whose values, when varied, make a sweep the report draws as curves; a vary key
# named ``rows`` (the result size a step's statement returns) makes a result-size sweep, drawn
# as rows/s against the rows each operation read (measured, not the key's value).
SWEEPS = ("clients", "rate", "rows")
_GEN_TAGS = {"seq", "uniform", "choice", "list", "text", "timestamp", "const", "float", "decimal", "date", "bytes"}
# What TOML can hold and the bracket scan must see past: strings (multi-line first),
# comments, brackets, and newlines.
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]', re.S)


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$", max_length=128)
    description: str = ""
    # The protocol's seeds are unsigned 64-bit; TOML's integers stop at 2^63 - 1.
    seed: int = Field(1, ge=0)
    quick_scale: float = Field(0.1, gt=0, le=1, description="iterations factor for --quick")
    paths: list[str] | None = None
    methods: list[str] | None = None
    limits: Limits = Limits()
    # "existing": the suite reads the data already on the target (docs/suites.md, Your data):
    # it declares no table, writes nothing, and every session is read-only.
    data: Literal["generated", "existing"] = "generated"


def builtin_names() -> list[str]:
    folder = resources.files("accessbench") / "suites"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def builtin_text(name: str) -> str:
    return (resources.files("accessbench") / "suites" / f"{name}.toml").read_text()


def load(name_or_path: str, quick: bool = False, rows: int | None = None) -> Suite:
    """A built-in suite by name, or a suite file by path."""
    if name_or_path in builtin_names():
        return parse(builtin_text(name_or_path), f"builtin:{name_or_path}", quick, rows)
    path = Path(name_or_path)
    if not path.exists():
        raise InputError(
            f"--suite {name_or_path}: no such built-in suite ({', '.join(builtin_names())}) or file"
        )
    return parse(read(path), str(path), quick, rows)


def read(path: Path) -> str:
    """A suite file's text: a regular file of at most FILE_CEILING bytes, in UTF-8."""
    source = str(path)
    if not path.is_file():  # a FIFO or a device would block or never end
        raise SuiteError(source, None, "is a directory, not a suite file" if path.is_dir()
                         else "is not a regular file")
    try:
        with path.open("rb") as f:
            data = f.read(FILE_CEILING + 1)
    except OSError as e:
        raise SuiteError(source, None, f"cannot read it: {e.strerror or e}") from None
    if len(data) > FILE_CEILING:
        raise SuiteError(source, None, f"more than {FILE_CEILING:,} bytes: accessbench reads no larger suite file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        raise SuiteError(source, data.count(b"\n", 0, e.start) + 1,
                         f"not UTF-8: byte 0x{data[e.start]:02x} at column {e.start - line_start + 1}") from None
    # Universal newlines, as Path.read_text gives: a run stores this text and compares it.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse(text: str, source: str, quick: bool = False, rows: int | None = None) -> Suite:
    """A suite's text read and checked; ``quick`` at its --quick sizes, ``rows`` (--rows) the
    size of each table whose size is the reader's to choose (one with ``quick_rows``)."""
    def fail(loc: tuple, message: str) -> SuiteError:
        return SuiteError(source, line_of(text, loc), message)

    def refuse(loc: tuple, message: str) -> SuiteError:
        """fail, the message led by the key path (tables.0.rows: …)."""
        return fail(loc, f"{_dotted(loc)}: {message}")

    doc = _toml(text, source)
    _inspect(doc, refuse)
    for key in doc:
        if key not in _TOP_KEYS:
            raise fail((key,), f"unknown section {key!r} (expected {', '.join(sorted(_TOP_KEYS))})")
    header = _validate(_Header, doc.get("suite", {}), ("suite",), fail)
    if message := exceeded(header.limits, "file_bytes", len(text.encode())):
        raise SuiteError(source, None, message)
    parameters, raw_tables, raw_steps = _sections(doc, fail)
    varies = _counted(parameters, raw_steps, header.limits, fail, refuse)
    _placeholders_used(parameters, raw_tables, raw_steps, varies, fail)
    work = _Budget(header.limits)
    variants = [_variant(dict(zip(parameters, combo)), raw_tables, raw_steps, varies, header, quick, rows, work, fail,
                         refuse)
                for combo in itertools.product(*parameters.values())]
    _check_selection(header, fail)
    setup, server = _setup(doc, fail), _server(doc, fail)
    if header.data == "existing":
        _check_existing(raw_tables, setup, variants, fail, refuse)
    study = _validate(Study, doc["study"], ("study",), fail) if "study" in doc else None
    if study:
        _check_study(study, variants, fail)
    return Suite(
        name=header.name, description=header.description, seed=header.seed, source=source,
        text=text, parameters=parameters, paths=header.paths, methods=header.methods, setup=setup, server=server, study=study,
        variants=variants, data=header.data,
    )


EXISTING = 'data = "existing" reads the data already on the server'


def _check_existing(raw_tables: list, setup: dict, variants: list[Variant], fail, refuse) -> None:
    """A suite over the user's existing data declares no table, runs no setup, and no step of
    it writes: what would is refused here, naming it (the sessions are read-only as well)."""
    if raw_tables:
        raise fail(("tables", 0), f"{EXISTING}: a suite declares no [[tables]] of its own")
    if setup:
        raise fail(("setup",), f"{EXISTING} and writes nothing: no [setup]")
    for variant in variants:
        for i, step in enumerate(variant.steps):
            loc = ("steps", step.entry if step.entry is not None else i)
            if step.kind == "batch" or step.reset:
                raise refuse(loc + (("kind",) if step.kind == "batch" else ("reset",)),
                             f"{EXISTING} and writes nothing: no batch step, no reset")
            for key, dbms, sql in [("sql", None, step.sql), ("check", None, step.check), ("write", None, step.write),
                                   *(("sql_for", d, text) for d, text in step.sql_for.items())]:
                if sql and (write := write_in(sql, dbms)):
                    raise refuse(loc + ((key, dbms) if dbms else (key,)),
                                 f"{write}: {EXISTING} and writes nothing (every session is read-only)")


def _sections(doc: dict, fail) -> tuple[dict, list, list]:
    """The document's [parameters], [[tables]] and [[steps]], each of the right form."""
    parameters = doc.get("parameters", {})
    if not isinstance(parameters, dict):
        raise fail(("parameters",), "[parameters] is a table of name = [values…]")
    for key, values in parameters.items():
        if not _NAME.fullmatch(key):
            raise fail(("parameters", key), f"parameter {key!r}: a name of letters, digits and _ "
                                            f"(it is used as ${{{key}}})")
        if not isinstance(values, list) or not values:
            raise fail(("parameters", key), f"parameter {key} needs a non-empty list of values")
    raw_tables, raw_steps = doc.get("tables", []), doc.get("steps", [])
    for key, raw in (("tables", raw_tables), ("steps", raw_steps)):
        if not isinstance(raw, list):
            raise fail((key,), f"{key} is an array of tables: [[{key}]]")
    if not raw_steps:
        raise fail(("suite",), "the suite has no [[steps]]")
    return parameters, raw_tables, raw_steps


def _counted(parameters: dict, raw_steps: list, limits, fail, refuse) -> list[dict]:
    """Each step's ``vary``, once the variants and steps they make are within the limits —
    counted before expanding anything: a product of list lengths can be astronomically large."""
    varies = [_vary(raw, ("steps", i), fail) for i, raw in enumerate(raw_steps)]
    n_variants = math.prod(len(v) for v in parameters.values())
    if message := exceeded(limits, "variants", n_variants):
        raise refuse(("parameters",), message)
    counts = [math.prod(len(v) for v in vary.values()) for vary in varies]
    for i, n_steps in enumerate(counts):
        if message := exceeded(limits, "steps", n_steps):
            raise refuse(("steps", i, "vary"), message)
    if message := exceeded(limits, "steps", n_variants * sum(counts)):
        raise fail(("parameters",) if n_variants > 1 else ("steps", counts.index(max(counts))),
                   f"{n_variants:,} variants × {sum(counts):,} steps: {message}")
    return varies


def _variant(values: dict, raw_tables: list, raw_steps: list, varies: list[dict], header: "_Header", quick: bool,
             sized: int | None, work: "_Budget", fail, refuse) -> Variant:
    """One combination of the parameters' values: its tables and steps, checked."""
    limits, scale = header.limits, header.quick_scale if quick else 1.0
    tables: dict[str, Table] = {}
    names: dict[str, str] = {}  # table and index names (lower case) → whose they are
    rows = 0  # of the tables so far
    for i, raw in enumerate(raw_tables):
        raw = _subst(_like(raw, tables, ("tables", i), fail), values, ("tables", i), fail, limits.file_bytes)
        work.spend(raw, ("tables", i), refuse)
        table = _validate(Table, raw, ("tables", i), fail)
        # --quick keeps every row (parameter ranges refer to them) unless the table gives
        # its own quick size: a table only scanned, like the transfer suite's, whose size is
        # also the reader's to choose (--rows), within the suite's limits.
        if table.quick_rows is not None and (quick or sized is not None):
            table = table.model_copy(update={"rows": table.quick_rows if sized is None else sized})
        _check_table(table, ("tables", i), names, rows, limits, refuse)
        rows += table.rows
        tables[table.name] = table
    _check_references(tables, refuse)
    steps: dict[str, Step] = {}
    for i, raw in enumerate(raw_steps):
        for step in _expand_step(raw, varies[i], values, ("steps", i), fail, work, refuse):
            _check_step(step, ("steps", i), tables, limits, refuse)
            if step.name in steps:
                raise fail(("steps", i, "name"), f"step name {step.name!r} is used twice")
            steps[step.name] = _scaled(_scaled(step, scale, "iterations"), scale, "duration")
    return Variant(values=values, tables=list(tables.values()), steps=list(steps.values()))


def _check_selection(header: "_Header", fail) -> None:
    """The suite's own methods and paths are ones accessbench has."""
    if header.methods is not None:
        from ..methods import select as select_methods

        try:
            select_methods(header.methods)
        except InputError as e:
            raise fail(("suite", "methods"), str(e).replace("--method ", "method ", 1)) from None
    for name in header.paths or []:
        try:
            parse_path(name)
        except InputError as e:
            raise fail(("suite", "paths"), str(e).replace("--path ", "path ", 1)) from None


def _setup(doc: dict, fail) -> dict:
    setup = doc.get("setup", {})
    if not isinstance(setup, dict) or any(k not in registry.REGISTRY or not isinstance(v, list)
                                          or any(not isinstance(sql, str) or not sql.strip() for sql in v)
                                          for k, v in setup.items()):
        raise fail(("setup",), "setup takes lists of SQL per DBMS: [setup] postgresql = [\"...\"]")
    return setup


def _server(doc: dict, fail) -> dict:
    """[server.DBMS]: settings a managed server starts with, each one line of its configuration."""
    server = doc.get("server", {})
    if not isinstance(server, dict):
        raise fail(("server",), "[server.DBMS] tables of settings, e.g. [server.mariadb]")
    servers = registry.servers()  # an embedded DBMS has no server to set
    for dbms, settings in server.items():
        if dbms not in servers or not isinstance(settings, dict):
            raise fail(("server", dbms), f"[server.{dbms}]: server settings are for {', '.join(servers)} "
                                         "(a table of setting = value, e.g. innodb_flush_log_at_trx_commit = 2)")
        for name, value in settings.items():
            if name == "autocommit":  # workers pin it on: a server default would be overridden, or half-applied
                raise fail(("server", dbms, name), f"[server.{dbms}] autocommit: every method runs in autocommit "
                                                   "(recorded with the run); group statements into transactions "
                                                   "with a step's commit_every")
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name) or not isinstance(value, (str, int, float, bool)):
                raise fail(("server", dbms, name), f"[server.{dbms}] {name}: a setting name in lower case and a "
                                                   "string, number or boolean value")
            # A value is one line of a configuration file (or option): a line break would add settings.
            if isinstance(value, str) and (any(ord(ch) < 32 for ch in value) or len(value) > 1024):
                raise fail(("server", dbms, name), f"[server.{dbms}] {name}: a value is one line of at most "
                                                   "1,024 characters")
    return server


def _toml(text: str, source: str) -> dict:
    """The document, or a SuiteError: tomllib's message, or nesting it would recurse into."""
    depth = 0
    for token in _TOKENS.finditer(text):
        ch = token.group()
        depth += 1 if ch in "[{" else -1 if ch in "]}" else 0
        if depth > NESTING:
            raise SuiteError(source, text.count("\n", 0, token.start()) + 1, _TOO_DEEP)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        match = re.search(r"\(at line (\d+), column \d+\)$", str(e))
        message = re.sub(r"\s*\(at line .*\)$", "", str(e))
        raise SuiteError(source, int(match.group(1)) if match else None, f"not valid TOML: {message}") from None
    except RecursionError:  # the scan above should have caught it first
        raise SuiteError(source, None, _TOO_DEEP) from None


_TOO_DEEP = f"nested too deeply (more than {NESTING} arrays and tables inside each other)"


def _inspect(doc: dict, refuse) -> None:
    """What TOML (as tomllib reads it) allows but no suite means: nesting by dotted keys,
    integers beyond 64 bits, inf and nan, NUL characters (which no DBMS takes in SQL or text)."""
    stack: list[tuple[tuple, Any]] = [((), doc)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, (dict, list)):
            if len(loc) > NESTING:
                raise refuse(loc[:NESTING], _TOO_DEEP)
            items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
            for key, item in reversed(items):  # depth first, in the file's order
                if isinstance(key, str) and "\x00" in key:
                    raise refuse(loc, "a key contains a NUL character")
                stack.append((loc + (key,), item))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
            raise refuse(loc, f"{value} is outside the 64-bit integers TOML has")
        elif isinstance(value, float) and not math.isfinite(value):
            raise refuse(loc, f"{value} is not a finite number")
        elif isinstance(value, str) and "\x00" in value:
            raise refuse(loc, "contains a NUL character, which no DBMS takes in SQL or text")


def _dotted(loc: tuple) -> str:
    return ".".join(str(p) for p in loc)


def _placeholders(obj: Any) -> set[str]:
    found: set[str] = set()
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found.update(_PLACEHOLDER.findall(item))
    return found


def _placeholders_used(parameters: dict, raw_tables: list, raw_steps: list, varies: list, fail) -> None:
    """A parameter or vary name no placeholder uses would repeat identical work per value."""
    used = _placeholders(raw_tables) | _placeholders([{k: v for k, v in s.items() if k != "vary"} for s in raw_steps])
    for key in parameters:
        if key not in used:
            raise fail(("parameters", key), f"parameter {key}: ${{{key}}} appears in no table or step, so each of "
                                            "its values would load and run the same suite again")
    for i, (raw, vary) in enumerate(zip(raw_steps, varies)):
        for key in vary:
            if not _NAME.fullmatch(str(key)):
                raise fail(("steps", i, "vary"), f"vary {key!r}: a name of letters, digits and _ (used as ${{{key}}})")
            if key not in _placeholders({k: v for k, v in raw.items() if k not in ("vary", "name", "description")}):
                raise fail(("steps", i, "vary"), f"vary {key}: ${{{key}}} appears nowhere in the step but its name, "
                                                 "so its steps would all be the same")


def _check_table(table: Table, loc: tuple, taken: dict[str, str], earlier_rows: int, limits: Limits, refuse) -> None:
    """Sizes and names across tables (``taken``: the names of the tables before, and of their
    indexes; this table's are added), and values the columns' types cannot hold."""
    if found := table_problem(table):  # names and declared types no DBMS with a server takes
        raise refuse(loc + found[0], found[1])
    for message in (exceeded(limits, "rows", table.rows), exceeded(limits, "total_rows", table.rows + earlier_rows)):
        if message:
            raise refuse(loc + ("rows",), message)
    # PostgreSQL folds names to lower case, and it and SQLite keep tables and indexes in one
    # namespace: a name used twice is refused by the CREATE that comes second.
    if table.name.lower() in taken:
        raise refuse(loc + ("name",), f"table name {table.name!r} is taken by {taken[table.name.lower()]}")
    taken[table.name.lower()] = _dotted(loc)
    for k, name in enumerate(index_names(table)):
        if name.lower() in taken:
            raise refuse(loc + ("indexes", k), f"index name {name} is taken by {taken[name.lower()]}")
        taken[name.lower()] = f"an index of {_dotted(loc)}"
    for j, column in enumerate(table.columns):
        if found := generator_problem(column.gen, table.rows, limits):
            raise refuse(loc + ("columns", j, "gen") + found[0], found[1])
        if problem := column_problem(column, table.rows):
            raise refuse(loc + ("columns", j), problem)


def _check_references(tables: dict[str, Table], refuse) -> None:
    """Each column's ``references`` names a table of the suite and its one-column primary key."""
    for i, table in enumerate(tables.values()):
        for j, column in enumerate(table.columns):
            if column.references is None:
                continue
            name, key = column.references.split(".")
            other = tables.get(name)
            if other is None or other.primary_key != [key]:
                why = (f"no table {name!r} in [[tables]]" if other is None
                       else f"{key} is not {name}'s primary key ({', '.join(other.primary_key) or 'it has none'})")
                raise refuse(("tables", i, "columns", j, "references"),
                             f"references = {column.references!r}: {why}; a reference names another table's "
                             "one-column primary key")


# INSERT INTO t (a, b) VALUES (?, ?): the one statement shape whose markers name their columns.
_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)\s*VALUES\s*\(([^()]*)\)\s*;?\s*$",
                     re.I | re.S)


def _check_insert_types(step: Step, loc: tuple, tables: dict[str, Table], refuse) -> None:
    """A parameter whose values its column cannot take is the suite's error, before anything
    runs, wherever the statement says which column it fills (an INSERT of a suite table)."""
    match = _INSERT.match(step.sql or "")
    if not match or match.group(1) not in tables:
        return
    columns = {c.name.lower(): c for c in tables[match.group(1)].columns}
    names = [n.strip().lower() for n in match.group(2).split(",")]
    values = [v.strip() for v in match.group(3).split(",")]
    k = 0
    for name, value in zip(names, values):
        if value != "?":
            continue
        if name in columns and k < len(step.params) and (problem := fit_problem(step.params[k], columns[name].type)):
            raise refuse(loc + ("params", k), f"fills column {name} of {match.group(1)}: {problem}")
        k += 1


def _check_step(step: Step, loc: tuple, tables: dict[str, Table], limits: Limits, refuse) -> None:
    """The soft limits a step's settings must respect, and what its params and record name."""
    for key, field in (("iterations", "iterations"), ("iterations", "commit_every"), ("batch", "batch"),
                       ("clients", "clients"), ("clients", "pool_size"), ("duration", "duration"), ("rate", "rate")):
        value = getattr(step, field)
        if value is not None and (message := exceeded(limits, key, value)):
            raise refuse(loc + (field,), message)
    # An open loop without a duration lasts iterations / rate: at 0.001/s a thousand operations are 11 days.
    if step.rate is not None and step.duration is None:
        if message := exceeded(limits, "duration", step.iterations / step.rate):
            raise refuse(loc + ("rate",), f"{step.iterations:,} operations at {step.rate:g}/s: {message}")
    if len(step.params) > LOOSEST.markers:
        raise refuse(loc + ("params",), f"{len(step.params):,} params is above the limit of {LOOSEST.markers:,} "
                                        "parameters a statement has on every DBMS")
    for k, gen in enumerate(step.params):
        if found := generator_problem(gen, step.iterations, limits):
            raise refuse(loc + ("params", k) + found[0], found[1])
    _check_insert_types(step, loc, tables, refuse)
    for name in step.paths or []:
        try:
            parse_path(name)
        except InputError as e:
            raise refuse(loc + ("paths",), str(e).replace("--path ", "path ", 1)) from None
    if step.kind == "load":
        try:
            association.check(step, tables)
        except ValueError as e:
            raise refuse(loc, str(e)) from None
    if step.record is not None:
        table = tables.get(step.record.table)
        if table is None:
            raise refuse(loc + ("record",), f"no table {step.record.table!r} in [[tables]]")
        keys = dict(zip(index_names(table), table.indexes))
        if table.primary_key:
            keys["PRIMARY"] = table.primary_key
        if step.record.index is not None:
            key = keys.get(step.record.index)
            if key is None:
                raise refuse(loc + ("record",), f"table {table.name} has no index {step.record.index!r} "
                                                f"(it has {', '.join(keys) or 'none'})")
            if len(step.params) > len(key):
                raise refuse(loc + ("params",), f"{len(step.params)} params for an index of {len(key)} columns "
                                                f"({', '.join(key)})")


def _check_study(study: Study, variants: list[Variant], fail) -> None:
    from ..methods import catalog

    known = {m.name for m in catalog()}
    for i, pair in enumerate(study.pairs):
        unknown = [name for name in pair.candidates + pair.references if name not in known]
        if unknown:
            raise fail(("study", "pairs", i), f"no method {unknown[0]!r} (see accessbench methods)")
    labels = {f.label for f in study.figures}
    steps = {s.name: s for v in variants for s in v.steps}
    for i, figure in enumerate(study.figures):
        if any(label not in labels or label == figure.label for label in figure.ratio):
            raise fail(("study", "figures", i), f"ratio names a figure that is not there: {figure.ratio}")
        for path in filter(None, figure.paths):
            try:
                parse_path(path)
            except InputError as e:
                raise fail(("study", "figures", i), str(e).replace("--path ", "path ", 1)) from None
        for name in figure.steps:
            if name not in steps:
                raise fail(("study", "figures", i), f"no step {name!r} in the suite")
            params = steps[name].params
            if figure.per_param is not None and not (
                    figure.per_param < len(params) and params[figure.per_param].kind == "const"
                    and isinstance(params[figure.per_param].value, int) and params[figure.per_param].value >= 1):
                raise fail(("study", "figures", i), f"per_param = {figure.per_param}: step {name!r} has no constant "
                                                    "integer parameter of that index to divide by")


def _like(raw: Any, earlier: dict[str, Table], loc: tuple, fail) -> dict:
    """``like = "webhits"``: take columns and keys from an earlier table unless given."""
    if not isinstance(raw, dict):
        raise fail(loc, "each [[tables]] entry must be a table")
    if "like" not in raw:
        return raw
    raw = dict(raw)
    name = raw.pop("like")
    model = earlier.get(name) if isinstance(name, str) else None
    if model is None:
        raise fail(loc + ("like",), f"like = {name!r}: no earlier table of that name")
    base = model.model_dump(include={"columns", "primary_key", "indexes"})
    return {**base, **raw}


def _vary(raw: Any, loc: tuple, fail) -> dict:
    """A [[steps]] entry's vary, checked (so its combinations can be counted first)."""
    if not isinstance(raw, dict):
        raise fail(loc, "each [[steps]] entry must be a table")
    vary = raw.get("vary", {})
    if not isinstance(vary, dict) or any(not isinstance(v, list) or not v for v in vary.values()):
        raise fail(loc + ("vary",), "vary needs lists of values, e.g. vary = { mode = [\"literal\", \"prepared\"] }")
    return vary


def _expand_step(raw: dict, vary: dict, values: dict, loc: tuple, fail, work: "_Budget", refuse) -> list[Step]:
    raw = {k: v for k, v in raw.items() if k != "vary"}
    swept = [k for k in vary if k in SWEEPS]
    steps = []
    for combo in itertools.product(*vary.values()):
        local = dict(zip(vary, combo))
        named = dict(raw)
        if local and "${" not in str(named.get("name", "")):
            named["name"] = f"{named.get('name', '')}[{','.join(f'{k}={v}' for k, v in local.items())}]"
        named = _subst(named, {**values, **local}, loc, fail, work.limits.file_bytes)
        work.spend(named, loc, refuse)
        step = _validate(Step, named, loc, fail)
        step._entry = loc[-1]
        if swept:
            step._sweep = (str(raw.get("name", "")), ",".join(f"{k}={v}" for k, v in local.items() if k not in swept))
        steps.append(step)
    return steps


class _Budget:
    """The values left to validate under the soft limit ``values``: spent on each table and
    step before it is validated, so that a suite asking for too much stops at once."""

    def __init__(self, limits: Limits) -> None:
        self.limits, self.spent = limits, 0

    def spend(self, raw: Any, loc: tuple, refuse) -> None:
        left = self.limits.values - self.spent
        stack, n = [raw], 0
        while stack and n <= left:  # counts no further than the budget: a value may be huge
            item = stack.pop()
            n += 1 + len(item) // 100 if isinstance(item, str) else 1  # as long strings take memory
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        self.spent += n
        if n > left:  # how far above is not counted: that work is what the limit spares
            raise refuse(loc, f"the tables and steps so far, expanded, hold more than {self.limits.values:,} values, "
                              "the limit for all variants together (raise it with [suite.limits] values = …)")


def _subst(obj: Any, values: dict, loc: tuple, fail, longest: int) -> Any:
    """``obj`` with its placeholders replaced; no string it makes is longer than ``longest``
    characters (the suite file's limit: "${p}${p}…" could otherwise make gigabytes)."""
    if len(loc) > NESTING:  # _inspect refused deeper documents; recursion stays bounded regardless
        raise fail(loc, _TOO_DEEP)
    if isinstance(obj, dict):
        return {k: _subst(v, values, loc + (k,), fail, longest) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_subst(v, values, loc + (i,), fail, longest) for i, v in enumerate(obj)]
    if isinstance(obj, str) and "${" in obj:
        names = _PLACEHOLDER.findall(obj)
        for name in names:
            if name not in values:
                raise fail(loc, f"${{{name}}} is not a [parameters] or vary name")
        whole = _PLACEHOLDER.fullmatch(obj)
        if whole:  # keep the value's type: batch = "${batch}" becomes an integer
            return values[whole.group(1)]
        texts = {name: str(values[name]) for name in names}
        if len(obj) + sum(len(texts[name]) for name in names) > longest:
            raise fail(loc, f"{_dotted(loc)}: its placeholders make a string of more than {longest:,} characters "
                            "(the limit of the suite file itself)")
        return _PLACEHOLDER.sub(lambda m: texts[m.group(1)], obj)
    return obj


def _validate(model: type, data: Any, loc: tuple, fail):
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = tuple(p for p in err["loc"] if p not in _GEN_TAGS)
        raise fail(loc + where, _message(err, loc + where)) from None


def _message(err: dict, loc: tuple) -> str:
    path = ".".join(str(p) for p in loc)
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden" and loc[:2] == ("suite", "limits"):
        return f"unknown key {loc[-1]!r} in suite.limits (the limits are {', '.join(Limits.model_fields)})"
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r} in {'.'.join(str(p) for p in loc[:-1])}"
    if loc[:2] == ("suite", "limits") and len(loc) == 3:
        ceiling = next(m.le for m in Limits.model_fields[loc[2]].metadata if hasattr(m, "le"))
        return f"{path}: a limit is a whole number from 1 to {ceiling:,} (got {err.get('input')!r})"
    if kind == "union_tag_invalid":
        tag = err.get("ctx", {}).get("tag")
        if tag in generators.TABLE_KINDS:
            return f"{path}: a {tag} generator is for a table's columns only, not a step's parameters"
        return f"{path}: unknown generator {tag!r} (expected {', '.join(sorted(_GEN_TAGS))})"
    if kind == "union_tag_not_found":
        return f"{path}: a generator needs kind = one of {', '.join(sorted(_GEN_TAGS))}"
    if kind == "missing":
        return f"{path}: required key is missing"
    msg = msg.removeprefix("Value error, ")
    return f"{path}: {msg}"


def _scaled(model, scale: float, field: str):
    if scale == 1.0:
        return model
    value = getattr(model, field)
    if field == "duration":  # --quick: a shorter load, never under half a second
        return model if value is None else model.model_copy(update={field: max(0.5, value * scale)})
    update = {field: max(1, math.ceil(value * scale)) if value else 0}
    if field == "iterations":  # constants marked `scaled` (a loop count inside the server) follow
        update["params"] = [
            g.model_copy(update={"value": max(1, math.ceil(g.value * scale))})
            if g.kind == "const" and getattr(g, "scaled", False) and isinstance(g.value, int) else g
            for g in model.params
        ]
    return model.model_copy(update=update)
