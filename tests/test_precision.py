"""The precision target: trials added to the cells whose median is not yet known to ±PCT, within
a time budget, up to a ceiling; and the trial counts a verdict needs (the rules on made-up
trials, then a real SQLite run)."""

from __future__ import annotations

import pytest

from accessbench.runner.precision import Precision, half_width
from accessbench.stats.cells import analyse
from accessbench.store import Store

from .conftest import accessbench

STEADY = [1000.0, 1000.5, 999.5, 1000.2, 999.8]
SCATTERED = [1000.0, 1300.0, 800.0, 1150.0, 900.0]


def test_only_the_cells_wider_than_the_target_and_under_their_ceiling_get_another_trial():
    precision = Precision(target=0.03, budget_s=60, max_trials=6)
    trials = {"steady": STEADY, "scattered": SCATTERED, "full": SCATTERED + [1000.0], "one": [1000.0]}
    assert half_width(STEADY) < 0.03 < half_width(SCATTERED)
    assert half_width([1000.0]) is None  # one trial has no interval, so it is not chased
    assert precision.wide(trials, lambda cell: True) == ["scattered"]
    assert precision.wide(trials, lambda cell: cell != "scattered") == []  # a cell that cannot run again


def test_the_budget_is_shared_among_the_steps_still_to_come():
    precision = Precision(target=0.03, budget_s=60, steps_left=3)
    assert precision.step_share() == pytest.approx(20)
    precision.spent_s, precision.steps_left = 50, 2
    assert precision.step_share() == pytest.approx(5)
    assert not Precision(target=0, budget_s=60).on and not Precision(target=0.03, budget_s=0).on


def test_rounds_stop_when_every_cell_is_within_the_target():
    precision = Precision(target=0.03, budget_s=60, steps_left=1)
    trials = {"a": list(SCATTERED)}
    rounds = 0
    for wide in precision.rounds(trials, lambda cell: True):
        rounds += 1
        for cell in wide:
            trials[cell].append(1000.0)  # each new trial lands on the median
    assert rounds > 0 and half_width(trials["a"]) <= 0.03 and precision.steps_left == 0
    assert len(trials["a"]) < precision.max_trials  # it stopped for the target, not at the ceiling


def test_zero_trials_is_an_input_error_that_says_what_a_cell_needs():
    result = accessbench("run", "--trials", "0")
    assert result.returncode == 2
    assert result.stderr.strip() == ("accessbench: run: argument --trials: a cell needs at least 1 trial "
                                     "(4 or more for a significance verdict) (see accessbench run --help)")


def test_a_run_with_a_target_out_of_reach_adds_trials_up_to_the_ceiling_and_says_which_cells_stayed_wide(tmp_path):
    store = str(tmp_path / "s.db")
    result = accessbench("--store", store, "run", "--full", "--quick", "--target", "sqlite", "--method", "py-sqlite3",
                         "--trials", "3", "--warmup", "0", "--precision", "0.01%", "--budget", "10min",
                         "--max-trials", "5", "--no-report", "--width", "200", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    said = " ".join(result.stdout.split())  # the terminal's lines, unwrapped
    assert "more (up to 5) where the CI is wider than ±0.01% within 10 min" in said
    assert "warning: with 3 trials per cell no difference can be called significant" in said
    with Store(store) as s:
        results = [r for r in analyse(s.load(s.resolve("last"))) if r.measured]
    assert results
    # ±0.01% is out of reach of a handful of trials: every cell gets its two extra trials
    assert {len(r.rates) for r in results} == {5}
    assert "not ranked with confidence" in said and "wider than the ±0.01% the run asked for" in said
