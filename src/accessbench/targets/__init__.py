"""Targets: which database instance a run measures, by name (managed) or URL (external)."""

from __future__ import annotations

from ..errors import InputError
from .base import Target, TargetUnavailable

MANAGED = ("postgresql", "sqlite")


def make(spec: str) -> Target:
    """``postgresql`` / ``sqlite`` (managed) or ``postgresql://…`` (external)."""
    if spec == "sqlite":
        from .sqlite import SQLiteTarget

        return SQLiteTarget()
    if spec in ("postgresql", "postgres"):
        from .postgresql import ManagedPostgres

        return ManagedPostgres()
    if spec.startswith(("postgresql://", "postgres://")):
        from .postgresql import ExternalPostgres

        return ExternalPostgres(spec)
    raise InputError(f"--target {spec}: expected postgresql, sqlite or a postgresql:// URL")


__all__ = ["Target", "TargetUnavailable", "make", "MANAGED"]
