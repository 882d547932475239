"""The round-trip model: what an access method would cost at another network latency.

Per-op time at one-way delay L' = per-op time at L + round trips per op × 2 (L' − L).
Round trips per op belong to the method and step, not to the path, so they are taken from
whichever proxied path counted them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..paths import parse as parse_path
from .cells import CellResult


@dataclass(frozen=True)
class Prediction:
    base: CellResult              # the cell measured at the base latency
    round_trips_per_op: float
    latency_us: float             # one-way delay predicted for
    predicted_ns: float
    measured: CellResult | None = None  # the cell actually measured there, when there is one

    @property
    def error(self) -> float | None:
        if self.measured is None or not self.measured.per_op_ns:
            return None
        return (self.predicted_ns - self.measured.per_op_ns) / self.measured.per_op_ns


def _delay_us(path: str) -> float | None:
    spec = parse_path(path)
    return spec.delay_us if spec.base == "tcp" else None


def _round_trips(results: list[CellResult]) -> dict[tuple, float]:
    counted = {}
    for r in results:
        if r.round_trips_per_op is not None and r.cell.status == "ok":
            counted.setdefault((r.cell.variant, r.cell.target, r.cell.method, r.cell.step), r.round_trips_per_op)
    return counted


def predict(results: list[CellResult], latency_us: float, base_path: str = "tcp") -> list[Prediction]:
    """For every cell measured on ``base_path`` whose round trips are known, its per-op time
    at ``latency_us``, beside the cell measured there if the run has one."""
    counted = _round_trips(results)
    base_delay = _delay_us(base_path)
    at = {(r.cell.variant, r.cell.target, r.cell.method, r.cell.step): r
          for r in results if r.measured and _delay_us(r.cell.path) == latency_us and r.cell.path != base_path}
    out = []
    for r in results:
        key = (r.cell.variant, r.cell.target, r.cell.method, r.cell.step)
        if r.cell.path != base_path or not r.measured or key not in counted or r.per_op_ns is None:
            continue
        trips = counted[key]
        predicted = r.per_op_ns + trips * 2 * (latency_us - base_delay) * 1000
        out.append(Prediction(r, trips, latency_us, predicted, at.get(key)))
    return out


def checks(results: list[CellResult], base_path: str = "tcp") -> list[Prediction]:
    """Predictions for every proxied latency the run measured, each with its measurement."""
    delays = sorted({d for r in results if (d := _delay_us(r.cell.path)) and r.cell.path != base_path})
    return [p for d in delays for p in predict(results, d, base_path) if p.measured is not None]
