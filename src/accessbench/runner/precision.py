"""Enough trials, chosen by the data: after a step's fixed trials, more interleaved rounds for
the cells whose figure is not yet known to the precision asked for.

A cell's precision is the half-width of the 95% bootstrap CI of its median units/s (the
figure the reports rank by), relative to the median: ±3% means the interval is within 3% of
the median on either side. Cells wider than the target get one more timed trial per round,
all such cells in turn (A C A C …, so drift still hits them alike), until every cell is
within the target, a cell reaches ``max_trials``, or the step's share of the run's time
budget is spent. The budget is shared out as the run goes: each step may spend what is left
divided by the steps still to come, so an early noisy step cannot starve the later ones, and
what a quiet step leaves goes to the rest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..stats.bootstrap import median_ci, relative_half_width


def half_width(rates: list[float]) -> float | None:
    """The relative half-width of the median's 95% CI, or None with fewer than 2 trials."""
    if len(rates) < 2:
        return None
    return relative_half_width(float(np.median(rates)), *median_ci(rates))


@dataclass
class Precision:
    target: float                  # relative half-width asked for (0.03 = ±3%); 0: fixed trials only
    budget_s: float                # seconds of extra trials the whole run may spend
    max_trials: int = 80           # timed trials a cell may reach
    steps_left: int = 0            # steps still to measure, for the budget's shares
    spent_s: float = field(default=0.0)

    @property
    def on(self) -> bool:
        return self.target > 0 and self.budget_s > 0

    def wide(self, trials: dict, measurable) -> list:
        """The cells (keys of ``trials``: each cell's timed units/s so far) still wider than
        the target that may have another trial."""
        return [cell for cell, rates in trials.items()
                if measurable(cell) and len(rates) < self.max_trials
                and (w := half_width(rates)) is not None and w > self.target]

    def step_share(self) -> float:
        """The seconds this step may spend on extra trials."""
        left = max(0.0, self.budget_s - self.spent_s)
        return left / max(1, self.steps_left)

    def rounds(self, trials: dict, measurable, parts_left: int = 1):
        """Yield the successive rounds of cells that need one more trial each; the caller
        runs a round before asking for the next. Charges the time spent to the budget. A step
        measured in batches asks once per batch, ``parts_left`` counting this one: each gets
        its share of what the step has left, and the last ends the step."""
        if not self.on:
            self.steps_left = max(0, self.steps_left - (parts_left == 1))
            return
        share, started = self.step_share() / parts_left, time.monotonic()
        try:
            while time.monotonic() - started < share:
                wide = self.wide(trials, measurable)
                if not wide:
                    return
                yield wide
        finally:
            self.spent_s += time.monotonic() - started
            self.steps_left = max(0, self.steps_left - (parts_left == 1))
