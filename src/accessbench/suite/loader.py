"""Suite TOML → validated ``Suite``. Every error is one ``SuiteError`` naming file:line.

Expansion happens here, before validation of each piece, so an error in an expanded step
still points at the line where the user wrote it:
- ``[parameters] name = [v1, v2]`` makes one *variant* per combination (data reloaded per
  variant); ``${name}`` anywhere in tables or steps takes the variant's value;
- ``vary = { name = [v1, v2] }`` in a step makes one step per combination; its name gets
  ``${name}`` substituted or, without a placeholder, a ``[name=value]`` suffix.
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError, SuiteError
from .locate import line_of
from ..paths import parse as parse_path
from .model import DBMSS, SERVER_DBMSS, Step, Study, Suite, Table, Variant

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOP_KEYS = {"suite", "parameters", "tables", "steps", "setup", "server", "study"}
# Step settings whose values, when varied, make a sweep the report draws as curves.
SWEEPS = ("clients", "rate")
_GEN_TAGS = {"seq", "uniform", "choice", "text", "timestamp", "const"}


class _Header(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    seed: int = 1
    quick_scale: float = Field(0.1, gt=0, le=1, description="iterations factor for --quick")
    paths: list[str] | None = None


def builtin_names() -> list[str]:
    folder = resources.files("accessbench") / "suites"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def builtin_text(name: str) -> str:
    return (resources.files("accessbench") / "suites" / f"{name}.toml").read_text()


def load(name_or_path: str, quick: bool = False) -> Suite:
    """A built-in suite by name, or a suite file by path."""
    if name_or_path in builtin_names():
        return parse(builtin_text(name_or_path), f"builtin:{name_or_path}", quick)
    path = Path(name_or_path)
    if not path.is_file():
        raise InputError(
            f"--suite {name_or_path}: no such built-in suite ({', '.join(builtin_names())}) or file"
        )
    return parse(path.read_text(), str(path), quick)


def parse(text: str, source: str, quick: bool = False) -> Suite:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        match = re.search(r"\(at line (\d+), column \d+\)$", str(e))
        message = re.sub(r"\s*\(at line .*\)$", "", str(e))
        raise SuiteError(source, int(match.group(1)) if match else None, f"not valid TOML: {message}") from None

    def fail(loc: tuple, message: str) -> SuiteError:
        return SuiteError(source, line_of(text, loc), message)

    for key in doc:
        if key not in _TOP_KEYS:
            raise fail((key,), f"unknown section {key!r} (expected {', '.join(sorted(_TOP_KEYS))})")
    header = _validate(_Header, doc.get("suite", {}), ("suite",), fail)
    parameters = doc.get("parameters", {})
    for key, values in parameters.items():
        if not isinstance(values, list) or not values:
            raise fail(("parameters", key), f"parameter {key} needs a non-empty list of values")
    raw_tables, raw_steps = doc.get("tables", []), doc.get("steps", [])
    if not raw_steps:
        raise fail(("suite",), "the suite has no [[steps]]")

    scale = header.quick_scale if quick else 1.0
    variants = []
    for combo in itertools.product(*parameters.values()):
        values = dict(zip(parameters, combo))
        tables: list[Table] = []
        for i, raw in enumerate(raw_tables):
            raw = _like(raw, tables, ("tables", i), fail)
            table = _validate(Table, _subst(raw, values, ("tables", i), fail), ("tables", i), fail)
            tables.append(table)  # --quick keeps every row: parameter ranges refer to them
        steps = [
            _scaled(_scaled(step, scale, "iterations"), scale, "duration")
            for i, raw in enumerate(raw_steps)
            for step in _expand_step(raw, values, ("steps", i), fail)
        ]
        seen: set[str] = set()
        for i, step in enumerate(steps):
            if step.name in seen:
                raise fail(("steps",), f"step name {step.name!r} is used twice")
            seen.add(step.name)
        variants.append(Variant(values=values, tables=tables, steps=steps))
    for i, name in enumerate(header.paths or []):
        try:
            parse_path(name)
        except InputError as e:
            raise fail(("suite", "paths"), str(e).replace("--path ", "path ", 1)) from None
    setup = doc.get("setup", {})
    if not isinstance(setup, dict) or any(k not in DBMSS or not isinstance(v, list) for k, v in setup.items()):
        raise fail(("setup",), "setup takes lists of SQL per DBMS: [setup] postgresql = [\"...\"]")
    server = doc.get("server", {})
    for dbms, settings in server.items():
        if dbms not in SERVER_DBMSS or not isinstance(settings, dict):
            raise fail(("server", dbms), f"[server.{dbms}]: server settings are for {', '.join(SERVER_DBMSS)} "
                                         "(a table of setting = value, e.g. innodb_flush_log_at_trx_commit = 2)")
        for name, value in settings.items():
            if name == "autocommit":  # workers pin it on: a server default would be overridden, or half-applied
                raise fail(("server", dbms, name), f"[server.{dbms}] autocommit: every method runs in autocommit "
                                                   "(recorded with the run); group statements into transactions "
                                                   "with a step's commit_every")
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or not isinstance(value, (str, int, float, bool)):
                raise fail(("server", dbms, name), f"[server.{dbms}] {name}: a setting name in lower case and a "
                                                   "string, number or boolean value")
    study = _validate(Study, doc["study"], ("study",), fail) if "study" in doc else None
    if study:
        labels = {f.label for f in study.figures}
        for i, figure in enumerate(study.figures):
            if any(label not in labels for label in figure.ratio):
                raise fail(("study", "figures", i), f"ratio names a figure that is not there: {figure.ratio}")
            for name in figure.steps:
                if name not in {s.name for v in variants for s in v.steps}:
                    raise fail(("study", "figures", i), f"no step {name!r} in the suite")
    return Suite(
        name=header.name, description=header.description, seed=header.seed, source=source,
        text=text, parameters=parameters, paths=header.paths, setup=setup, server=server, study=study,
        variants=variants,
    )


def _like(raw: Any, earlier: list[Table], loc: tuple, fail) -> dict:
    """``like = "webhits"``: take columns and keys from an earlier table unless given."""
    if not isinstance(raw, dict):
        raise fail(loc, "each [[tables]] entry must be a table")
    if "like" not in raw:
        return raw
    raw = dict(raw)
    name = raw.pop("like")
    model = next((t for t in earlier if t.name == name), None)
    if model is None:
        raise fail(loc + ("like",), f"like = {name!r}: no earlier table of that name")
    base = model.model_dump(include={"columns", "primary_key", "indexes"})
    return {**base, **raw}


def _expand_step(raw: dict, values: dict, loc: tuple, fail) -> list[Step]:
    if not isinstance(raw, dict):
        raise fail(loc, "each [[steps]] entry must be a table")
    raw = dict(raw)
    vary = raw.pop("vary", {})
    if not isinstance(vary, dict) or any(not isinstance(v, list) or not v for v in vary.values()):
        raise fail(loc + ("vary",), "vary needs lists of values, e.g. vary = { mode = [\"literal\", \"prepared\"] }")
    swept = [k for k in vary if k in SWEEPS]
    steps = []
    for combo in itertools.product(*vary.values()):
        local = dict(zip(vary, combo))
        named = dict(raw)
        if local and "${" not in str(named.get("name", "")):
            named["name"] = f"{named.get('name', '')}[{','.join(f'{k}={v}' for k, v in local.items())}]"
        step = _validate(Step, _subst(named, {**values, **local}, loc, fail), loc, fail)
        if swept:
            step._sweep = (str(raw.get("name", "")), ",".join(f"{k}={v}" for k, v in local.items() if k not in swept))
        steps.append(step)
    return steps


def _subst(obj: Any, values: dict, loc: tuple, fail) -> Any:
    if isinstance(obj, dict):
        return {k: _subst(v, values, loc + (k,), fail) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_subst(v, values, loc + (i,), fail) for i, v in enumerate(obj)]
    if isinstance(obj, str) and "${" in obj:
        for name in _PLACEHOLDER.findall(obj):
            if name not in values:
                raise fail(loc, f"${{{name}}} is not a [parameters] or vary name")
        whole = _PLACEHOLDER.fullmatch(obj)
        if whole:  # keep the value's type: batch = "${batch}" becomes an integer
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), obj)
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
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r} in {'.'.join(str(p) for p in loc[:-1])}"
    if kind == "union_tag_invalid":
        tag = err.get("ctx", {}).get("tag")
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
