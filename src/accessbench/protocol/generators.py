"""Value generators: the same specs make table data (in the orchestrator) and step
parameters (in every worker). A spec is a dict as it travels in the protocol:
``{"kind": "uniform", "lo": 1, "hi": 6071, "seed": 123, "null": 0.0, "type": "int"}``.

Each spec owns one splitmix64 stream seeded with its ``seed``; value ``i`` is the ``i``-th
value drawn in order. The draw rules are specified in protocol/PROTOCOL.md. Every value has
one of the TYPES, which the spec's ``type`` names (the runner always sends it; a spec
without one takes its kind's own type, and a choice or const the type of its values).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any, Callable, Iterator

from .prng import SplitMix64

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
KINDS = ("seq", "uniform", "choice", "text", "timestamp", "const", "float", "decimal", "date", "bytes")
# Kinds for a table's columns only, which the runner fills: no step parameter (and so no worker)
# ever draws one. ``list``: value i is the i-th of its values (a published data set's own rows).
TABLE_KINDS = ("list",)
TYPES = ("int", "bool", "float", "decimal", "text", "date", "timestamp", "bytes")
# The type a kind's values always have (choice and const: their values' type, or a declared one).
KIND_TYPES = {"seq": "int", "uniform": "int", "text": "text", "timestamp": "timestamp", "float": "float",
              "decimal": "decimal", "date": "date", "bytes": "bytes"}


def value_type(spec: dict[str, Any]) -> str:
    """The type of a spec's values: declared, its kind's, or (choice, const) its values'."""
    if spec.get("type"):
        return spec["type"]
    if spec["kind"] in KIND_TYPES:
        return KIND_TYPES[spec["kind"]]
    first = spec["values"][0] if spec["kind"] in ("choice", "list") else spec["value"]
    return "bool" if isinstance(first, bool) else "int" if isinstance(first, int) else (
        "float" if isinstance(first, float) else "text")


def typed(value: Any, kind: str) -> Any:
    """A choice's or const's value as its type's native value: decimals, dates, timestamps and
    bytes are given as text (decimal digits, YYYY-MM-DD, ISO 8601, hex); floats may be given
    as integers."""
    if kind == "decimal":
        return decimal.Decimal(str(value))
    if kind == "date":
        return dt.date.fromisoformat(value)
    if kind == "timestamp":
        return parse_timestamp(value)
    if kind == "bytes":
        return bytes.fromhex(value)
    if kind == "float":
        return float(value)
    return value


def power_of_ten(digits: int) -> float:
    """10^digits by repeated exact multiplication (exact up to 10^22), as every worker does it."""
    p = 1.0
    for _ in range(digits):
        p *= 10.0
    return p


def decimal_text(units: int, scale: int) -> str:
    """An integer count of 10^-scale as plain decimal text: (-1234, 2) → "-12.34"."""
    sign, digits = ("-" if units < 0 else ""), str(abs(units)).rjust(scale + 1, "0")
    return sign + (f"{digits[:-scale]}.{digits[-scale:]}" if scale else digits)


def parse_timestamp(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _value_maker(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    """The generator ``spec`` names, drawing from ``rng``: row number → value."""
    maker = _MAKERS.get(spec["kind"])
    if maker is None:
        raise ValueError(f"unknown generator kind {spec['kind']!r}")
    return maker(spec, rng)


def _seq(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    start, step = spec.get("start", 1), spec.get("step", 1)
    div, mod = spec.get("div", 1), spec.get("mod")
    if mod:
        return lambda i: ((start + i * step) // div) % mod
    return lambda i: (start + i * step) // div


def _uniform(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    lo, span = spec["lo"], spec["hi"] - spec["lo"] + 1
    return lambda i: lo + rng.next() % span


def _choice(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    values = [typed(v, value_type(spec)) for v in spec["values"]]
    return lambda i: values[rng.next() % len(values)]


def _list(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    values = [typed(v, value_type(spec)) for v in spec["values"]]
    return lambda i: values[i % len(values)]


def _text(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], str]:
    pattern = spec["pattern"]

    def text(i: int) -> str:
        out = []
        for ch in pattern:
            if ch == "#":
                out.append(chr(48 + rng.next() % 10))
            elif ch == "?":
                out.append(chr(97 + rng.next() % 26))
            else:
                out.append(ch)
        return "".join(out)

    return text


def _timestamp(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], dt.datetime]:
    start = parse_timestamp(spec["start"])
    step_us, jitter_us = spec.get("step_us", 1_000_000), spec.get("jitter_us", 0)

    def timestamp(i: int) -> dt.datetime:
        offset = i * step_us + (rng.next() % (jitter_us + 1) if jitter_us else 0)
        return start + dt.timedelta(microseconds=offset)

    return timestamp


def _const(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    value = typed(spec["value"], value_type(spec))
    return lambda i: value


def _float(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], float]:
    lo, hi, digits = float(spec["lo"]), float(spec["hi"]), spec.get("digits")
    scale = power_of_ten(digits) if digits is not None else None

    def floating(i: int) -> float:
        v = lo + rng.unit() * (hi - lo)
        return v if scale is None else float(math.floor(v * scale + 0.5)) / scale

    return floating


def _decimal(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], decimal.Decimal]:
    # lo and hi count units of 10^-scale: the runner turns a suite's "-100.00" into -10000.
    lo, span, scale = spec["lo"], spec["hi"] - spec["lo"] + 1, spec.get("scale", 0)
    return lambda i: decimal.Decimal(decimal_text(lo + rng.next() % span, scale))


def _date(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], dt.date]:
    start = dt.date.fromisoformat(spec["start"])
    step, jitter = spec.get("step_days", 1), spec.get("jitter_days", 0)
    return lambda i: start + dt.timedelta(days=i * step + (rng.next() % (jitter + 1) if jitter else 0))


def _bytes(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], bytes]:
    length = spec["length"]
    return lambda i: bytes(rng.next() % 256 for _ in range(length))


# Every generator kind (PROTOCOL.md's list), by name: each makes a row number → value function.
_MAKERS: dict[str, Callable[[dict[str, Any], SplitMix64], Callable[[int], Any]]] = {
    "seq": _seq, "uniform": _uniform, "choice": _choice, "text": _text, "timestamp": _timestamp,
    "const": _const, "float": _float, "decimal": _decimal, "date": _date, "bytes": _bytes,
    "list": _list,
}


def values(spec: dict[str, Any], count: int, start: int = 0) -> Iterator[Any]:
    """Yield ``count`` values of one spec, beginning at index 0 of its stream.

    ``start`` only offsets ``seq``/``timestamp`` positions (used for nothing that draws), so
    that sequences can continue; draws always begin at the start of the stream.
    """
    rng = SplitMix64(spec.get("seed", 0))
    make = _value_maker(spec, rng)
    null = spec.get("null", 0.0)
    for i in range(start, start + count):
        # The null draw comes first; a NULL value makes no value draws.
        if null and rng.unit() < null:
            yield None
        else:
            yield make(i)


def rows(specs: list[dict[str, Any]], count: int) -> list[tuple]:
    """``count`` tuples, one value from each spec per tuple."""
    return list(zip(*(values(spec, count) for spec in specs))) if specs else [()] * count
