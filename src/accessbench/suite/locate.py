"""Where in a TOML file a value was written: maps a key path such as
``("steps", 3, "params", 0, "lo")`` to a line number, so that validation errors name
``file:line``. tomllib keeps no positions, so this is a small scanner over the text that
understands what suites use: headers, ``[[arrays of tables]]``, ``key = value`` lines and
multi-line arrays with one element per line.
"""

from __future__ import annotations

import re

# The name neither starts nor ends with a space, so that the spaces around it belong to \s*
# alone: a name that may is matched in cubic time, seconds for a line of 2,000 spaces.
_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"'](?:[A-Za-z0-9_.\-\"' ]*[A-Za-z0-9_.\-\"'])?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=\s*(.*)$")


def _depth_change(text: str) -> int:
    depth, quote = 0, None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return depth


def key_lines(text: str) -> dict[tuple, int]:
    """Every key path the scanner recognises, with its 1-based line."""
    lines: dict[tuple, int] = {}
    counters: dict[tuple, int] = {}
    table: tuple = ()
    array_key: tuple | None = None  # inside a multi-line array value
    array_depth, element = 0, -1
    # TOML ends lines at \n only (splitlines would also split at \x0c, \u2028, … inside strings)
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if array_key is not None:
            if array_depth == 1 and stripped and stripped[0] not in "]#":
                element += 1
                lines.setdefault(array_key + (element,), number)
            array_depth += _depth_change(stripped)
            if array_depth <= 0:
                array_key = None
            continue
        if not stripped or stripped.startswith("#"):
            continue
        header = _HEADER.match(raw)
        if header and not _KEY.match(raw):
            parts = tuple(p.strip().strip("\"'") for p in header.group(2).split("."))
            # Resolve each part against arrays of tables already open: [[tables.columns]]
            # belongs to the current element of "tables".
            path: tuple = ()
            for part in parts[:-1]:
                path += (part,)
                if path in counters:
                    path += (counters[path],)
            path += (parts[-1],)
            if header.group(1) == "[[":
                counters[path] = counters.get(path, -1) + 1
                path += (counters[path],)
            table = path
            lines.setdefault(table, number)
            continue
        key = _KEY.match(raw)
        if key:
            name = key.group(1).strip('"')
            path = table + (name,)
            lines.setdefault(path, number)
            depth = _depth_change(key.group(2))
            if depth > 0:
                array_key, array_depth, element = path, depth, -1
    return lines


def line_of(text: str, loc: tuple) -> int | None:
    """The line of the longest known prefix of ``loc`` (None when nothing matches)."""
    lines = key_lines(text)
    for end in range(len(loc), 0, -1):
        if tuple(loc[:end]) in lines:
            return lines[tuple(loc[:end])]
    return None
