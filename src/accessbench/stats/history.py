"""A cell's figure over every run in the store (`accessbench history`), and where it changed.

A cell here is what `compare` matches between two runs — the same suite, step, method, target
and path — followed from run to run in the order they were made. Each run is set against the
one before it that measured the same cell, by the comparison `compare` makes: a change is
marked only where the Mann-Whitney test rejects equality and the ratio's 95% CI lies outside
the floor — the larger of --noise and the drift calibrated for the host (`compare
--calibrate`) when both runs were made on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store.model import Cell, Run, Trial
from .cells import CellResult, timed
from .compare import ALPHA, NOISE, Comparison, compare
from .drift import calibration_host


@dataclass(frozen=True)
class Point:
    run: Run
    result: CellResult
    change: Comparison | None = None  # against the point before; None for the first


@dataclass
class Series:
    suite: str
    result: CellResult                 # the newest point's, which names the cell
    points: list[Point] = field(default_factory=list)

    @property
    def changes(self) -> list[Point]:
        return [p for p in self.points if p.change is not None and p.change.significant]


def series(runs: list[Run], cells: list[Cell], trials: dict[int, list[Trial]], drift=None,
           alpha: float = ALPHA, noise: float = NOISE) -> list[Series]:
    """Each cell's points, oldest first; ``drift(host)`` gives a host's calibrated floor (or None)."""
    by_id = {r.id: r for r in runs}
    found: dict[tuple, Series] = {}
    for cell in cells:
        result = timed(cell, trials.get(cell.id, []))
        if not result.measured:
            continue
        run = by_id[cell.run_id]
        key = (run.suite, cell.variant, cell.step, cell.method, cell.target, cell.path)
        line = found.setdefault(key, Series(run.suite, result))
        change = None
        if line.points:
            before = line.points[-1]
            change = compare(result, before.result, alpha, max(noise, _floor(before.run, run, drift)))
        line.points.append(Point(run, result, change))
        line.result = result
    return list(found.values())


def _floor(a: Run, b: Run, drift) -> float:
    """The host's calibrated run-to-run drift, where both runs were made on one host."""
    host = calibration_host(a.environment)
    if drift is None or host is None or host != calibration_host(b.environment):
        return 0.0
    return drift(host) or 0.0


def stored(store, alpha: float = ALPHA, noise: float = NOISE, **equal: list[str] | None) -> list[Series]:
    """Every verified cell of ``store`` over its runs, narrowed by ``equal`` (method, step,
    target, path), each change weighed against the host's calibrated drift."""
    runs, cells, trials = store.history(**equal)
    return series(runs, cells, trials, lambda host: store.drift(host)[0], alpha, noise)
