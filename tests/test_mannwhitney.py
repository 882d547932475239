"""The Mann-Whitney p-value accessbench computes (stats/mannwhitney.py) is scipy's, case by case:
exact without ties on small samples, the normal approximation with its corrections otherwise."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from accessbench.stats.mannwhitney import _counts, mann_whitney_p


def test_the_exact_counts_of_u_cover_every_ordering_and_are_symmetric():
    for m, n in [(1, 1), (3, 4), (5, 7), (8, 8), (2, 30)]:
        counts = _counts(m, n)
        assert sum(counts) == math.comb(m + n, m) and counts == counts[::-1] and counts == _counts(n, m)


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "tied"])
def test_the_p_value_is_scipys_for_samples_small_and_large_apart_or_alike(ties):
    rng = random.Random(11 + ties)
    for _ in range(1500):
        n1, n2 = rng.choice([1, 2, 3, 5, 8, 9, 12, 30]), rng.choice([1, 2, 4, 8, 9, 20, 41])
        draw = (lambda: float(rng.randint(1, 4))) if ties else rng.random
        shift = rng.choice([0.0, 0.2, 1.0])
        a, b = [draw() + shift for _ in range(n1)], [draw() for _ in range(n2)]
        want = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
        assert math.isclose(mann_whitney_p(a, b), want, rel_tol=1e-9, abs_tol=1e-15), (a, b)


def test_samples_of_one_value_throughout_are_not_different():
    assert mann_whitney_p([2.0, 2.0, 2.0], [2.0, 2.0]) == stats.mannwhitneyu([2.0] * 3, [2.0] * 2).pvalue == 1.0
