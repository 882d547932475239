"""CPU time of another process or thread, in nanoseconds: the server backend serving a worker.

Linux exposes any process's CPU clock to clock_gettime as MAKE_PROCESS_CPUCLOCK(pid,
CPUCLOCK_SCHED) (/proc/PID/stat counts only 10 ms ticks); a thread clock only to its own
process, so another process's thread (a MariaDB connection's) is read from
/proc/TID/schedstat, the same nanoseconds on CPU.
"""

from __future__ import annotations

import time


def process_cpu_ns(pid: int, thread: bool = False) -> int | None:
    """The process's (or, with ``thread``, the one thread's) user + system CPU so far, or
    None if it cannot be read (gone, or not on this machine)."""
    if thread:  # another process's thread clock is not ours to read: its schedstat is (ns on CPU)
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)
    except (OSError, OverflowError):
        return None


def total_cpu_ns(pids: list[int], threads: bool = False) -> int | None:
    """Summed over server processes (PostgreSQL: a backend per connection) or threads
    (MariaDB: a thread per connection, named by its OS thread id)."""
    values = [process_cpu_ns(pid, threads) for pid in pids]
    return None if not values or any(v is None for v in values) else sum(values)
