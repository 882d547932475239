"""Is A faster than B? Two cells' trials compared the way a statistician would sign:
significant only when a Mann-Whitney U test rejects equality at level α *and* the 95%
bootstrap interval of the speed ratio lies wholly outside the noise threshold."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from .bootstrap import ratio_ci
from .cells import CellResult
from .mannwhitney import mann_whitney_p

ALPHA = 0.05
NOISE = 0.03  # differences under 3% are within what a quiet machine drifts between runs


def _mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney p (stats/mannwhitney.py, as scipy's). The test depends on the
    trials' order alone, so without ties it is asked once per order pattern (with 5 trials a
    side there are only 252)."""
    both = np.concatenate([a, b])
    if len(np.unique(both)) < len(both):  # ties: the tie correction needs the values
        return mann_whitney_p(a.tolist(), b.tolist())
    return _p_of_pattern(tuple((np.argsort(both, kind="stable") < len(a)).tolist()))


@lru_cache(maxsize=16384)
def _p_of_pattern(a_positions: tuple[bool, ...]) -> float:
    """p for trials ordered as given (True where the sorted combined trials hold one of a's)."""
    a = [i for i, mine in enumerate(a_positions) if mine]
    b = [i for i, mine in enumerate(a_positions) if not mine]
    return mann_whitney_p(a, b)


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p an exact Mann-Whitney test can give with these trial counts."""
    return min(1.0, 2 / math.comb(n_a + n_b, n_a))


@dataclass(frozen=True)
class Comparison:
    """``a`` against ``b``: ratio > 1 means a is faster (more units per second)."""

    a: CellResult
    b: CellResult
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    alpha: float = ALPHA
    noise: float = NOISE

    @property
    def bounded(self) -> bool:
        """Whether the ratio has an interval at all: the bootstrap needs two trials a side (one
        trial's resamples are all that trial, an interval of no width that says nothing)."""
        return min(self.a.rate.n, self.b.rate.n) >= 2

    @property
    def unbounded(self) -> str:
        """Said in place of the interval where there is none."""
        return f"no CI: {self.a.rate.n} vs {self.b.rate.n} trials"

    def interval(self, text: Callable[[float], str], between: str = "–") -> str:
        """'[low–high]' of the ratio, each end as ``text`` writes it, or '(no CI: 1 vs 3 trials)'."""
        return f"[{text(self.ci_low)}{between}{text(self.ci_high)}]" if self.bounded else f"({self.unbounded})"

    def interval_words(self, text: Callable[[float], str], between: str = "–") -> str:
        """'95% CI low–high', as a tooltip says it, or 'no CI: 1 vs 3 trials'."""
        return f"95% CI {text(self.ci_low)}{between}{text(self.ci_high)}" if self.bounded else self.unbounded

    @property
    def outside_noise(self) -> bool:
        return self.bounded and (self.ci_low > 1 + self.noise or self.ci_high < 1 / (1 + self.noise))

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha and self.outside_noise

    @property
    def verdict(self) -> str:
        """'1.84× faster [1.79–1.90]', '1.20× slower [1.15–1.26]' or 'no significant difference'."""
        if not self.significant:
            return "no significant difference"
        if self.ratio >= 1:
            return f"{self.ratio:.2f}× faster [{self.ci_low:.2f}–{self.ci_high:.2f}]"
        return f"{1 / self.ratio:.2f}× slower [{1 / self.ci_high:.2f}–{1 / self.ci_low:.2f}]"

    @property
    def reason(self) -> str:
        """Why a difference is not called significant, or the test's p when it is."""
        n_a, n_b = self.a.rate.n, self.b.rate.n
        if not self.bounded:
            return f"{n_a} vs {n_b} trials: a ratio's CI needs two trials a side; run more trials"
        if smallest_p(n_a, n_b) >= self.alpha:
            return f"{n_a} vs {n_b} trials: p ≥ {smallest_p(n_a, n_b):.2f} at best; run more trials"
        if self.p_value >= self.alpha:
            return f"p = {self.p_value:.2g} ≥ {self.alpha:g}"
        if not self.outside_noise:
            return f"p = {self.p_value:.2g}, but the ratio's CI [{self.ci_low:.3f}–{self.ci_high:.3f}] reaches within {self.noise:.0%}"
        return f"p = {self.p_value:.2g}"


def compare(a: CellResult, b: CellResult, alpha: float = ALPHA, noise: float = NOISE, seed: int = 0) -> Comparison:
    """Compare two measured cells' per-trial figures (units per second)."""
    if not (a.measured and b.measured):
        raise ValueError("both cells need measured trials")
    ra, rb = np.asarray(a.rates, dtype=float), np.asarray(b.rates, dtype=float)
    ratio = float(np.median(ra) / np.median(rb))
    if len(ra) < 2 or len(rb) < 2:
        low = high = ratio
    else:
        low, high = ratio_ci(ra, rb, seed=seed)
    p = _mann_whitney_p(ra, rb)
    return Comparison(a, b, ratio, low, high, p, alpha, noise)


@dataclass(frozen=True)
class Pair:
    """One row of S3's table: a reference cell and a candidate, by mean time per unit."""

    reference: CellResult
    candidate: CellResult
    comparison: Comparison  # candidate against reference

    @property
    def mean_reference_ns(self) -> float:
        return self.reference.unit_ns.mean

    @property
    def mean_candidate_ns(self) -> float:
        return self.candidate.unit_ns.mean

    @property
    def diff_ns(self) -> float:
        """S3's Diff: candidate's mean minus the reference's (positive = candidate slower)."""
        return self.mean_candidate_ns - self.mean_reference_ns

    @property
    def r_percent(self) -> float:
        """S3's R%: the candidate's mean time as a percentage of the reference's."""
        return 100.0 * self.mean_candidate_ns / self.mean_reference_ns

    @property
    def diff_percent(self) -> float:
        return self.r_percent - 100.0


# What a cell of one run is matched with in another: the same step, method, target and path —
# less the one axis the two runs changed, when each measured one value of it (tcp, then
# tcp+250us; postgresql@16, then postgresql@17).
ACROSS = ("path", "target")


@dataclass(frozen=True)
class Change:
    """The axis two runs differ on, and each run's one value of it."""

    axis: str        # path | target
    reference: str
    candidate: str


def _cell_key(r: CellResult, across: str | None = None) -> tuple:
    return (*r.step_key, r.cell.method) + tuple(getattr(r.cell, axis) for axis in ACROSS if axis != across)


def axis_change(reference: list[CellResult], candidate: list[CellResult]) -> Change | None:
    """Two runs that measured one path (or one target) each, and not the same one: that is the
    change under study, so their cells are matched across it. None when no axis, or more than
    one, changed so."""
    changes = []
    for axis in ACROSS:
        a, b = ({getattr(r.cell, axis) for r in run if r.measured} for run in (reference, candidate))
        if len(a) == len(b) == 1 and a != b:
            changes.append(Change(axis, a.pop(), b.pop()))
    return changes[0] if len(changes) == 1 else None


def pair_runs(reference: list[CellResult], candidate: list[CellResult], alpha: float = ALPHA,
              noise: float = NOISE, across: str | None = None) -> tuple[list[Pair], list[CellResult]]:
    """Cells of two runs matched by step, method, target and path (or, ``across`` an axis, by the
    rest only); returns the pairs and the cells measured in only one of them (or mismatched in
    either)."""
    ref = {_cell_key(r, across): r for r in reference if r.ranked}
    pairs, alone = [], []
    for c in candidate:
        r = ref.pop(_cell_key(c, across), None)
        if r is not None and c.ranked:
            pairs.append(Pair(r, c, compare(c, r, alpha, noise)))
        elif c.measured or r is not None:
            alone.append(c)
    return pairs, alone + list(ref.values())


def pair_with_base(results: list[CellResult], bases: list[str], alpha: float = ALPHA,
                   noise: float = NOISE) -> tuple[list[Pair], list[tuple]]:
    """Inside one run, every method's cell against a base method's on the same step, target and
    path. With several bases (say one per DBMS) each place uses the first that has a verified
    cell there. Returns the pairs and the (target, path) where no base has one."""
    found: dict[tuple, CellResult] = {}
    for base in reversed(bases):  # the first base named wins
        found |= {(*r.step_key, r.cell.target, r.cell.path): r for r in results
                  if r.cell.method == base and r.ranked}
    pairs, without = [], []
    for r in results:
        if r.cell.method in bases or not r.ranked:
            continue
        key = (*r.step_key, r.cell.target, r.cell.path)
        if key in found:
            pairs.append(Pair(found[key], r, compare(r, found[key], alpha, noise)))
        else:
            without.append((r.cell.target, r.cell.path))
    return pairs, list(dict.fromkeys(without))
