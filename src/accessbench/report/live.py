"""What a person sees while a run works: on a terminal a live progress bar with the cell and
trial in flight (and that cell's last figure) and the time left; in a log or a pipe a plain
line every 10% of the run or 30 s, whichever comes first. Both print loud lines for what
needs attention. The total of executions is fixed when the run begins. The time left
(``Pace``) counts each cell's trials at what that cell's last one took, a loaded step's at the
duration the suite gives them: it settles instead of jumping with each short or long step, a
run ending in 15-second loaded trials is not promised in the minutes its short ones would
take, and a grid whose reads take 0.2 s on loopback and minutes at 10 Mbit/s is not promised
in its fast cells' time."""

from __future__ import annotations

import time
from collections import Counter
from typing import Callable, Hashable, Mapping

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..runner.run import Progress as RunProgress

class Pace:
    """The time left. An execution is counted when it starts, so the time until the next
    starts is its own: a fixed-length one's (a loaded trial: ``lasts_s``, the suite's duration)
    or a paced one's (a verification, a plain warmup or trial, a table loaded).

    A paced warmup or trial names its ``cell``, and is expected to take what that cell's last
    one took, in this sitting or, for a resumed run, in an earlier one (``cells``: each cell's
    paced warmups and trials to come, the seconds one took before or None, and its kin: the
    same step on the same target and path). A cell not yet timed is expected at what its
    verification took, where that read the step (every operation of a trial, checksummed: a
    resumed run's kept verifications read nothing), else at the mean of its kin timed so far
    (the other methods on the same link: 170 s at 10 Mbit/s, where loopback's read in 2), else
    at the mean of every cell timed so far. The other paced executions (verifications, loads) are expected
    at their own average. Before either is known, the average of every paced execution ended
    stands in. Fixed seconds left are scaled by how long the fixed ones have
    taken against their nominal length (1 until one has ended: a loaded trial also starts its
    clients and waits at a barrier). Executions skipped (a failed cell's) take their count
    off what is left and add nothing to any average; a resumed run's stored trials were never
    in its total."""

    def __init__(self, total: int, fixed: tuple[int, float], now: float,
                 cells: Mapping[Hashable, tuple[int, float | None, Hashable]] | None = None) -> None:
        cells = cells or {}
        self.to_come: Counter = Counter({cell: n for cell, (n, _, _) in cells.items()})
        self.to_come[None] = max(0, total - fixed[0] - sum(self.to_come.values()))  # verifications and loads
        self.took: dict[Hashable, float] = {cell: s for cell, (_, s, _) in cells.items() if s is not None}
        self.kin: dict[Hashable, Hashable] = {cell: kin for cell, (_, _, kin) in cells.items()}
        self.verified: dict[Hashable, float] = {}  # what a cell's verification took, where it read
        self.other_time, self.other_ended = 0.0, 0     # the paced executions of no cell
        self.paced_time, self.paced_ended = 0.0, 0     # every paced execution
        self.fixed_total_s = fixed[1]
        self.fixed_time = self.fixed_ended_s = self.fixed_done_s = 0.0
        # the execution in flight: (its cell or None, fixed seconds, counted, the cell's
        # verification that reads); None before the first and after a skip
        self.flight: tuple[Hashable, float, bool, bool] | None = None
        self.last = now

    def _land(self, now: float) -> None:
        """The execution in flight has ended (the next begins, or some are skipped)."""
        spent, self.last = now - self.last, now
        if self.flight is None:  # starting the run's servers, or between a skip and the next
            return
        cell, fixed_s, counted, verifies = self.flight
        self.flight = None
        if verifies:
            self.verified[cell] = spent
            cell = None  # and counts as any verification
        if fixed_s:
            self.fixed_time += spent
            self.fixed_ended_s += fixed_s
            return
        if cell is None and not counted:  # a cell's uncounted profile, whose length is its own
            return
        self.paced_time, self.paced_ended = self.paced_time + spent, self.paced_ended + 1
        if cell is not None:  # uncounted ones too (a JIT runtime's extra warmups): the cell's latest
            self.took[cell] = spent
        else:
            self.other_time, self.other_ended = self.other_time + spent, self.other_ended + 1

    def _known(self, cell: Hashable) -> Hashable:
        """``cell`` if the run began with it among its paced cells, else None."""
        return cell if cell is not None and cell in self.to_come else None

    def advance(self, now: float, amount: int, lasts_s: float, cell: Hashable = None,
                verifies: Hashable = None) -> None:
        """``cell``: whose warmup or trial begins; ``verifies``: whose verification, reading the step."""
        self._land(now)
        if self._known(verifies) is not None:  # counted among the verifications, and remembered for its cell
            self.flight = (verifies, lasts_s, bool(amount), True)
            cell = None
        else:
            cell = self._known(cell)
            self.flight = (cell, lasts_s, bool(amount), False)
        if lasts_s:
            self.fixed_done_s += lasts_s if amount else 0.0  # an uncounted one was never in the total
        else:
            self.to_come[cell] = max(0, self.to_come[cell] - amount)

    def skip(self, now: float, amount: int, lasts_s: float, cell: Hashable = None) -> None:
        self._land(now)
        cell = self._known(cell)
        if lasts_s:
            self.fixed_done_s += lasts_s
        else:
            self.to_come[cell] = max(0, self.to_come[cell] - amount)

    def left(self, now: float) -> float | None:
        """Seconds left at ``now``, or None before any pace is known."""
        anything = self.paced_time / self.paced_ended if self.paced_ended else None
        known = {**self.verified, **self.took}  # each cell's own: its last trial, or else its verification
        timed = sum(known.values()) / len(known) if known else anything
        other = self.other_time / self.other_ended if self.other_ended else anything

        kin: dict[Hashable, list[float]] = {}
        for cell, seconds in known.items():
            kin.setdefault(self.kin.get(cell), []).append(seconds)

        def each(cell: Hashable) -> float | None:
            if cell is None:
                return other
            if cell in known:
                return known[cell]
            alike = kin.get(self.kin.get(cell))
            return sum(alike) / len(alike) if alike else timed

        paced = 0.0
        for cell, n in self.to_come.items():
            if n:
                if (seconds := each(cell)) is None:  # paced work to come, at no pace yet
                    return None
                paced += n * seconds
        stretch = self.fixed_time / self.fixed_ended_s if self.fixed_ended_s else 1.0
        flight = 0.0  # what the execution in flight has still to go
        if self.flight is not None:
            cell, fixed_s, counted, verifies = self.flight
            if fixed_s:
                flight = fixed_s * stretch
            elif verifies:
                flight = other or 0.0
            elif counted or cell is not None:  # not an uncounted profile
                flight = each(cell) or 0.0
        return paced + max(0.0, self.fixed_total_s - self.fixed_done_s) * stretch + max(0.0, flight - (now - self.last))


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

    def begin(self, total: int, fixed: tuple[int, float] = (0, 0.0), cells=None) -> None:
        self.pace = Pace(total, fixed, time.monotonic(), cells)
        self.bar.start()
        self.task = self.bar.add_task("starting", total=total)

    def advance(self, description: str, amount: int = 1, lasts_s: float = 0.0, cell=None, verifies=None) -> None:
        if self.task is not None:
            self.pace.advance(time.monotonic(), amount, lasts_s, cell, verifies)
            if description:
                self.bar.update(self.task, description=description[:90])
            self.bar.update(self.task, advance=amount)

    def skip(self, amount: int, lasts_s: float = 0.0, cell=None) -> None:
        if self.task is not None:
            self.pace.skip(time.monotonic(), amount, lasts_s, cell)
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

    def begin(self, total: int, fixed: tuple[int, float] = (0, 0.0), cells=None) -> None:
        self.total, self.done = total, 0
        self.started = self.printed_at = self.clock()
        self.printed_tenth = 0
        self.pace = Pace(total, fixed, self.started, cells)

    def advance(self, description: str, amount: int = 1, lasts_s: float = 0.0, cell=None, verifies=None) -> None:
        self.done += amount
        if description:
            self.description = description
        now = self.clock()
        self.pace.advance(now, amount, lasts_s, cell, verifies)
        self._line(now)

    def skip(self, amount: int, lasts_s: float = 0.0, cell=None) -> None:
        self.done += amount
        now = self.clock()
        self.pace.skip(now, amount, lasts_s, cell)
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
