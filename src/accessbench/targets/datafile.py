"""``run --data FILE``: the data a managed or embedded target holds for a run over existing data
(``--sql``, ``data = "existing"``) — the user's database file or dump, loaded once into the
run's own server or copied into its work directory (the user's file is never opened for
writing), then read in read-only sessions like a server of the user's.

What a file is, is read from its first bytes: an SQLite database, a DuckDB database, a
``pg_dump`` archive (custom format, for pg_restore), or else SQL text (``pg_dump``'s plain
format, ``mariadb-dump``), which either server's client can load.
"""

from __future__ import annotations

import os

from ..errors import InputError

KINDS = {  # a file's kind → the DBMSs that can load it
    "sqlite": ("sqlite",), "duckdb": ("duckdb",), "pg_dump archive": ("postgresql",),
    "SQL text": ("postgresql", "mariadb"),
}


def kind_of(path: str) -> str:
    """The file's kind (a key of ``KINDS``); an unreadable file is one line naming it."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise InputError(f"--data {path}: {e.strerror or e}") from None
    if head.startswith(b"SQLite format 3\0"):
        return "sqlite"
    if head[8:12] == b"DUCK":
        return "duckdb"
    if head.startswith(b"PGDMP"):
        return "pg_dump archive"
    return "SQL text"


def targets_for(files: list[str]) -> list[str]:
    """The managed targets ``--data`` files name when no --target is given: the one DBMS each
    loads into; SQL text, which either server loads, must be told which."""
    specs = []
    for file in files:
        takers = KINDS[kind_of(file)]
        if len(takers) > 1:
            raise InputError(f"--data {file}: SQL text loads into {' or '.join(takers)}: say which with --target")
        specs.append(takers[0])
    return list(dict.fromkeys(specs))


def assign(targets: list, files: list[str]) -> None:
    """Each managed or embedded target of a run over existing data gets the one file it can
    load (``target.data_file``); a target with none, or a file no target takes, is one line."""
    kinds = {os.path.abspath(f): kind_of(f) for f in files}
    used = set()
    for target in targets:
        if not target.managed:
            continue
        fitting = [f for f, kind in kinds.items() if target.dbms in KINDS[kind]]
        if len(fitting) != 1:
            have = "no --data file it can load" if not fitting else f"{len(fitting)} --data files it could load"
            raise InputError(f"--target {target.name}: a run over existing data measures a server of yours (a URL, "
                             f"or env), or a managed or embedded target given the data to hold: {have} "
                             f"({_loads(target.dbms)})")
        target.data_file = fitting[0]
        used.add(fitting[0])
    for file, kind in kinds.items():
        if file not in used:
            raise InputError(f"--data {file}: a {kind} file, and no managed target of the run takes it "
                             f"(it loads into {', '.join(KINDS[kind])})")


def _loads(dbms: str) -> str:
    kinds = [kind for kind, takers in KINDS.items() if dbms in takers]
    return f"{dbms} loads {' or '.join(kinds)}"
