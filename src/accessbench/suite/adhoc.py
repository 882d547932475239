"""Ad-hoc statements as a suite (``run --sql``, ``--sql-file``): the suite's TOML text is made
here and read by the loader as any suite's is, so that what ``--save-suite`` writes is exactly
what ran, and every check a suite gets (markers against parameters, limits) it gets too.

A parameter is a generator written as a call: its kind (docs/suites.md, Generators) and its
settings, in the order ``ARGUMENTS`` gives or by name, literals only — numbers, 'strings',
true/false: ``uniform(1, 1000)``, ``uniform(lo=1, hi=1000)``, ``choice('r', 'i')``,
``text('user-####')``, ``const(42)``, ``decimal('0.00', '99.99', 2)``. A statement's ``?``
markers take its parameters in order.

A file holds statements each ended by a line that ends in ``;``, declared by the comment
lines before it::

    -- step: by-id
    -- param: uniform(1, 1000)
    SELECT name FROM visitors WHERE id = ?;

(``step``: its name, by default sql1, sql2 … in the file's order; ``param``: one line per
marker, in order). Other comment lines are the statement's own.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w
from pydantic import TypeAdapter, ValidationError

from ..errors import InputError
from ..protocol.sqltext import count_markers
from .model import MODES, Generator
from .readonly import write_in

# Each generator's settings in the order a call gives them without names (choice: all its values).
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "uniform": ("lo", "hi"), "choice": ("values",), "const": ("value",), "seq": ("start", "step"),
    "float": ("lo", "hi", "digits"), "decimal": ("lo", "hi", "scale"), "text": ("pattern",),
    "date": ("start", "step_days"), "timestamp": ("start", "step_us"), "bytes": ("length",),
}
_GENERATOR = TypeAdapter(Generator)
_DECLARATION = re.compile(r"^\s*--\s*(step|param)\s*:\s*(.*?)\s*$", re.I)
_STEP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@dataclass
class Statement:
    sql: str
    params: list[dict] = field(default_factory=list)
    name: str | None = None
    where: str = "--sql"  # what the user wrote it in, for errors: --sql 2, queries.sql:14


def parse_param(text: str, where: str = "--param") -> dict:
    """A generator's spec from its call form; a malformed one is an input error naming it."""
    def fail(why: str) -> InputError:
        return InputError(f"{where} {text!r}: {why}")

    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise fail("not a generator call like uniform(1, 1000) or choice('a', 'b')") from None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise fail("not a generator call like uniform(1, 1000) or choice('a', 'b')")
    kind = call.func.id
    if kind not in ARGUMENTS:
        raise fail(f"no generator {kind} (the generators: {', '.join(ARGUMENTS)})")
    args = [_literal(node, fail) for node in call.args]
    named = {k.arg: _literal(k.value, fail) for k in call.keywords if k.arg}
    if kind == "choice":
        if not args and "values" not in named:
            raise fail("choice needs its values: choice('r', 'i')")
        spec = {"kind": kind, **({"values": args} if args else {}), **named}
    else:
        if len(args) > len(ARGUMENTS[kind]):
            most = len(ARGUMENTS[kind])
            raise fail(f"{kind} takes at most {most} value{'s' if most > 1 else ''} ({', '.join(ARGUMENTS[kind])})")
        spec = {"kind": kind, **dict(zip(ARGUMENTS[kind], args)), **named}
    try:
        return _GENERATOR.validate_python(spec).model_dump(exclude_defaults=True) | {"kind": kind}
    except ValidationError as e:
        err = e.errors()[0]
        place = ".".join(str(p) for p in err["loc"][1:] if not isinstance(p, int))
        raise fail(f"{place + ': ' if place else ''}{err['msg'].removeprefix('Value error, ')}") from None


def _literal(node: ast.AST, fail) -> object:
    if isinstance(node, ast.Name) and node.id in ("true", "false"):  # TOML's and SQL's spelling
        return node.id == "true"
    try:
        value = ast.literal_eval(node)
    except ValueError:
        raise fail(f"{ast.unparse(node)} is not a literal (a number, 'a string', true or false)") from None
    if not isinstance(value, (bool, int, float, str)):
        raise fail(f"{ast.unparse(node)} is not a number, 'a string', true or false")
    return value


def from_options(sqls: list[str], params: list[str]) -> list[Statement]:
    """``--sql`` (several) and ``--param`` (several): one ``--sql`` takes every ``--param``;
    with several, each takes as many as it has markers, in order."""
    specs = [parse_param(p) for p in params]
    statements = []
    for i, sql in enumerate(sqls, 1):
        where = "--sql" if len(sqls) == 1 else f"--sql {i}"
        taken = len(specs) if len(sqls) == 1 else count_markers(sql)
        statements.append(Statement(sql.strip().rstrip(";").strip(), specs[:taken], None, where))
        specs = specs[taken:]
    if specs:
        raise InputError(f"--param: {len(specs)} more than the statements' ? markers take")
    return statements


def read_file(path: str) -> list[Statement]:
    """The statements of a ``--sql-file``, each with what its comment lines declare."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise InputError(f"--sql-file {path}: {e.strerror or e}") from None
    statements, lines, declared, start = [], [], {"param": []}, None
    for number, line in enumerate(text.splitlines(), 1):
        if m := _DECLARATION.match(line):
            key, value = m.group(1).lower(), m.group(2)
            where = f"{path}:{number}"
            if key == "param":
                declared["param"].append(parse_param(value, where))
            elif not _STEP_NAME.match(value):
                raise InputError(f"{where}: step name {value!r}: letters, digits, _ . - (not first)")
            else:
                declared["step"] = value
            continue
        if not lines and not line.strip():
            continue
        start = start or number
        lines.append(line)
        if line.rstrip().endswith(";"):
            statements.append(Statement("\n".join(lines).strip().rstrip(";").strip(), declared["param"],
                                        declared.get("step"), f"{path}:{start}"))
            lines, declared, start = [], {"param": []}, None
    if any(line.strip() and not line.strip().startswith("--") for line in lines):
        raise InputError(f"{path}:{start}: the last statement has no ; at the end of a line")
    if not statements:
        raise InputError(f"--sql-file {path}: no statement (each ends with ; at the end of a line)")
    return statements


_ORIGIN = re.compile(r"^(--sql(?: \d+)?|.+?:\d+): ")


def origin(step, suite) -> str:
    """Where the user wrote ``step``, for an error: ``--sql 2`` or ``queries.sql:14`` for an
    ad-hoc statement (its description begins with it), else the suite and the step's name."""
    m = _ORIGIN.match(step.description or "")
    return m.group(1) if suite.source.startswith("--sql") and m else f"{suite.source}: step {step.name}"


ITERATIONS = 200  # statements a trial runs, by default: a point select's trial lasts some 10 ms


def from_request(request) -> tuple[str, str]:
    """The ad-hoc suite ``run``'s options ask for — ``--sql-file``'s statements, then each
    ``--sql`` with its ``--param``s — as (TOML text, source); ``--save-suite`` writes the text."""
    statements = read_file(request.sql_file) if request.sql_file else []
    statements += from_options(request.sql or [], request.param or [])
    modes = request.mode or None
    for mode in modes or []:
        if mode not in MODES:
            raise InputError(f"--mode {mode}: expected {', '.join(MODES)}")
    command = " ".join(["run", *(f"--sql-file {request.sql_file}",) * bool(request.sql_file),
                        *(f"--sql {s!r}" for s in request.sql or []), *(f"--param {p!r}" for p in request.param or [])])
    text = suite_text(statements, modes, request.iterations or ITERATIONS, command)
    if request.save_suite:
        try:
            Path(request.save_suite).write_text(text)
        except OSError as e:
            raise InputError(f"--save-suite {request.save_suite}: {e.strerror or e}") from None
    return text, f"--sql-file {request.sql_file}" if request.sql_file else "--sql"


def suite_text(statements: list[Statement], modes: list[str] | None = None, iterations: int = ITERATIONS,
               command: str = "") -> str:
    """The suite that measures each statement in each protocol mode, as TOML: over the data
    already on the target (``data = "existing"``), so a statement that writes is refused here."""
    names: set[str] = set()
    steps = []
    for i, st in enumerate(statements, 1):
        name = st.name or f"sql{i}"
        if name in names:
            raise InputError(f"{st.where}: a second step named {name}")
        if write := write_in(st.sql, None):
            raise InputError(f"{st.where}: {' '.join(st.sql.split())!r} writes ({write}); statements run over the "
                             "data that is there, in read-only sessions: only queries")
        names.add(name)
        steps.append({
            "name": f"{name}-${{mode}}", "kind": "exec", "description": f"{st.where}: {' '.join(st.sql.split())}"[:200],
            "sql": st.sql, **({"params": st.params} if st.params else {}), "mode": "${mode}",
            "vary": {"mode": list(modes or MODES)}, "iterations": iterations,
        })
    doc = {"suite": {"name": "adhoc", "description": f"{len(steps)} ad-hoc statement{'s' if len(steps) > 1 else ''}",
                     "data": "existing"},
           "steps": steps}
    head = f"# made by accessbench {command}\n" if command else ""
    return head + tomli_w.dumps(doc, multiline_strings=True)
