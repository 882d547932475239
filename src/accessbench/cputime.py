"""CPU time of another process or thread, in nanoseconds: the server backend serving a worker.

Linux exposes any process's CPU clock to clock_gettime as MAKE_PROCESS_CPUCLOCK(pid,
CPUCLOCK_SCHED) (/proc/PID/stat counts only 10 ms ticks); a thread clock only to its own
process, so another process's thread (a MariaDB connection's) is read from
/proc/TID/schedstat, the same nanoseconds on CPU.
"""

from __future__ import annotations

import os
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


TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")  # /proc's CPU times count clock ticks


def descendants(roots: set[int]) -> list[int]:
    """The processes of the trees rooted at ``roots`` that run now, roots included."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [r for r in roots if os.path.exists(f"/proc/{r}")]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def reaped_ticks(pid: int) -> tuple[int, int]:
    """User and system CPU, in clock ticks, of the children ``pid`` has waited for (cutime,
    cstime): summed in the kernel in nanoseconds, so rounded once, not per child."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[13]), int(fields[14])
    except (OSError, ValueError, IndexError):
        return 0, 0


def tree_cpu_ns(root: int) -> int | None:
    """A whole server's CPU so far: every process of its tree (each one's CPU clock, in ns) and
    what they reaped of their children — a backend that served one per-request connection and
    exited counts there, within a clock tick. None when the root is gone."""
    pids = descendants({root})
    if not pids:
        return None
    live = sum(process_cpu_ns(pid) or 0 for pid in pids)
    return live + sum(sum(reaped_ticks(pid)) for pid in pids) * TICK_NS
