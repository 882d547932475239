"""CPU time of another process, in nanoseconds: the server backend serving a worker.

Linux exposes any process's CPU clock to clock_gettime as MAKE_PROCESS_CPUCLOCK(pid,
CPUCLOCK_SCHED); /proc/PID/stat counts only 10 ms ticks and schedstat may be disabled.
"""

from __future__ import annotations

import time


def process_cpu_ns(pid: int) -> int | None:
    """The process's user + system CPU so far, or None if it cannot be read (gone, or not on
    this machine)."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except (OSError, OverflowError):
        return None


def total_cpu_ns(pids: list[int]) -> int | None:
    values = [process_cpu_ns(pid) for pid in pids]
    return None if not values or any(v is None for v in values) else sum(values)
