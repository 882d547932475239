"""Exports of a stored run for other tools: JSON (the whole run, schema in docs/export.md)
and CSV (one row per cell, or per trial). Same numbers as the reports."""

from .model import SCHEMA_VERSION, build
from .writers import write

__all__ = ["SCHEMA_VERSION", "build", "write"]
