"""Warnings about a cell's trials, in the spirit of pyperf's: a figure is only as good as the
spread and length of the trials behind it. Outliers are flagged here and never removed."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import formatting as fmt
from . import hosts
from .cells import CellResult
from .compare import NOISE

UNSTABLE_CV = 0.10          # pyperf's threshold: sd above 10% of the mean
SHORT_TRIAL_NS = 3_000_000  # under a few ms one preemption (a 4 ms scheduler tick) skews a trial
MIN_TRIALS_FOR_TEST = 4     # Mann-Whitney with 3 vs 3 trials cannot reach p < 0.05
Z_95 = 1.96
OUTLIER_Z = 14.0           # hyperfine's threshold for the modified z-score


@dataclass(frozen=True)
class Flag:
    kind: str          # wide · unstable · short · few · outlier
    text: str
    trials_needed: int | None = None  # for "few": how many trials the spread calls for


def trials_needed(cv: float, threshold: float) -> int:
    """Trials for the mean's 95% interval to be narrower than the noise threshold:
    n ≈ (1.96 · CV / threshold)²."""
    return max(MIN_TRIALS_FOR_TEST, math.ceil((Z_95 * cv / threshold) ** 2))


def outliers(values: np.ndarray) -> list[int]:
    """Indexes of trials whose modified z-score (Iglewicz and Hoaglin: 0.6745 · |x − median| / MAD)
    exceeds hyperfine's threshold of 14: only trials far from the rest, since with a handful
    of timing trials milder rules flag half the cells of a quiet run."""
    values = np.asarray(values, dtype=float)
    if len(values) < 3:
        return []
    median = np.median(values)
    mad = np.median(np.abs(values - median))
    if mad == 0:
        return []
    return [i for i, v in enumerate(values) if 0.6745 * abs(v - median) / mad > OUTLIER_Z]


def flags(result: CellResult, threshold: float = NOISE) -> list[Flag]:
    """What to be careful of in a cell; the kind says which rule, the text gives the numbers."""
    if not result.measured:
        return []
    rate, unit, found = result.rate, f"{result.unit}/s", []
    if rate.cv > UNSTABLE_CV:
        found.append(Flag("unstable", f"the standard deviation ({fmt.rate(rate.sd)}) is {rate.cv:.0%} "
                                      f"of the mean ({fmt.rate(rate.mean)} {unit})"))
    if result.shortest_trial_ns is not None and result.shortest_trial_ns < SHORT_TRIAL_NS:
        found.append(Flag("short", f"the shortest trial took {result.shortest_trial_ns / 1e6:.2g} ms; "
                                   "raise the step's iterations so a trial lasts several ms"))
    if result.precision and (half := result.half_width) is not None and half > result.precision:
        found.append(Flag("wide", f"the median's 95% CI is ±{half:.1%}, wider than the ±{fmt.share(result.precision)} the run "
                                  f"asked for after {rate.n} trials: where it stands against its neighbours is uncertain"))
    needed = trials_needed(rate.cv, threshold)
    if rate.n < needed:
        why = (f"a CV of {rate.cv:.1%} needs about {needed} to resolve {threshold:.0%} differences"
               if needed > MIN_TRIALS_FOR_TEST else f"a significance test needs at least {MIN_TRIALS_FOR_TEST}")
        found.append(Flag("few", f"{rate.n} trials; {why}", needed))
    if result.hosts and (busy := hosts.saturated(result.hosts)):
        found.append(Flag("client", f"{busy}: the clients, not the server, may have set this figure"))
    far = outliers(result.rates)
    if far:
        trials = ", ".join(f"{i + 1} ({fmt.rate(result.rates[i])})" for i in far)
        found.append(Flag("outlier", f"trial{'s' if len(far) > 1 else ''} {trials} against a median of "
                                     f"{fmt.rate(rate.median)} {unit}; kept"))
    return found
