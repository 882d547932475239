"""The same stored trials seen by different rules: accessbench's median with a 95% CI (the
default), and the studies' own — best of N (S1), mean with min and max of N (S3), seconds per
1,000 units (S2). A view picks each cell's figure, its spread and which way is better."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .. import formatting as fmt

if TYPE_CHECKING:  # the CLI lists the views without loading numpy
    from .cells import CellResult


@dataclass(frozen=True)
class View:
    name: str
    rule: str
    higher_is_better: bool
    kind: str                                            # "rate" (units/s) or "time" (ns or s)
    value: Callable[[CellResult], float]
    spread: Callable[[CellResult], tuple[float, float] | None]
    spread_name: str

    def unit(self, r: CellResult) -> str:
        if self.name == "per1000":
            return f"s per 1,000 {r.unit}"
        return f"{r.unit}/s" if self.kind == "rate" else f"time per {r.one_unit}"

    @property
    def form(self) -> str:
        """How the figures read (a key of formatting.FORMS): units/s, a duration, or seconds."""
        if self.kind == "rate":
            return "rate"
        return "seconds" if self.name == "per1000" else "duration"

    def text(self, value: float | None) -> str:
        """A figure of this view as every report shows it."""
        return fmt.FORMS[self.form](value)

    def rank(self, results: list[CellResult]) -> list[CellResult]:
        """Verified cells best first, then the rest in their given order."""
        ranked = sorted((r for r in results if r.ranked), key=self.value, reverse=self.higher_is_better)
        return ranked + [r for r in results if not r.ranked]

    def times_behind(self, r: CellResult, best: CellResult) -> float:
        """How many times worse than the best cell (1.00× for the best)."""
        a, b = self.value(r), self.value(best)
        return b / a if self.higher_is_better else a / b


VIEWS = {
    "median": View("median", "median of the trials with a 95% bootstrap CI (accessbench's default)", True, "rate",
                   lambda r: r.rate.median, lambda r: (r.rate.ci_low, r.rate.ci_high) if r.rate.n > 1 else None,
                   "95% CI"),
    "best": View("best", "best of the trials (study S1's rule)", True, "rate",
                 lambda r: r.rate.max, lambda r: None, ""),
    "mean": View("mean", "mean time per unit with the trials' min and max (study S3's rule)", False, "time",
                 lambda r: r.unit_ns.mean, lambda r: (r.unit_ns.min, r.unit_ns.max), "min–max"),
    "per1000": View("per1000", "seconds per 1,000 units, median of the trials (study S2's table)", False, "time",
                    lambda r: 1000.0 / r.rate.median,
                    lambda r: (1000.0 / r.rate.ci_high, 1000.0 / r.rate.ci_low) if r.rate.n > 1 else None, "95% CI"),
}
