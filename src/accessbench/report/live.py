"""The live view of a run on the terminal: a progress bar with the cell and trial in
flight and the time left, and loud lines for what needs attention."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..runner.run import Progress as RunProgress


class LiveProgress(RunProgress):
    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), console=console, transient=True,
        )
        self.task = None

    def begin(self, total: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task("starting", total=total)

    def extend(self, extra: int) -> None:
        if self.task is not None:
            self.bar.update(self.task, total=self.bar.tasks[0].total + extra)

    def advance(self, description: str, amount: int = 1) -> None:
        if self.task is not None:
            if description:
                self.bar.update(self.task, description=description[:70])
            self.bar.update(self.task, advance=amount)

    def note(self, message: str) -> None:
        style = "bold red" if message.startswith(("MISMATCH", "ERROR", "TIMEOUT")) else "dim"
        self.console.print(message, style=style, highlight=False)

    def end(self) -> None:
        if self.task is not None:
            self.bar.stop()
            self.task = None
