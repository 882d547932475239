"""The DBMS adapter interface: what the runner needs from a target."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Any, Iterable

from ..suite.model import Table


class TargetUnavailable(Exception):
    """This target cannot be used on this machine; the message says why in one line."""


class Target(ABC):
    name: str              # as shown and stored: "postgresql", "sqlite", a URL without password
    dbms: str
    managed: bool
    paths: tuple[str, ...]  # paths this target can be reached by, default first
    local_server = False    # a server process on this machine whose CPU the runner can read
    serves_by_thread = False  # its server_pids are OS thread ids of one server process (MariaDB)
    server_settings: dict[str, Any] = {}  # the suite's [server.DBMS]: a managed server starts with them

    @abstractmethod
    def start(self, workdir: str) -> None:
        """Make the target usable (start a managed server, connect to an external one)."""

    @abstractmethod
    def stop(self) -> None:
        """Undo ``start``: drop accessbench's own objects, stop what was started. Safe to
        call twice and after a failed start."""

    @abstractmethod
    def endpoint(self, path: str) -> dict[str, Any]:
        """What a worker's ``open`` needs to reach the target by ``path`` (may hold a
        password: sent to workers, never stored or printed)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Server version and the settings that decide results, for the run record."""

    @abstractmethod
    def create(self, tables: list[Table]) -> None:
        """(Re)create the suite's tables in accessbench's own schema or file."""

    @abstractmethod
    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        """Bulk-load rows by the DBMS's fast path."""

    @abstractmethod
    def execute(self, sql: str) -> None:
        """Run a statement on the runner's own connection (reset SQL)."""

    @abstractmethod
    def changes(self, sql: str, params: tuple = ()) -> int:
        """Run a write (neutral SQL, ``?`` markers) on the runner's own connection; the rows it
        changed — rows matched, on every DBMS (MariaDB counts them with CLIENT_FOUND_ROWS)."""

    @abstractmethod
    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Rows of a query (neutral SQL, ``?`` markers) on the runner's own connection: check
        SQL, and the reference results conformance compares workers with."""


def column_ddl(table: Table, type_of) -> str:
    cols = [f"{c.name} {type_of(c.type)}" for c in table.columns]
    if table.primary_key:
        cols.append(f"PRIMARY KEY ({', '.join(table.primary_key)})")
    return f"CREATE TABLE {table.name} ({', '.join(cols)})"


def index_ddl(table: Table) -> list[str]:
    return [
        f"CREATE INDEX {table.name}_{'_'.join(cols)}_idx ON {table.name} ({', '.join(cols)})"
        for cols in table.indexes
    ]


def server_can_enter(workdir: str, user: str) -> None:
    """As root a managed server runs as its own OS user, which must be able to enter the
    work directory's parents."""
    path = os.path.dirname(os.path.abspath(workdir))
    while path != "/":
        if not os.stat(path).st_mode & 0o001:
            raise TargetUnavailable(
                f"--workdir: the '{user}' user cannot enter {path}; choose a directory it can reach, e.g. under /tmp"
            )
        path = os.path.dirname(path)
