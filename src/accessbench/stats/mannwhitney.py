"""The two-sided Mann-Whitney U test's p-value, as scipy.stats.mannwhitneyu computes it by
default (method "auto", continuity correction): the exact null distribution of U when there
are no ties and one sample or both hold 8 values or fewer; otherwise the normal approximation
with the tie correction. tests/test_mannwhitney.py holds it to scipy's
own answers.

Why not scipy itself: importing scipy.stats takes a second of CPU (it formats the docstrings
of every distribution it defines), and every command that compares two cells — a run's report,
show, compare, reproduce — paid it for this one function.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Sequence


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p that ``a`` and ``b`` come from the same distribution."""
    n1, n2 = len(a), len(b)
    ranks = _average_ranks([*a, *b])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    ties = [t for t in Counter([*a, *b]).values() if t > 1]
    if (n1 > 8 and n2 > 8) or ties:
        n = n1 + n2
        s = math.sqrt(n1 * n2 / 12 * ((n + 1) - sum(t ** 3 - t for t in ties) / (n * (n - 1))))
        numerator = u - n1 * n2 / 2 - 0.5
        z = numerator / s if s else math.copysign(math.inf, numerator)  # every value tied: p is 1
        p = math.erfc(z / math.sqrt(2))  # 2 × the normal's survival function at z
    else:
        p = 2 * _at_least(int(u), min(n1, n2), max(n1, n2))
    return min(max(p, 0.0), 1.0)


def _average_ranks(values: list[float]) -> list[float]:
    """Each value's rank (1 = smallest), tied values sharing their ranks' mean."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@lru_cache(maxsize=1024)
def _at_least(u: int, n1: int, n2: int) -> float:
    """P(U ≥ u) under the null hypothesis, from the exact counts of the orderings of n1 and n2
    values by their U (the distribution is symmetric about n1·n2/2)."""
    counts = _counts(n1, n2)
    return sum(counts[u:]) / math.comb(n1 + n2, n1)


@lru_cache(maxsize=None)
def _counts(m: int, n: int) -> tuple[int, ...]:
    """How many orderings of m values of one sample among n of the other have U = 0, 1, …, m·n
    (U: the pairs whose first-sample value is the larger). By the largest value: one of the m,
    above all n (U grows by n), or one of the n, above none of the m."""
    if m == 0 or n == 0:
        return (1,)
    counts = [0] * (m * n + 1)
    for k, c in enumerate(_counts(m, n - 1)):
        counts[k] += c
    for k, c in enumerate(_counts(m - 1, n)):
        counts[k + n] += c
    return tuple(counts)
