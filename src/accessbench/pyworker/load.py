"""The loops of a loaded step: by duration as well as by count, closed loop or open loop at a
rate, latencies into a histogram (bounded memory, every operation counted), all clients of a
trial starting together at ``start_at`` (wall clock, so separate processes agree).

Closed loop: operation i's latency runs from the end of operation i−1 to its own end, as in
the plain loop. Open loop: from operation i's *intended* start to its end, so a stall that
delays later operations shows in their latency (no coordinated omission); an operation that
starts more than ``late_ns`` after its intended time counts as late, and one that would start
more than ``skip_ns`` late is skipped (pgbench -R --latency-limit).
"""

from __future__ import annotations

import asyncio
import time
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable

from ..protocol.histogram import Histogram
from ..protocol.schedule import Schedule, uniform_phase_ns

# Sleep until this close to an operation's intended start, then spin: a sleep overshoots by
# ~60 µs here, which would otherwise count as the client's own lateness. (asyncio's sleep is
# not used: epoll rounds its timeout up to whole milliseconds.)
SPIN_NS = 100_000
ASYNC_MARGIN_NS = 2_000_000


@dataclass
class Load:
    """What the step message asks for, beyond the plain loop."""

    duration_ns: int | None = None
    rate: float | None = None          # this client's operations per second
    arrival: str = "poisson"
    seed: int = 0
    late_ns: int = 1_000_000
    skip_ns: int | None = None
    start_at_unix_ns: int | None = None
    phase_ns: int = 0                  # uniform: where this worker's arrivals start
    clients: int = 1
    latency_file: str | None = None    # also every latency, raw, there (to check the histogram)

    @classmethod
    def from_step(cls, msg: dict) -> "Load":
        rate = msg.get("rate")
        return cls(
            duration_ns=int(msg["duration_ms"] * 1_000_000) if msg.get("duration_ms") else None,
            rate=float(rate) if rate else None, arrival=msg.get("arrival", "poisson"),
            seed=int(msg.get("schedule_seed", 0)), late_ns=int(msg.get("late_ns", 1_000_000)),
            skip_ns=int(msg["skip_ns"]) if msg.get("skip_ns") else None,
            start_at_unix_ns=int(msg["start_at_unix_ns"]) if msg.get("start_at_unix_ns") else None,
            phase_ns=int(msg.get("phase_ns") or 0), clients=int(msg.get("clients", 1)),
            latency_file=msg.get("latency_file") or None,
        )

    def schedule(self, client: int) -> tuple[Schedule, float] | None:
        """Client k's arrival stream (at rate / clients, seeded seed + k) and its phase."""
        if not self.rate:
            return None
        schedule = Schedule(self.rate / self.clients, self.arrival, (self.seed + client) % 2**64)
        phase = uniform_phase_ns(client, self.rate, self.phase_ns) if self.arrival == "uniform" else 0.0
        return schedule, phase


@dataclass
class LoadResult:
    n: int = 0
    rows: int = 0
    elapsed_ns: int = 0
    first_op_ns: int = 0
    late: int = 0
    skipped: int = 0
    histogram: Histogram = field(default_factory=Histogram)
    raw: array | None = None           # every latency, when the step asked for them


def wait_until(unix_ns: int | None) -> None:
    """The barrier: return when the wall clock reaches ``unix_ns``."""
    if unix_ns is None:
        return
    while True:
        left = unix_ns - time.time_ns()
        if left <= 0:
            return
        if left > SPIN_NS:
            time.sleep((left - SPIN_NS) / 1e9)


def _pause_until(clock: Callable[[], int], deadline: int) -> None:
    left = deadline - clock()
    if left > SPIN_NS:
        time.sleep((left - SPIN_NS) / 1e9)
    while clock() < deadline:
        pass


async def _apause_until(clock: Callable[[], int], deadline: int) -> None:
    """The pause of one of several clients on one event loop: asyncio's sleep (its timer
    fires up to a millisecond late, hence the margin), then yielding to the other clients
    until the deadline instead of spinning through their turn."""
    left = deadline - clock()
    if left > ASYNC_MARGIN_NS:
        await asyncio.sleep((left - ASYNC_MARGIN_NS) / 1e9)
    while clock() < deadline:
        await asyncio.sleep(0)


async def run(op: Callable[[Any], Any], args: list, reads: bool, load: Load, awaits: bool,
              client: int = 0, shared_loop: bool = False) -> LoadResult:
    """Run ``op`` over ``args`` (cycling through them when the step runs by duration) as
    client ``client`` of the worker. ``awaits``: the op is a coroutine function (an async
    driver); one loop serves both, since a coroutine that never awaits costs nothing per
    operation. ``shared_loop``: other clients run on the same event loop, so waits yield."""
    clock, out = time.perf_counter_ns, LoadResult()
    record, count = _recorder(out, load), len(args)
    stream = load.schedule(client)
    if shared_loop:
        await _apause_until(time.time_ns, load.start_at_unix_ns or 0)
    else:
        wait_until(load.start_at_unix_ns)
    start = prev = clock()
    stop = start + load.duration_ns if load.duration_ns else None
    i = 0
    while (i < count) if stop is None else (prev < stop):
        arg = args[i % count]
        if stream is not None:
            intended = start + int(stream[1] + stream[0].next())
            if stop is not None and intended >= stop:  # the arrivals are over; the trial is not
                break
            now = clock()
            if now < intended:
                if shared_loop:
                    await _apause_until(clock, intended)
                else:
                    _pause_until(clock, intended)
            elif load.skip_ns is not None and now - intended > load.skip_ns:
                out.skipped += 1
                i += 1
                continue
            elif now - intended > load.late_ns:
                out.late += 1
            result = await op(arg) if awaits else op(arg)
            now = clock()
            latency = now - intended
        else:
            result = await op(arg) if awaits else op(arg)
            now = clock()
            latency = now - prev
        out.rows += len(result) if reads else result
        record(latency)
        if i == out.skipped:
            out.first_op_ns = latency
        prev = now
        i += 1
    if stream is not None and stop is not None:
        prev, i = await _end_open_loop(out, stream, start, stop, prev, i, shared_loop)
    out.n = i - out.skipped
    out.elapsed_ns = prev - start
    return out


def _recorder(out: LoadResult, load: Load) -> Callable[[int], None]:
    """What records each operation's latency: into the histogram, and with --raw-latencies
    into the raw values beside it too (one append more per operation)."""
    if not load.latency_file:
        return out.histogram.record
    out.raw, into = array("Q"), out.histogram.record

    def record(value: int) -> None:
        into(value)
        out.raw.append(value)
    return record


async def _end_open_loop(out: LoadResult, stream, start: int, stop: int, prev: int, i: int,
                         shared_loop: bool) -> tuple[int, int]:
    """An open loop's end, after its last operation: (the trial's end, operations counted)."""
    if prev < stop:  # an open loop lasts its duration (PROTOCOL.md): idle, untimed, until it has passed
        if shared_loop:
            await asyncio.sleep(max(0, stop - time.perf_counter_ns()) / 1e9)
        else:
            time.sleep(max(0, stop - time.perf_counter_ns()) / 1e9)
        return stop, i
    while start + int(stream[1] + stream[0].next()) < stop:  # behind schedule: arrivals due that never started
        out.skipped += 1
        i += 1
    return prev, i
