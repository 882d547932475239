"""Undoing what a run started, on every way out but SIGKILL.

Each thing the run starts is pushed with a one-line description of where it lives; clean-up
undoes them newest first, each bounded in time by its own means (worker and server stop
timeouts, statement and lock timeouts on the server). A Ctrl-C during clean-up stops the
waiting: what was not undone yet is returned, described, so the user knows what was left where.
"""

from __future__ import annotations

import signal
import sys
from typing import Callable, NoReturn


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
