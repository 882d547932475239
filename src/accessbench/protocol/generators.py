"""Value generators: the same specs make table data (in the orchestrator) and step
parameters (in every worker). A spec is a dict as it travels in the protocol:
``{"kind": "uniform", "lo": 1, "hi": 6071, "seed": 123, "null": 0.0}``.

Each spec owns one splitmix64 stream seeded with its ``seed``; value ``i`` is the ``i``-th
value drawn in order. The draw rules are specified in protocol/PROTOCOL.md.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Iterator

from .prng import SplitMix64

EPOCH = dt.datetime(1970, 1, 1)
KINDS = ("seq", "uniform", "choice", "text", "timestamp", "const")


def parse_timestamp(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _value_maker(spec: dict[str, Any], rng: SplitMix64) -> Callable[[int], Any]:
    kind = spec["kind"]
    if kind == "seq":
        start, step = spec.get("start", 1), spec.get("step", 1)
        div, mod = spec.get("div", 1), spec.get("mod")
        if mod:
            return lambda i: ((start + i * step) // div) % mod
        return lambda i: (start + i * step) // div
    if kind == "uniform":
        lo, span = spec["lo"], spec["hi"] - spec["lo"] + 1
        return lambda i: lo + rng.next() % span
    if kind == "choice":
        values = list(spec["values"])
        return lambda i: values[rng.next() % len(values)]
    if kind == "text":
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
    if kind == "timestamp":
        start = parse_timestamp(spec["start"])
        step_us, jitter_us = spec.get("step_us", 1_000_000), spec.get("jitter_us", 0)

        def timestamp(i: int) -> dt.datetime:
            offset = i * step_us + (rng.next() % (jitter_us + 1) if jitter_us else 0)
            return start + dt.timedelta(microseconds=offset)

        return timestamp
    if kind == "const":
        value = spec["value"]
        return lambda i: value
    raise ValueError(f"unknown generator kind {kind!r}")


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
