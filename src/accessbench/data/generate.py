"""Rows of a table from its column generators, deterministically from the suite seed."""

from __future__ import annotations

from typing import Iterator

from ..protocol.prng import derive_seed
from ..suite.model import Table
from . import kept


def column_specs(table: Table, seed: int) -> list[dict]:
    """Each column's generator as a protocol spec with its own stream's seed."""
    return [
        c.gen.wire(derive_seed(seed, "table", table.name, c.name)) for c in table.columns
    ]


def table_rows(table: Table, seed: int) -> Iterator[tuple]:
    streams = [kept.column(spec, table.rows) for spec in column_specs(table, seed)]
    return zip(*streams)
