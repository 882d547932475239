"""The latency histogram every worker keeps when a step runs by duration or with several
clients: bounded memory, every operation counted, within 1% of the true value.

Log-linear buckets over integer nanoseconds, computed with integer operations only so every
language files a value in the same bucket: values under 256 have a bucket each (exact); above,
a value v with bit length L falls in bucket ``(L − 8) · 128 + (v >> (L − 8))``, i.e. its top
eight bits — at most 1/128 (0.8%) wide relative to its lower bound. Values of 2⁴⁰ ns (18
minutes) or more are counted in an overflow bucket; the exact maximum is kept beside.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MANTISSA_BITS = 8
SUB = 1 << (MANTISSA_BITS - 1)        # 128 buckets per power of two above the exact range
EXACT = 1 << MANTISSA_BITS            # 0..255 are their own bucket
LIMIT = 1 << 40                       # from here on: the overflow bucket


def index(value: int) -> int:
    """The bucket of a latency in nanoseconds (value < LIMIT)."""
    if value < EXACT:
        return value
    shift = value.bit_length() - MANTISSA_BITS
    return shift * SUB + (value >> shift)


def lower(bucket: int) -> int:
    """The smallest value that falls in a bucket."""
    if bucket < EXACT:
        return bucket
    shift, mantissa = divmod(bucket, SUB)
    mantissa += SUB
    shift -= 1
    return mantissa << shift


def upper(bucket: int) -> int:
    """One past the largest value in a bucket."""
    return lower(bucket + 1)


@dataclass
class Histogram:
    counts: dict[int, int] = field(default_factory=dict)
    overflow: int = 0
    min: int | None = None
    max: int = 0
    total: int = 0          # sum of every value, ns (for the mean)

    @property
    def n(self) -> int:
        return sum(self.counts.values()) + self.overflow

    def record(self, value: int, count: int = 1) -> None:
        """``count`` operations of latency ``value`` ns (a load generator's own histogram)."""
        if value >= LIMIT:
            self.overflow += count
        else:
            b = index(value)
            self.counts[b] = self.counts.get(b, 0) + count
        self.min = value if self.min is None else min(self.min, value)
        self.max = max(self.max, value)
        self.total += value * count

    def merge(self, other: "Histogram") -> None:
        for b, c in other.counts.items():
            self.counts[b] = self.counts.get(b, 0) + c
        self.overflow += other.overflow
        if other.min is not None:
            self.min = other.min if self.min is None else min(self.min, other.min)
        self.max = max(self.max, other.max)
        self.total += other.total

    def percentile(self, p: float) -> float:
        """The value at percentile p (0–100): the midpoint of the bucket holding that rank
        (exact below 256 ns), clamped to the recorded min and max."""
        n = self.n
        if n == 0:
            return 0.0
        if p >= 100:
            return float(self.max)
        rank = max(1, -(-int(p * n) // 100)) if p > 0 else 1  # ceil(p·n/100), at least 1
        seen = 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                mid = b if b < EXACT else (lower(b) + upper(b) - 1) / 2
                return float(min(max(mid, self.min or 0), self.max))
        return float(self.max)  # the rank is in the overflow bucket

    def to_json(self) -> dict:
        """The wire form: sparse [bucket, count] pairs in bucket order."""
        return {"buckets": [[b, self.counts[b]] for b in sorted(self.counts)], "overflow": self.overflow,
                "min": self.min or 0, "max": self.max, "sum": self.total}

    @classmethod
    def from_json(cls, data: dict) -> "Histogram":
        return cls({int(b): int(c) for b, c in data.get("buckets", [])}, int(data.get("overflow", 0)),
                   int(data["min"]) if data.get("buckets") or data.get("overflow") else None,
                   int(data.get("max", 0)), int(data.get("sum", 0)))
