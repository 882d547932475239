"""What a person sees while a run works: on a terminal a live progress bar with the cell and
trial in flight (and that cell's last figure) and the time left; in a log or a pipe a plain
line every 10% of the run or 30 s, whichever comes first. Both print loud lines for what
needs attention. The total of executions is fixed when the run begins, and the time left is
the whole run's average pace so far applied to what remains: it settles instead of jumping
with each short or long step."""

from __future__ import annotations

import time
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..runner.run import Progress as RunProgress

# rich estimates speed over a sliding window (30 s by default): with steps of very different
# lengths the time left would swing; a window as long as a run gives the run's average pace.
WHOLE_RUN_S = 24 * 3600


def _note(console: Console, message: str) -> None:
    style = "bold red" if message.startswith(("MISMATCH", "ERROR", "TIMEOUT")) else "dim"
    console.print(message, style=style, highlight=False, markup=False)


class LiveProgress(RunProgress):
    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), console=console, transient=True,
            speed_estimate_period=WHOLE_RUN_S,
        )
        self.task = None

    def begin(self, total: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task("starting", total=total)

    def advance(self, description: str, amount: int = 1) -> None:
        if self.task is not None:
            if description:
                self.bar.update(self.task, description=description[:90])
            self.bar.update(self.task, advance=amount)

    def note(self, message: str) -> None:
        _note(self.console, message)

    def end(self) -> None:
        if self.task is not None:
            self.bar.stop()
            self.task = None


def clock_text(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def progress_line(done: int, total: int, elapsed_s: float, description: str) -> str:
    """'progress 30% (216 of 720) · 3:05 elapsed · about 7:12 left · c-libpq @ … · trial 3/5'."""
    share = done / total if total else 1.0
    left = f" · about {clock_text(elapsed_s / done * (total - done))} left" if 0 < done < total else ""
    return (f"progress {share:.0%} ({done:,} of {total:,}) · {clock_text(elapsed_s)} elapsed{left}"
            + (f" · {description}" if description else ""))


class PlainProgress(RunProgress):
    """Progress as lines, for a log, CI or `| tee`: one every 10% of the run or 30 s."""

    TENTHS = 10      # a line each time the run crosses a tenth of its total
    EVERY_S = 30.0

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        self.console, self.clock = console, clock
        self.total = self.done = 0
        self.started = self.printed_at = 0.0
        self.printed_tenth = 0
        self.description = ""

    def begin(self, total: int) -> None:
        self.total, self.done = total, 0
        self.started = self.printed_at = self.clock()
        self.printed_tenth = 0

    def advance(self, description: str, amount: int = 1) -> None:
        self.done += amount
        if description:
            self.description = description
        now = self.clock()
        tenth = self.done * self.TENTHS // self.total if self.total else self.TENTHS
        if tenth > self.printed_tenth or now - self.printed_at >= self.EVERY_S:
            self.printed_tenth, self.printed_at = tenth, now
            self.console.print(progress_line(self.done, self.total, now - self.started, self.description),
                               highlight=False, markup=False, soft_wrap=True)

    def note(self, message: str) -> None:
        _note(self.console, message)

    def end(self) -> None:
        if self.total and self.printed_tenth < self.TENTHS:
            self.console.print(progress_line(self.done, self.total, self.clock() - self.started, ""),
                               highlight=False, markup=False, soft_wrap=True)
