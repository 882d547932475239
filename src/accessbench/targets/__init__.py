"""Targets: which database instance a run measures, by name (managed) or URL (external).

Each DBMS is one module here — its Target classes and its description (``registry.DBMS``),
registered as the module is imported — and the workers' drivers for it. Importing this package
imports every DBMS module, so the registry is full wherever it is read.
"""

from __future__ import annotations

from ..errors import InputError
from . import postgresql, sqlite, mariadb, duckdb  # noqa: F401 — each registers its DBMS, in this order
from .base import Target, TargetUnavailable
from .registry import REGISTRY, Names, by_default
from .url import masked

EMBEDDED = Names(lambda dbms: dbms.embedded)  # in the worker's own process: no server, no server CPU


def make(spec: str) -> Target:
    """The target ``spec`` names: a registered DBMS by its name or an alias (its managed target:
    a throwaway server, or a file in the run's work directory), or an external server's URL."""
    for dbms in REGISTRY.values():
        if spec == dbms.name or spec in dbms.aliases:
            return dbms.managed()
    for dbms in REGISTRY.values():
        if dbms.external and spec.startswith(tuple(f"{scheme}://" for scheme in dbms.schemes)):
            return dbms.external(spec)
    urls = [f"{REGISTRY[name].schemes[0]}://" for name in by_default() if REGISTRY[name].external]
    raise InputError(f"--target {masked(spec)}: expected {', '.join(by_default())}, or a {' or '.join(urls)} URL")


__all__ = ["EMBEDDED", "Target", "TargetUnavailable", "make"]
