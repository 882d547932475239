"""The percentile bootstrap behind every interval accessbench prints: a cell's median (its
95% CI) and the ratio of two cells' medians (the verdicts).

Each cell's trials are resampled once (RESAMPLES draws with replacement) and the medians of
those resamples kept. A cell's CI is their 2.5th–97.5th percentiles; the ratio of two cells is
bootstrapped from the two cells' medians, draw by draw — each cell resampled independently
(their trials are not paired), which is exactly a two-sample percentile bootstrap. Drawing a
cell's resamples once lets a report compare every cell with every other in microseconds
(the HTML report's filters need every pair), where scipy.stats.bootstrap redraws per call.

The random stream is seeded by the trials themselves: a report made twice shows the same
intervals, and two cells never share resampling positions (shared positions would correlate
their medians and narrow the ratio's interval)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95


def resampled_medians(values, seed: int = 0) -> np.ndarray:
    """The medians of RESAMPLES bootstrap resamples of ``values`` (memoised by content)."""
    return _medians(np.asarray(values, dtype=float).tobytes(), seed)


@lru_cache(maxsize=16384)
def _medians(values: bytes, seed: int) -> np.ndarray:
    trials = np.frombuffer(values, dtype=float)
    rng = np.random.default_rng([seed, *np.frombuffer(values, dtype=np.uint32).tolist()])
    medians = np.median(trials[rng.integers(0, len(trials), size=(RESAMPLES, len(trials)))], axis=1)
    medians.flags.writeable = False  # shared by every caller through the cache
    return medians


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The central ``confidence`` interval of ``values``: np.percentile's linear interpolation
    at (1 ± confidence) / 2, on one sort."""
    ordered = np.sort(values)
    last = len(ordered) - 1

    def at(q: float) -> float:
        i, frac = int(q * last), q * last - int(q * last)
        return float(ordered[i] + (ordered[min(i + 1, last)] - ordered[i]) * frac)
    return at((1 - confidence) / 2), at((1 + confidence) / 2)


def median_ci(values, confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float]:
    """The percentile-bootstrap interval of the median of ``values``."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return float(values[0]), float(values[0])
    return percentile_interval(resampled_medians(values, seed), confidence)


def ratio_ci(a, b, confidence: float = CONFIDENCE, seed: int = 0) -> tuple[float, float]:
    """The percentile-bootstrap interval of median(a) / median(b), a and b independent."""
    return percentile_interval(resampled_medians(a, seed) / resampled_medians(b, seed), confidence)


def relative_half_width(median: float, low: float, high: float) -> float | None:
    """How precisely a median is known: its CI's half-width relative to it (None at 0)."""
    return (high - low) / 2 / median if median else None
