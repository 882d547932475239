"""Targets: which database instance a run measures, by name (managed) or URL (external)."""

from __future__ import annotations

from ..errors import InputError
from .base import Target, TargetUnavailable
from .url import masked

MANAGED = ("postgresql", "sqlite", "mariadb", "duckdb")
EMBEDDED = ("sqlite", "duckdb")  # in the worker's own process: no server, no server CPU


def make(spec: str) -> Target:
    """``postgresql`` / ``mariadb`` (managed servers), ``sqlite`` / ``duckdb`` (embedded) or ``postgresql://…`` / ``mariadb://…`` (external)."""
    if spec == "sqlite":
        from .sqlite import SQLiteTarget

        return SQLiteTarget()
    if spec == "duckdb":
        from .duckdb import DuckDBTarget

        return DuckDBTarget()
    if spec in ("postgresql", "postgres"):
        from .postgresql import ManagedPostgres

        return ManagedPostgres()
    if spec.startswith(("postgresql://", "postgres://")):
        from .postgresql import ExternalPostgres

        return ExternalPostgres(spec)
    if spec in ("mariadb", "mysql"):
        from .mariadb import ManagedMariaDB

        return ManagedMariaDB()
    if spec.startswith(("mariadb://", "mysql://")):
        from .mariadb import ExternalMariaDB

        return ExternalMariaDB(spec)
    raise InputError(f"--target {masked(spec)}: expected postgresql, mariadb, sqlite, duckdb, or a postgresql:// or "
                     "mariadb:// URL")


__all__ = ["EMBEDDED", "MANAGED", "Target", "TargetUnavailable", "make"]
