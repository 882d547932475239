"""A worker's memory during a trial, from the kernel: its resident set just before the trial
(VmRSS) and its high-water mark during it (VmHWM), which writing "5" to /proc/PID/clear_refs
resets to the current resident set just before the trial starts. The peak is the whole
process's — runtime, libraries and the result it holds — so reports show it beside the
growth over the start, what the trial's own reading added."""

from __future__ import annotations


def _status(pid: int, key: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def start(pid: int) -> int | None:
    """Reset the process's high-water mark; its resident bytes now, or None where the
    kernel does not let either be done (then no peak is reported for the trial)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return _status(pid, "VmRSS")


def peak(pid: int, start_rss: int) -> int | None:
    """The process's largest resident set since ``start``, in bytes: never below the resident
    set ``start`` read. The kernel's counters are per-CPU and summed approximately, so the
    high-water mark it reset and the resident set read just after can differ by a few pages;
    what was resident when the trial began was its peak's floor all the same."""
    high = _status(pid, "VmHWM")
    return None if high is None else max(high, start_rss)


# What one open worker is budgeted, resident: the peaks measured here run from 12 MB (C) through
# 30–50 MB (Python, Rust, Go) and about 100 MB (Node) to about 320 MB (a JVM after a scan).
WORKER_BUDGET = 128 * 1024 * 1024


def worker_room() -> int:
    """How many workers this machine holds open at once without paging: the memory available
    when the run starts (the kernel's MemAvailable) over ``WORKER_BUDGET``, at least 2."""
    import psutil

    return max(2, psutil.virtual_memory().available // WORKER_BUDGET)
