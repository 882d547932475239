"""SQL text in the suites' neutral form (``?`` markers) turned into what a driver takes.

The scanner skips quoted strings, quoted identifiers and comments, so a ``?`` inside
``'a?b'`` is not a marker.
"""

from __future__ import annotations

import datetime as dt
import decimal
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


def literal(value: Any, dialect: str) -> str:
    """A value as an SQL literal, for the ``literal`` mode (values inlined into the text)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, decimal.Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        return "'" + value.isoformat(sep=" ") + "'"
    if isinstance(value, dt.date):
        return "'" + value.isoformat() + "'"
    if isinstance(value, (bytes, bytearray)):
        return ("'\\x" + bytes(value).hex() + "'::bytea") if dialect == "postgresql" else ("X'" + bytes(value).hex() + "'")
    if isinstance(value, str):
        if dialect == "mariadb":  # backslash is an escape in MariaDB strings (default sql_mode)
            value = value.replace("\\", "\\\\")
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"cannot inline a {type(value).__name__} as an SQL literal")


def inline(sql: str, params: Sequence[Any], dialect: str) -> str:
    """The statement with each marker replaced by its value as a literal."""
    segments = _segments(sql)
    if len(segments) - 1 != len(params):
        raise ValueError(f"{len(segments) - 1} markers but {len(params)} values")
    out = [segments[0]]
    for value, seg in zip(params, segments[1:]):
        out.append(literal(value, dialect))
        out.append(seg)
    return "".join(out)


def timestamps_as_text(row: Sequence[Any]) -> tuple:
    """A row with its timestamps as ISO text (``YYYY-MM-DD HH:MM:SS[.ffffff]``): how SQLite,
    which has no timestamp type, stores and binds them everywhere in accessbench."""
    return tuple(v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v for v in row)
