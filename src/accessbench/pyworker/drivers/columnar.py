"""What the columnar methods share: a result in Arrow's (or a data frame's) form, turned into
rows for the verification pass only — the timed op stops once the values are in the client's
columnar form. Turning a column into Python values takes its canonical form where the column's
type says what a value is: a float32 column's values as PostgreSQL prints a real (the protocol's
canonical real), and ADBC's PostgreSQL numeric — an opaque Arrow type holding each value's exact
text — as that decimal."""

from __future__ import annotations

import decimal
from typing import Any

from ...protocol.checksum import float4_value
from ..base import Driver, Unsupported


def _numeric_text(arrow_type: Any) -> bool:
    """ADBC's PostgreSQL numeric: arrow.opaque over strings, type name "numeric"."""
    return getattr(arrow_type, "type_name", None) == "numeric" and getattr(arrow_type, "vendor_name", "") == "PostgreSQL"


def _column(values: list, arrow_type: Any) -> list:
    import pyarrow as pa

    if pa.types.is_float32(arrow_type):
        return [None if v is None else float4_value(v) for v in values]
    if _numeric_text(arrow_type):
        return [None if v is None else decimal.Decimal(v) for v in values]
    return values


def arrow_rows(table: Any) -> list[tuple]:
    """The rows of a pyarrow Table (or RecordBatch) as tuples of Python values."""
    return list(zip(*(_column(column.to_pylist(), field.type) for column, field in zip(table.columns, table.schema))))


def frame_rows(frame: Any) -> list[tuple]:
    """The rows of a polars DataFrame as tuples of Python values."""
    return arrow_rows(frame.to_arrow())


def arrow_size(table: Any) -> int:
    """An Arrow table's bytes: its buffers."""
    return int(table.get_total_buffer_size())


class ReadsOnly(Driver):
    """A reader that keeps no connection between operations (ConnectorX, polars, the wire's
    floor): each scan connects, reads the whole result and disconnects inside the operation,
    so it has scans only and nothing to run a statement on outside one."""

    modes = ()
    kinds = ("scan",)

    def close(self) -> None:
        pass

    def execute(self, sql: str) -> None:
        raise Unsupported(f"{self.name} runs scans only: it keeps no connection to run a statement on")

    def recover(self) -> None:
        pass
