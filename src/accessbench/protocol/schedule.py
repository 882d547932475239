"""When each operation of an open-loop (`rate`) step is meant to start, relative to the
trial's start: the same offsets in every language. Uniform arrivals are evenly spaced;
Poisson arrivals have exponential gaps drawn from splitmix64 (u from the top 53 bits, gap =
−ln(1 − u) / rate), as pgbench -R draws them."""

from __future__ import annotations

import math

from .prng import SplitMix64


class Schedule:
    """Intended start offsets in nanoseconds: ``next()`` gives the next one."""

    def __init__(self, rate_per_s: float, arrival: str = "poisson", seed: int = 0) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate must be positive")
        if arrival not in ("poisson", "uniform"):
            raise ValueError(f"unknown arrival {arrival!r}")
        self.mean_gap_ns = 1e9 / rate_per_s
        self.poisson = arrival == "poisson"
        self.rng = SplitMix64(seed)
        self.at = 0.0
        self.count = 0

    def next(self) -> int:
        """The offset of the next operation (the first is at 0)."""
        offset = self.at
        gap = -math.log(1.0 - self.rng.unit()) * self.mean_gap_ns if self.poisson else self.mean_gap_ns
        self.at += gap
        self.count += 1
        return int(offset)


def uniform_phase_ns(client: int, rate_per_s: float, phase_ns: float = 0.0) -> float:
    """Where client k's uniform stream starts: the worker's arrivals at ``rate_per_s`` are
    dealt to its clients in turn, after the worker's own phase (PROTOCOL.md)."""
    return phase_ns + client * 1e9 / rate_per_s


def uniform_starts_within(rate_per_s: float, clients: int, duration_ns: int, phase_ns: float = 0.0) -> int:
    """How many intended starts a uniform open loop of ``clients`` clients has before
    ``duration_ns``: what n + skipped must be."""
    total = 0
    for k in range(clients):
        schedule, phase = Schedule(rate_per_s / clients, "uniform"), uniform_phase_ns(k, rate_per_s, phase_ns)
        while int(phase + schedule.next()) < duration_ns:
            total += 1
    return total
