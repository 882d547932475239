"""A cell as the runner carries it through a run: where it is (planned, verified, failed …),
what its verification found, the warmups and rates measured so far; and ``CellFailed``, the
one way any part of the run says that a cell cannot go on (with the status it ends in)."""

from __future__ import annotations

from dataclasses import dataclass, field


class CellFailed(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class CellState:
    id: int
    status: str = "planned"
    message: str | None = None
    key: tuple | None = None  # what verification found: (rows, checksum, check checksum)
    warmups: list[float] = field(default_factory=list)  # ns per op of each warmup trial
    planned: int = 0          # executions still counted in the progress total
    done: int = 0
    kind: str = ""            # its step's kind: what one unit of its figure is
    last: str = ""            # the figure of its last timed trial, shown while the next runs
    rates: list[float] = field(default_factory=list)  # units/s of each timed trial of this session
    extra: int = 0            # timed trials added for precision

    @property
    def measurable(self) -> bool:
        return self.status in ("ok", "mismatch")

    def settled(self, within: float) -> bool:
        """The last two warmups agree within ``within``: a JIT runtime is warm."""
        if len(self.warmups) < 2:
            return False
        a, b = self.warmups[-2:]
        return abs(a - b) <= within * min(a, b)
