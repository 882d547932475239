"""How steady the host's own speed was during a run.

On a shared virtual machine the host itself speeds up and slows down: on this project's VMs
the same fixed loop of instructions takes 15 ms for minutes at a time, then anything from 16
to 58 ms for a while (a neighbour on the same physical core). Every trial's figure moves with
it, and no number of trials makes a cell's CI narrower than the host is steady. So the runner
times a fixed piece of pure-Python work — the same instructions every time, nothing else of
ours running — before the first step and after each step, and the run keeps the spread: the
reports then say how much of a wide CI is the host's.
"""

from __future__ import annotations

import time

import numpy as np

LOOPS = 15  # timings per probe: ~30 ms of work on a quiet host


def _work() -> int:
    total = 0
    for i in range(20_000):
        total += i * i % 7
    return total


class Steadiness:
    def __init__(self) -> None:
        self.ms: list[float] = []
        self.probes = 0

    def probe(self) -> None:
        """Time the fixed work LOOPS times, now."""
        for _ in range(LOOPS):
            start = time.perf_counter_ns()
            _work()
            self.ms.append((time.perf_counter_ns() - start) / 1e6)
        self.probes += 1

    def summary(self) -> dict | None:
        """The work's quickest, median, 90th percentile and slowest times, or None before any probe."""
        if not self.ms:
            return None
        quickest, median, p90, slowest = np.percentile(self.ms, [0, 50, 90, 100])
        return {"probes": self.probes, "timings": len(self.ms), "quickest_ms": round(float(quickest), 3),
                "median_ms": round(float(median), 3), "p90_ms": round(float(p90), 3),
                "slowest_ms": round(float(slowest), 3)}
