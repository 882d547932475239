"""SQL text in the suites' neutral form (``?`` markers) turned into what a driver takes.

The scanner skips quoted strings, quoted identifiers and comments, so a ``?`` inside
``'a?b'`` is not a marker.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Any, Callable, Sequence


def _segments(sql: str) -> list[str]:
    """Split ``sql`` at its markers: n markers give n + 1 segments."""
    segments, current, i, n = [], [], 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"":
            end = i + 1
            while end < n:
                if sql[end] == ch:
                    if end + 1 < n and sql[end + 1] == ch:  # doubled quote inside
                        end += 2
                        continue
                    break
                end += 1
            current.append(sql[i : end + 1])
            i = end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            current.append(sql[i:end])
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = n if end < 0 else end + 2
            current.append(sql[i:end])
            i = end
        elif ch == "?":
            segments.append("".join(current))
            current = []
            i += 1
        else:
            current.append(ch)
            i += 1
    segments.append("".join(current))
    return segments


def count_markers(sql: str) -> int:
    return len(_segments(sql)) - 1


# paramstyle → how the k-th (0-based) marker is written
_MARKERS: dict[str, Callable[[int], str]] = {
    "qmark": lambda k: "?",
    "format": lambda k: "%s",
    "numeric": lambda k: f"${k + 1}",
    "named": lambda k: f":p{k + 1}",
}


def convert(sql: str, paramstyle: str) -> str:
    """Rewrite the markers for a driver's paramstyle (``qmark``, ``format``, ``numeric``
    ``$n``, ``named`` ``:pn``). For ``format`` a literal ``%`` is doubled, as those drivers
    require."""
    segments = _segments(sql)
    if paramstyle == "format":
        segments = [s.replace("%", "%%") for s in segments]
    marker = _MARKERS[paramstyle]
    out = [segments[0]]
    for k, seg in enumerate(segments[1:]):
        out.append(marker(k))
        out.append(seg)
    return "".join(out)


@dataclass(frozen=True)
class LiteralRules:
    """How a DBMS reads the ``literal`` mode's values (PROTOCOL.md, Literal rules): where it
    departs from standard SQL."""

    booleans: tuple[str, str] = ("TRUE", "FALSE")  # true, false
    float_cast: str = ""              # after a float's text (PostgreSQL reads exponent text as numeric)
    date_keyword: bool = False        # DATE 'YYYY-MM-DD' rather than the bare string
    bytes_around: tuple[str, str] = ("X'", "'")  # around the bytes' hex digits
    backslash_escapes: bool = False   # a backslash in a string is an escape character: doubled


STANDARD = LiteralRules()
# The rules by the ``dbms`` an endpoint names, as PROTOCOL.md gives them and every worker keys
# them (the Python worker, which imports this package alone, among them); any other DBMS
# gets standard SQL's.
DIALECTS = {
    "postgresql": LiteralRules(float_cast="::float8", date_keyword=True, bytes_around=("'\\x", "'::bytea")),
    "sqlite": LiteralRules(booleans=("1", "0")),  # no boolean type: bound as integer 1/0, so written as one
    "mariadb": LiteralRules(backslash_escapes=True),  # backslash is an escape in its strings (default sql_mode)
    "duckdb": LiteralRules(date_keyword=True),
}


def literal(value: Any, dialect: str | LiteralRules) -> str:
    """A value as an SQL literal, for the ``literal`` mode (values inlined into the text), by
    ``dialect``'s rules: given, or those of the DBMS it names."""
    rules = dialect if isinstance(dialect, LiteralRules) else DIALECTS.get(dialect, STANDARD)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return rules.booleans[0] if value else rules.booleans[1]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, float):
        # Shortest round-trip digits, always in exponent form: 0.1e0 is an approximate-value
        # (double) literal on MariaDB, where 0.1 would be DECIMAL.
        text = repr(value) if "e" in repr(value) else repr(value) + "e0"
        return text + rules.float_cast
    if isinstance(value, dt.datetime):
        return "'" + value.isoformat(sep=" ") + "'"
    if isinstance(value, dt.date):
        return ("DATE '" if rules.date_keyword else "'") + value.isoformat() + "'"
    if isinstance(value, (bytes, bytearray)):
        return rules.bytes_around[0] + bytes(value).hex() + rules.bytes_around[1]
    if isinstance(value, str):
        if rules.backslash_escapes:
            value = value.replace("\\", "\\\\")
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"cannot inline a {type(value).__name__} as an SQL literal")


def inline(sql: str, params: Sequence[Any], dialect: str | LiteralRules) -> str:
    """The statement with each marker replaced by its value as a literal."""
    segments = _segments(sql)
    if len(segments) - 1 != len(params):
        raise ValueError(f"{len(segments) - 1} markers but {len(params)} values")
    out = [segments[0]]
    for value, seg in zip(params, segments[1:]):
        out.append(literal(value, dialect))
        out.append(seg)
    return "".join(out)


def as_sqlite(row: Sequence[Any]) -> tuple:
    """A row as SQLite, which has no timestamp, date, decimal or boolean type, stores and binds
    it everywhere in accessbench (protocol/PROTOCOL.md, Types): timestamps as ISO text
    ``YYYY-MM-DD HH:MM:SS[.ffffff]``, dates as ``YYYY-MM-DD``, decimals as their plain text,
    booleans as integers 1/0."""
    return tuple(_sqlite_value(v) for v in row)


def _sqlite_value(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, bool):
        return int(v)
    return v
