"""Summaries of one cell's trials: median with a 95% bootstrap CI, min, mean ± sd, CV, and
percentiles of per-operation latency. Outliers are kept: every trial counts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import bootstrap

PERCENTILES = (50.0, 90.0, 99.0, 99.9)


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    ci_low: float | None   # None with one trial: its resamples are all that trial, no interval
    ci_high: float | None
    min: float
    max: float
    mean: float
    sd: float

    @property
    def cv(self) -> float:
        return self.sd / self.mean if self.mean else 0.0


def bootstrap_median_ci(values: np.ndarray, confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap of the median (stats/bootstrap.py). Seeded, so a report made
    twice from the same trials shows the same interval."""
    return bootstrap.median_ci(values, confidence, seed)


def summarize(values) -> Summary:
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        raise ValueError("no values to summarize")
    low, high = bootstrap_median_ci(values) if len(values) > 1 else (None, None)
    return Summary(
        n=len(values),
        median=float(np.median(values)),
        ci_low=low,
        ci_high=high,
        min=float(values.min()),
        max=float(values.max()),
        mean=float(values.mean()),
        sd=float(values.std(ddof=1)) if len(values) > 1 else 0.0,
    )


def latency_percentiles(latencies_ns: np.ndarray, points=PERCENTILES) -> dict[float, float]:
    """Exact percentiles of every recorded operation (no histogram, nothing dropped)."""
    if len(latencies_ns) == 0:
        return {}
    values = np.percentile(latencies_ns.astype(float), points)
    return {p: float(v) for p, v in zip(points, values)} | {100.0: float(latencies_ns.max())}
