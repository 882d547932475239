"""What a person sees while a run works: on a terminal a live progress bar with the cell and
trial in flight (and that cell's last figure) and the time left; in a log or a pipe a plain
line every 10% of the run or 30 s, whichever comes first. Both print loud lines for what
needs attention. The total of executions is fixed when the run begins. The time left
(``Pace``) counts a loaded step's trials at the duration the suite gives them, as long as
such trials have taken against it so far, and the others at the run's average pace so far:
it settles instead of jumping with each short or long step, and a run ending in 15-second
loaded trials is not promised in the minutes its short ones would take."""

from __future__ import annotations

import time
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..runner.run import Progress as RunProgress

class Pace:
    """The time left. An execution is counted when it starts, so the time until the next
    starts is its own: a fixed-length one's (a loaded trial: ``lasts_s``, the suite's duration)
    or a paced one's (a verification, a plain trial, a table loaded). What remains is the
    paced executions left at the paced ones' average so far, plus the fixed seconds left
    scaled by how long the fixed ones have taken against their nominal length (1 until one has
    ended: a loaded trial also starts its clients and waits at a barrier), plus what the one in
    flight has still to go."""

    def __init__(self, total: int, fixed: tuple[int, float], now: float) -> None:
        self.paced_total, self.fixed_total_s = total - fixed[0], fixed[1]
        self.paced_done = 0
        self.paced_time = self.fixed_time = self.fixed_ended_s = self.fixed_done_s = 0.0
        # the execution in flight: (paced count, fixed seconds); None before the first and after a skip
        self.flight: tuple[int, float] | None = None
        self.last = now

    def _land(self, now: float) -> None:
        """The execution in flight has ended (the next begins, or some are skipped)."""
        spent, self.last = now - self.last, now
        if self.flight is None:  # starting the run's servers, or between a skip and the next
            return
        count, fixed_s = self.flight
        if fixed_s:
            self.fixed_time += spent
            self.fixed_ended_s += fixed_s
        else:  # uncounted executions too (a JIT runtime's extra warmups): the pace is the run's
            self.paced_time += spent
        self.flight = None

    def advance(self, now: float, amount: int, lasts_s: float) -> None:
        self._land(now)
        self.flight = (0, lasts_s) if lasts_s else (amount, 0.0)
        self.fixed_done_s += lasts_s if amount else 0.0  # an uncounted one was never in the total
        self.paced_done += 0 if lasts_s else amount

    def skip(self, now: float, amount: int, lasts_s: float) -> None:
        self._land(now)
        self.fixed_done_s += lasts_s
        self.paced_done += 0 if lasts_s else amount

    def left(self, now: float) -> float | None:
        """Seconds left at ``now``, or None before any pace is known."""
        count, fixed_s = self.flight or (0, 0.0)
        ended = self.paced_done - count
        if not ended and self.paced_total > ended:  # paced work to come, at no pace yet
            return None
        rate = self.paced_time / ended if ended else 0.0
        stretch = self.fixed_time / self.fixed_ended_s if self.fixed_ended_s else 1.0
        flight = count * rate + fixed_s * stretch
        return (max(0, self.paced_total - self.paced_done) * rate
                + max(0.0, self.fixed_total_s - self.fixed_done_s) * stretch
                + max(0.0, flight - (now - self.last)))


class LeftColumn(ProgressColumn):
    """The bar's time left, from the run's ``Pace``."""

    def __init__(self, owner: "LiveProgress") -> None:
        super().__init__()
        self.owner = owner

    def render(self, task) -> Text:
        pace = self.owner.pace
        left = pace.left(time.monotonic()) if pace is not None else None
        return Text(f"left {'-:--:--' if left is None else clock_text(left)}", style="progress.remaining")


def _note(console: Console, message: str) -> None:
    style = "bold red" if message.startswith(("MISMATCH", "ERROR", "TIMEOUT")) else "dim"
    console.print(message, style=style, highlight=False, markup=False)


class LiveProgress(RunProgress):
    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), LeftColumn(self), console=console, transient=True,
        )
        self.task = None
        self.pace: Pace | None = None

    def begin(self, total: int, fixed: tuple[int, float] = (0, 0.0)) -> None:
        self.pace = Pace(total, fixed, time.monotonic())
        self.bar.start()
        self.task = self.bar.add_task("starting", total=total)

    def advance(self, description: str, amount: int = 1, lasts_s: float = 0.0) -> None:
        if self.task is not None:
            self.pace.advance(time.monotonic(), amount, lasts_s)
            if description:
                self.bar.update(self.task, description=description[:90])
            self.bar.update(self.task, advance=amount)

    def skip(self, amount: int, lasts_s: float = 0.0) -> None:
        if self.task is not None:
            self.pace.skip(time.monotonic(), amount, lasts_s)
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


def progress_line(done: int, total: int, elapsed_s: float, description: str, left_s: float | None = None) -> str:
    """'progress 30% (216 of 720) · 3:05 elapsed · about 7:12 left · c-libpq @ … · trial 3/5';
    the time left as given, or else the run's average pace so far applied to what remains."""
    share = done / total if total else 1.0
    if left_s is None and done:
        left_s = elapsed_s / done * (total - done)
    left = f" · about {clock_text(left_s)} left" if 0 < done < total and left_s is not None else ""
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
        self.pace = Pace(0, (0, 0.0), 0.0)

    def begin(self, total: int, fixed: tuple[int, float] = (0, 0.0)) -> None:
        self.total, self.done = total, 0
        self.started = self.printed_at = self.clock()
        self.printed_tenth = 0
        self.pace = Pace(total, fixed, self.started)

    def advance(self, description: str, amount: int = 1, lasts_s: float = 0.0) -> None:
        self.done += amount
        if description:
            self.description = description
        now = self.clock()
        self.pace.advance(now, amount, lasts_s)
        self._line(now)

    def skip(self, amount: int, lasts_s: float = 0.0) -> None:
        self.done += amount
        now = self.clock()
        self.pace.skip(now, amount, lasts_s)
        self._line(now)

    def _line(self, now: float) -> None:
        tenth = self.done * self.TENTHS // self.total if self.total else self.TENTHS
        if tenth > self.printed_tenth or now - self.printed_at >= self.EVERY_S:
            self.printed_tenth, self.printed_at = tenth, now
            self.console.print(progress_line(self.done, self.total, now - self.started, self.description,
                                             self.pace.left(now)), highlight=False, markup=False, soft_wrap=True)

    def note(self, message: str) -> None:
        _note(self.console, message)

    def end(self) -> None:
        if self.total and self.printed_tenth < self.TENTHS:
            self.console.print(progress_line(self.done, self.total, self.clock() - self.started, ""),
                               highlight=False, markup=False, soft_wrap=True)
