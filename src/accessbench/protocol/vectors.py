"""The shared test vectors in ``protocol/vectors/``, made from this reference implementation.

``python -m accessbench.protocol.vectors DIR`` writes them; a test checks the committed files
still equal what the reference makes, and ``accessbench conformance`` checks every worker
against them. Values travel as JSON: u64 as 16 hex digits, timestamps as
``YYYY-MM-DDTHH:MM:SS.ffffff``, typed checksum inputs as ``{"type", "value"}``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import struct
import sys
from pathlib import Path
from typing import Any

from . import generators
from .checksum import Checksum, encode_value, row_hash
from .histogram import LIMIT, Histogram, index
from .schedule import Schedule
from .prng import SplitMix64, fnv1a64

EPOCH = dt.datetime(1970, 1, 1)

SEEDS = [0, 1, 42, 0x9E3779B97F4A7C15, 0xFFFFFFFFFFFFFFFF]

GENERATOR_SPECS: list[dict[str, Any]] = [
    {"kind": "seq"},
    {"kind": "seq", "start": 0, "step": 3},
    {"kind": "seq", "start": 0, "div": 10, "mod": 10},
    {"kind": "seq", "start": -5, "step": 7, "div": 2},
    {"kind": "uniform", "lo": 1, "hi": 6071, "seed": 1},
    {"kind": "uniform", "lo": -1000, "hi": 1000, "seed": 2},
    {"kind": "uniform", "lo": 0, "hi": 9_000_000_000_000_000_000, "seed": 3},
    {"kind": "choice", "values": ["GET", "POST", "HEAD"], "seed": 4},
    {"kind": "choice", "values": [10, 20, 30, 40], "seed": 5},
    {"kind": "text", "pattern": "/site/????????/page-####.html", "seed": 6},
    {"kind": "text", "pattern": "plain", "seed": 7},
    {"kind": "timestamp", "start": "2001-03-01T00:00:00", "step_us": 868000000, "jitter_us": 600000000, "seed": 8},
    {"kind": "timestamp", "start": "1999-12-31T23:59:59.5", "step_us": 250000},
    {"kind": "const", "value": 0},
    {"kind": "uniform", "lo": 1, "hi": 5000, "null": 0.25, "seed": 9},
    {"kind": "text", "pattern": "n-##", "null": 0.5, "seed": 10},
    {"kind": "timestamp", "start": "2024-02-28T12:00:00", "step_us": 3600000000, "jitter_us": 999999, "null": 0.1, "seed": 11},
    # Typed values: every type a parameter can have, as the runner sends them (with "type").
    {"kind": "choice", "values": [True, False], "seed": 12, "type": "bool"},
    {"kind": "const", "value": True, "type": "bool"},
    {"kind": "float", "lo": -1000.0, "hi": 1000.0, "seed": 13, "type": "float"},
    {"kind": "float", "lo": 0.0, "hi": 100.0, "digits": 2, "seed": 14, "type": "float"},
    {"kind": "float", "lo": -1e-5, "hi": 1e300, "digits": 3, "null": 0.2, "seed": 15, "type": "float"},
    {"kind": "choice", "values": [0.1, -2.5, 1e300, 3.0], "seed": 16, "type": "float"},
    {"kind": "decimal", "lo": -10000, "hi": 10000, "scale": 2, "seed": 17, "type": "decimal"},
    {"kind": "decimal", "lo": 0, "hi": 9, "scale": 4, "seed": 18, "type": "decimal"},
    {"kind": "decimal", "lo": -5, "hi": 5, "scale": 0, "null": 0.3, "seed": 19, "type": "decimal"},
    {"kind": "choice", "values": ["12345.670", "-0.001", "0"], "seed": 20, "type": "decimal"},
    {"kind": "date", "start": "2024-02-27", "seed": 21, "type": "date"},
    {"kind": "date", "start": "1969-12-30", "step_days": -7, "jitter_days": 3, "seed": 22, "type": "date"},
    {"kind": "choice", "values": ["2000-02-29", "1969-01-01"], "seed": 23, "type": "date"},
    {"kind": "bytes", "length": 6, "seed": 24, "type": "bytes"},
    {"kind": "bytes", "length": 0, "seed": 25, "type": "bytes"},
    {"kind": "choice", "values": ["00ff10", ""], "null": 0.25, "seed": 26, "type": "bytes"},
    {"kind": "const", "value": "2001-02-03T04:05:06.5", "type": "timestamp"},
    {"kind": "uniform", "lo": 1, "hi": 9, "seed": 27, "type": "int"},
    {"kind": "text", "pattern": "??", "seed": 28, "type": "text"},
]


def timestamp_text(value: dt.datetime) -> str:
    return value.isoformat(timespec="microseconds")  # four-digit years, unlike strftime's %Y


def to_json(value: Any) -> Any:
    """A generated value as the `generate` op answers it (protocol/PROTOCOL.md)."""
    if isinstance(value, dt.datetime):
        return timestamp_text(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return float_bits(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return value  # None, bool, int, text


def float_bits(x: float) -> str:
    """IEEE-754 binary64 bits as 16 hex digits: exact in every language's JSON."""
    return struct.pack(">d", x).hex()


# Typed values (as the `checksum` op takes them) → the native Python value.
def native(typed: dict) -> Any:
    kind, value = typed["type"], typed.get("value")
    if kind == "null":
        return None
    if kind == "float":
        return struct.unpack("<d", int(value, 16).to_bytes(8, "little"))[0]
    if kind == "decimal":
        return decimal.Decimal(value)
    if kind == "bytes":
        return bytes.fromhex(value)
    if kind == "timestamp":
        return EPOCH + dt.timedelta(microseconds=value)
    if kind == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=value)
    if kind == "time":
        return (dt.datetime.min + dt.timedelta(microseconds=value)).time()
    return value  # bool, int, text


def _float(x: float) -> dict:
    return {"type": "float", "value": float_bits(x)}


VALUE_CASES: list[tuple[str, dict]] = [
    ("null", {"type": "null"}),
    ("bool true", {"type": "bool", "value": True}),
    ("bool false", {"type": "bool", "value": False}),
    ("smallint max", {"type": "int", "value": 32767}),
    ("integer min", {"type": "int", "value": -2147483648}),
    ("bigint max", {"type": "int", "value": 9223372036854775807}),
    ("bigint min", {"type": "int", "value": -9223372036854775808}),
    ("zero", {"type": "int", "value": 0}),
    ("numeric with scale", {"type": "decimal", "value": "12345.670"}),
    ("numeric negative", {"type": "decimal", "value": "-0.001"}),
    ("double 0.1", _float(0.1)),
    ("double -0.0", _float(-0.0)),
    ("double 1e300", _float(1e300)),
    ("double -2.5", _float(-2.5)),
    ("char padded", {"type": "text", "value": "GET       "}),
    ("empty text", {"type": "text", "value": ""}),
    ("multibyte UTF-8", {"type": "text", "value": "héllo wörld ✓ 日本語 🚀"}),
    ("bytes", {"type": "bytes", "value": "00ff10fe"}),
    ("empty bytes", {"type": "bytes", "value": ""}),
    ("timestamp with µs", {"type": "timestamp", "value": 983404828628337}),
    ("timestamp before 1970", {"type": "timestamp", "value": -1}),
    ("date", {"type": "date", "value": 11323}),
    ("date before 1970", {"type": "date", "value": -365}),
    ("time", {"type": "time", "value": 45296000001}),
]


def splitmix64_vectors() -> dict:
    out = []
    for seed in SEEDS:
        rng = SplitMix64(seed)
        out.append({"seed": f"{seed:016x}", "outputs": [f"{rng.next():016x}" for _ in range(8)]})
    fnv = [{"text": t, "fnv1a64": f"{fnv1a64(t.encode()):016x}"} for t in ["", "a", "foobar", "héllo ✓"]]
    return {"splitmix64": out, "fnv1a64_utf8": fnv}


def generator_vectors() -> dict:
    cases = []
    for spec in GENERATOR_SPECS:
        count = 40
        values = [to_json(v) for v in generators.values(spec, count)]
        cases.append({"spec": spec, "count": count, "values": values})
    return {"cases": cases}


def checksum_vectors() -> dict:
    values = [
        {"name": name, "value": typed, "encoding": encode_value(native(typed)).hex(),
         "row_hash": f"{row_hash([native(typed)]):016x}"}
        for name, typed in VALUE_CASES
    ]
    rows_cases = []
    typed_rows = [[typed for _, typed in VALUE_CASES[i : i + 4]] for i in range(0, len(VALUE_CASES), 4)]
    for name, rows in [("every type, four per row", typed_rows), ("same rows reversed", typed_rows[::-1]),
                       ("no rows", []), ("one empty row", [[]])]:
        checksum = Checksum()
        checksum.add_rows([[native(v) for v in row] for row in rows])
        rows_cases.append({"name": name, "rows": rows, "checksum": checksum.hexdigest(), "count": checksum.rows})
    return {"values": values, "rows": rows_cases}


HISTOGRAM_VALUES = [0, 1, 2, 127, 128, 255, 256, 257, 300, 511, 512, 513, 1000, 1023, 1024, 4095, 4096, 65535,
                    65536, 123456, 999999, 1000000, 1000001, 12345678, 999999999, 1000000000, 2**32 - 1, 2**32,
                    2**39 + 12345, 2**40 - 1, 2**40, 2**41 + 3]
SCHEDULES = [(1000.0, "uniform", 0), (333.0, "uniform", 0), (1000.0, "poisson", 1), (250.5, "poisson", 42),
             (20000.0, "poisson", 0x9E3779B97F4A7C15)]


def load_step_vectors() -> dict:
    """The histogram's bucket of each value, one histogram of all of them (wire form), and
    the first intended start offsets of a few arrival schedules."""
    histogram = Histogram()
    for v in HISTOGRAM_VALUES:
        histogram.record(v)
    schedules = []
    for rate, arrival, seed in SCHEDULES:
        schedule = Schedule(rate, arrival, seed)
        schedules.append({"rate": rate, "arrival": arrival, "seed": f"{seed:016x}",
                          "offsets": [schedule.next() for _ in range(30)]})
    return {"buckets": [{"value": v, "bucket": index(v) if v < LIMIT else None} for v in HISTOGRAM_VALUES],
            "histogram": {"values": HISTOGRAM_VALUES, "wire": histogram.to_json()},
            "schedules": schedules}


FILES = {
    "prng.json": splitmix64_vectors,
    "load.json": load_step_vectors,
    "generators.json": generator_vectors,
    "checksum.json": checksum_vectors,
}


def render(name: str) -> str:
    return json.dumps(FILES[name](), indent=1, ensure_ascii=False) + "\n"


def default_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "protocol" / "vectors"


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else default_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (folder / name).write_text(render(name))
        print(f"wrote {folder / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
