"""The verification checksum: FNV-1a 64 over a canonical encoding of each row's values,
summed (mod 2^64) over rows so that row order, which SQL does not promise without ORDER BY,
does not matter. The encoding is specified in protocol/PROTOCOL.md.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import struct
import sys
from fractions import Fraction
from typing import Any, Iterable

from .prng import FNV_OFFSET, FNV_PRIME, MASK64, fnv1a64

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_UTC = dt.timezone.utc


def encode_row(row: Iterable[Any]) -> bytes:
    """A row's values, each encoded, one after the other: what its hash is taken of."""
    return b"".join([encode_value(v) for v in row])


def encode_value(value: Any) -> bytes:
    if value is None:
        return b"N"
    if isinstance(value, bool):
        return b"B\x01" if value else b"B\x00"
    if isinstance(value, int):
        return b"I" + struct.pack("<q", value)
    if isinstance(value, float):
        return b"F" + struct.pack("<d", value)
    if isinstance(value, decimal.Decimal):
        text = format(value, "f").encode()
        return b"D" + struct.pack("<I", len(text)) + text
    if isinstance(value, str):
        data = value.encode()
        return b"S" + struct.pack("<I", len(data)) + data
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return b"X" + struct.pack("<I", len(data)) + data
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_UTC).replace(tzinfo=None)
        delta = value - _EPOCH
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        return b"T" + struct.pack("<q", micros)
    if isinstance(value, dt.date):
        return b"d" + struct.pack("<i", (value - _EPOCH_DATE).days)
    if isinstance(value, dt.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return b"t" + struct.pack("<q", micros)
    raise TypeError(f"no canonical encoding for {type(value).__name__}")


def float4_value(value: float) -> float:
    """A float32 (given widened to a double) as PostgreSQL prints it and a text-format reader
    reads it back: the shortest decimal that reads back as the same float32 — of those the
    closest — as a double. The canonical value of a 4-byte real (PROTOCOL.md, Checksum), for
    readers that hold the float32 itself (binary COPY, Arrow's float32 columns)."""
    if value == 0 or not math.isfinite(value):
        return value
    bits = struct.unpack("<I", struct.pack("<f", abs(value)))[0]
    x = Fraction(abs(value))
    below = Fraction(struct.unpack("<f", struct.pack("<I", bits - 1))[0])
    above = struct.unpack("<f", struct.pack("<I", bits + 1))[0]
    above = Fraction(above) if math.isfinite(above) else x + (x - below)  # past the largest: its gap again
    low, high = (x + below) / 2, (x + above) / 2  # what reads back as x
    even = bits % 2 == 0  # a decimal exactly half-way rounds to the even neighbour
    for digits in range(1, 10):
        exponent = math.floor(math.log10(x)) - digits + 1
        scale = Fraction(10) ** exponent
        near = [Fraction(math.floor(x / scale)) * scale, Fraction(math.ceil(x / scale)) * scale]
        fits = [d for d in near if low < d < high or (even and d in (low, high))]
        if fits:
            return math.copysign(float(min(fits, key=lambda d: abs(d - x))), value)
    return value


def typed(value: Any) -> dict:
    """A value read, as the protocol writes it out (the `checksum` op's input form, and a
    verification pass's `dump`): what the canonical encoding encodes, readable."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "bool", "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value}
    if isinstance(value, float):
        return {"type": "float", "value": struct.pack(">d", value).hex()}
    if isinstance(value, decimal.Decimal):
        return {"type": "decimal", "value": format(value, "f")}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"type": "bytes", "value": bytes(value).hex()}
    encoded = encode_value(value)  # timestamp, date, time: their integer, as encoded
    kind = {b"T": "timestamp", b"d": "date", b"t": "time"}[encoded[:1]]
    return {"type": kind, "value": struct.unpack("<i" if kind == "date" else "<q", encoded[1:])[0]}


def row_hash(row: Iterable[Any]) -> int:
    return fnv1a64(encode_row(row), FNV_OFFSET)


# FNV-1a goes byte by byte, and a byte at a time in Python is most of a verification's CPU
# (the runner's check of a table after a write, the conformance kit's references, a Python
# worker's verification pass). Rows are independent, so many are hashed at once: numpy takes
# the n-th byte of every row still that long in one step, its uint64 arithmetic wrapping
# modulo 2^64 as FNV's does. Only in a process that has numpy loaded already (the runner, a
# columnar reader's worker): a Python worker that does not use it is not made to load it, which
# would add its import to every start and its pages to the memory the worker is measured at.
# Fewer rows than BATCHED, and rows longer than WIDEST (a large text or blob), go byte by byte
# too. Same hashes, same sums: only faster.
BATCHED = 16
WIDEST = 1024


def _sum_of_row_hashes(encoded: list[bytes]) -> int:
    """The sum (mod 2^64) of FNV-1a 64 of each encoded row."""
    np = sys.modules.get("numpy")
    short = [e for e in encoded if len(e) <= WIDEST] if np is not None else []
    if len(short) < BATCHED:
        short = []
    total = sum(fnv1a64(e, FNV_OFFSET) for e in encoded if not short or len(e) > WIDEST)
    if not short:
        return total & MASK64
    short.sort(key=len, reverse=True)  # the rows still as long as byte j are then a prefix
    lengths = np.fromiter(map(len, short), dtype=np.int64, count=len(short))
    data = np.zeros((len(short), int(lengths[0])), dtype=np.uint8)
    flat = np.frombuffer(b"".join(short), dtype=np.uint8)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)  # where each byte's row begins in flat
    data[np.repeat(np.arange(len(short)), lengths), np.arange(flat.size) - starts] = flat
    hashes, prime = np.full(len(short), FNV_OFFSET, dtype=np.uint64), np.uint64(FNV_PRIME)
    # for each byte j, how many rows are longer than j (lengths descend: -lengths ascends)
    longer = np.searchsorted(-lengths, -np.arange(int(lengths[0])), side="left")
    for j, n in enumerate(longer.tolist()):
        hashes[:n] = (hashes[:n] ^ data[:n, j]) * prime
    return (total + int(hashes.sum(dtype=np.uint64))) & MASK64


class Checksum:
    """Accumulates rows; ``hexdigest`` is what workers report and the runner compares."""

    __slots__ = ("total", "rows")

    def __init__(self) -> None:
        self.total = 0
        self.rows = 0

    def add_rows(self, rows: Iterable[Iterable[Any]]) -> None:
        encoded = [encode_row(row) for row in rows]
        self.total = (self.total + _sum_of_row_hashes(encoded)) & MASK64
        self.rows += len(encoded)

    def hexdigest(self) -> str:
        return f"{self.total:016x}"
