"""Undoing what a run started, on every way out but SIGKILL.

Each thing the run starts is pushed with a one-line description of where it lives; clean-up
undoes them newest first, each bounded in time by its own means (worker and server stop
timeouts, statement and lock timeouts on the server). A Ctrl-C during clean-up stops the
waiting: what was not undone yet is returned, described, so the user knows what was left where.
What a run killed outright left in its work directory, the next run on the host removes.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
import time
from typing import Callable, NoReturn

# In each run's work directory: which process made it, so that what a run killed outright
# (SIGKILL, the OOM killer, a machine stopped) left behind can be proved the run's own and
# removed by the next run on the same host.
OWNER = ".accessbench-run"


def end_like_ctrl_c() -> None:
    """SIGTERM and SIGHUP (the terminal closed) end the process the way Ctrl-C does, by raising
    KeyboardInterrupt in the main thread: its ``finally`` blocks stop the servers and workers it
    started and remove its work directory. Python's own default for them ends the process at
    once, leaving a server running on a data directory in /tmp."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.default_int_handler)


def interruptible(main: Callable[[], int]) -> NoReturn:
    """A script's entry point: ``main()``'s status, or 130 with one line when Ctrl-C or a kill
    ends it (its ``finally`` blocks having run), never a traceback."""
    end_like_ctrl_c()
    try:
        status = main()
    except KeyboardInterrupt:
        print("interrupted: what it started is stopped and its work directory removed", file=sys.stderr)
        sys.exit(130)
    sys.exit(status)


def claim(workdir: str) -> None:
    """Mark ``workdir`` as the current process's."""
    with open(os.path.join(workdir, OWNER), "w") as f:
        json.dump({"pid": os.getpid(), "started": _started(os.getpid()), "host": platform.node()}, f)


def left_by_killed_runs(parent: str) -> list[str]:
    """Stop the servers a killed run left running in its work directory under ``parent`` and
    remove the directory; one line for each, saying what was done. Only directories that name their maker, on this
    host, whose process is gone (a pid reused since is told apart by its start time), and only
    the servers it names in pid files (``_stop_servers_in``)."""
    swept = []
    try:
        entries = sorted(os.listdir(parent))
    except OSError:
        return swept
    for name in entries:
        if not name.startswith("accessbench-"):
            continue
        workdir = os.path.join(parent, name)
        try:
            with open(os.path.join(workdir, OWNER)) as f:
                owner = json.load(f)
            pid, started, host = int(owner["pid"]), owner["started"], owner["host"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a run's, or not one that says whose it is
        if host != platform.node() or started is None or _started(pid) == started:
            continue  # another host's, one whose maker cannot be told apart, or its run is still going
        running, stopped = _stop_servers_in(workdir)
        shutil.rmtree(workdir, ignore_errors=True)
        if running:
            servers = f"{running} server{'s' if running > 1 else ''} still running there"
            how = f": stopped {servers}" if stopped == running else f": stopped {stopped} of {servers}"
        else:
            how = ""
        gone = "removed" if not os.path.exists(workdir) else "could not remove all of"
        swept.append(f"{gone} {workdir}, left by a run that was killed{how}")
    return swept


def _started(pid: int) -> str | None:
    """The process's start time (clock ticks since boot), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]


def _stop_servers_in(workdir: str, patience: float = 20.0) -> tuple[int, int]:
    """Stop the servers a run started in ``workdir``: each process named by a pid file there
    (postmaster.pid, mariadb.pid, pgbouncer.pid, an app server's) whose command line also
    names the directory, so that a pid reused by someone else's process is left alone. SIGTERM
    first (a clean shutdown for each of them); SIGKILL to any still there after ``patience``
    seconds. A signal goes only to the process found, known by its start time: a pid freed by
    the SIGTERM may be someone else's by the SIGKILL. How many were running, and how many of
    those are stopped."""
    found: dict[int, str] = {}  # pid → its start time
    for directory, _, files in os.walk(workdir):
        for name in files:
            if not name.endswith(".pid"):
                continue
            try:
                with open(os.path.join(directory, name)) as f:
                    pid = int(f.readline())
                started = _started(pid)
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if started is not None and (workdir + os.sep).encode() in f.read():
                        found[pid] = started
            except (OSError, ValueError):
                continue

    def running() -> list[int]:
        return [pid for pid, started in found.items() if _started(pid) == started]

    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in running():
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + patience
        while running() and time.monotonic() < deadline:
            time.sleep(0.1)
    return len(found), len(found) - len(running())


class Cleanup:
    def __init__(self) -> None:
        self._steps: list[tuple[Callable[[], str | None], Callable[[], None]]] = []

    def push(self, describe: Callable[[], str | None], undo: Callable[[], None]) -> None:
        """``undo`` on the way out; ``describe()`` says what stays behind if it cannot run
        (None: nothing would)."""
        self._steps.append((describe, undo))

    def run(self) -> list[str]:
        """Undo everything, newest first; what was left behind, one line each."""
        left: list[str] = []
        while self._steps:
            describe, undo = self._steps.pop()
            try:
                undo()
            except KeyboardInterrupt:  # the user stopped waiting: say what stays, undo nothing more
                left += [what for what in (_safe(d) for d, _ in [(describe, undo), *reversed(self._steps)]) if what]
                self._steps.clear()
            except Exception as e:  # keep undoing the rest
                what = _safe(describe)
                left.append(f"{what}: {e}" if what else str(e))
        return left


def _safe(describe: Callable[[], str | None]) -> str | None:
    try:
        return describe()
    except Exception:
        return None
