"""Every DBMS accessbench measures, described once — in its own module, beside its Target
classes (``targets/postgresql.py`` …) — and registered here by name.

A description is plain data and functions: the names ``--target`` takes, how its targets are
made, which server versions are installed for its managed target, whether it is embedded (in the worker's own process: no server), what it refuses in a
suite (identifier, type and width limits, and any rule of its own on a table), whether a
table's storage engine means anything to it, and what conformance expects of it. The suite's
models, loader and limits, selection, conformance and the statistics (which DBMSs have a
server) read it from here; none of them names a DBMS.

This module imports nothing of the package, and the DBMS modules (which ``targets/__init__.py``
imports, filling the registry) import the suite's models only to name their types: the suite
reads the registry without a cycle. Registration order is the order a suite's error lists the
DBMSs in; a run's default targets are the servers, then the embedded engines, each in that
order.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

if TYPE_CHECKING:
    from ..suite.model import Table
    from .base import Target


@dataclass(frozen=True)
class DBMSLimits:
    """What a DBMS itself refuses (None: no limit). Names are ASCII (suite.model.NAME), so
    bytes and characters are the same."""

    name: str                   # as a message says whose limit it is: "PostgreSQL's"
    identifier: int | None      # table, column and index names
    char: int | None            # char(n): the largest n
    varchar: int | None         # varchar(n)
    precision: int | None       # numeric(p, s): the largest p
    scale: int | None           # and s
    columns: int | None         # of one table
    markers: int | None         # parameters of one prepared statement
    earliest: dt.date | None = None  # the first day a date or timestamp column holds


@dataclass(frozen=True)
class Conformance:
    """What `accessbench conformance` expects of a DBMS: a table of every SQL type the suites
    use (``conf_types``) as the DBMS declares it, the rows put in it (the reference every
    worker must read back alike), and the SQLSTATEs a query of a missing table and a write in a
    read-only session answer (None: not checked)."""

    types_ddl: str
    types_rows: tuple[tuple, ...]
    missing_table_sqlstate: str | None = None
    read_only_sqlstate: str | None = None  # what a write in a read-only session answers (None: no SQLSTATE)


# A rule of a DBMS's own on a table, beyond its limits: given the table and the suite's
# [server.DBMS] settings, (where in the table, what) for the first thing it refuses, or None.
TableRule = Callable[["Table", dict[str, Any]], "tuple[tuple, str] | None"]


@dataclass(frozen=True)
class Login:
    """How the clients of a managed server log in, when that is the question
    (``--target NAME?auth=METHOD``): the method, by the DBMS's canonical name, and SCRAM's
    iteration count where the server lets it be set. Workers then log in as a user made for the
    run with that method; without it, a managed server logs them in as it always has."""

    method: str
    iterations: int | None = None

    @property
    def suffix(self) -> str:
        """As a target's name carries it: ``?auth=scram&iterations=4096``."""
        return f"?auth={self.method}" + (f"&iterations={self.iterations}" if self.iterations else "")


@dataclass(frozen=True)
class DBMS:
    """Everything accessbench knows about a DBMS but its targets' own code."""

    name: str                                  # as suites, --target, the catalog and the store name it
    managed: Callable[..., "Target"]           # the target --target NAME makes (a throwaway server, a file);
                                               # given a version, NAME@VERSION's (one of ``versions``)
    limits: DBMSLimits
    conformance: Conformance
    aliases: tuple[str, ...] = ()              # other names --target takes for it
    schemes: tuple[str, ...] = ()              # URL schemes of an external server, the one shown first
    external: Callable[[str], "Target"] | None = None  # the target for such a URL
    embedded: bool = False                     # in the worker's own process: no server, no server CPU,
                                               # no [server.NAME] settings, no clients on other hosts
    storage_engines: bool = False              # a table's ``engine`` means something to it
    table_rule: TableRule | None = None
    title: str = ""                            # as a sentence names it: "PostgreSQL" (default: name)
    # The server versions installed here for its managed target, read when asked (a spec with
    # '@': not for --help): each as --target NAME@VERSION writes it → what the managed target
    # needs to run it (PostgreSQL's bin directory), in the order a message lists them. None
    # for an embedded DBMS: its version is each worker's library's, not a server's.
    versions: Callable[[], dict[str, str]] | None = None
    # The login methods its managed server can be given (?auth=…): each spelling a user may
    # write → the method's canonical name; and whether SCRAM's iterations can be set.
    logins: dict[str, str] = field(default_factory=dict)
    login_iterations: bool = False


REGISTRY: dict[str, DBMS] = {}


def register(dbms: DBMS) -> DBMS:
    """Add ``dbms`` (each DBMS's module does, as it is imported); a name is registered once."""
    if dbms.name in REGISTRY and REGISTRY[dbms.name] is not dbms:
        raise ValueError(f"a DBMS named {dbms.name!r} is registered already")
    REGISTRY[dbms.name] = dbms
    return dbms


def unregister(name: str) -> None:
    """Take a DBMS out again (a test's stand-in, at its end)."""
    REGISTRY.pop(name, None)


def described(name: str) -> DBMS:
    """The description of the DBMS ``name`` (KeyError when none is registered)."""
    return REGISTRY[name]


def names() -> list[str]:
    """Every registered DBMS, in registration order."""
    return list(REGISTRY)


def servers() -> list[str]:
    """The DBMSs with a server (not embedded): those a suite's [server.NAME] can set, and whose
    limits bound every suite (suite.limits.LOOSEST)."""
    return [d.name for d in REGISTRY.values() if not d.embedded]


def by_default() -> list[str]:
    """The DBMSs a run measures when no --target is given, in this order: the servers, then
    the embedded engines."""
    return servers() + [d.name for d in REGISTRY.values() if d.embedded]


class Names:
    """A live, read-only set of registered DBMS names (``in``, iteration), such as the
    embedded ones: it follows registrations made after it was created."""

    def __init__(self, which: Callable[[DBMS], bool]) -> None:
        self.which = which

    def __contains__(self, name: object) -> bool:
        dbms = REGISTRY.get(name) if isinstance(name, str) else None
        return dbms is not None and self.which(dbms)

    def __iter__(self) -> Iterator[str]:
        return iter([d.name for d in REGISTRY.values() if self.which(d)])
