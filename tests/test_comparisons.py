"""Verdicts, warnings and views over trials (pure logic on made-up trials)."""

import numpy as np
import pytest

from accessbench.stats.cells import CellResult
from accessbench.store.model import Cell
from accessbench.stats.compare import Change, axis_change, compare, pair_runs, pair_with_base, smallest_p
from accessbench.stats.drift import step_shifts
from accessbench.stats.stability import flags, outliers, trials_needed
from accessbench.stats.summary import summarize
from accessbench.stats.views import VIEWS


def cell(rates, method="a", target="postgresql", path="tcp", step="sel1", status="ok", elapsed_ms=50.0, n=1000):
    """A measured cell whose trials did ``n`` ops at the given rates (ops/s)."""
    rates = np.asarray(rates, dtype=float)
    r = CellResult(Cell(**{"method": method, "target": target, "path": path, "step": step, "step_index": 0,
                    "variant": "", "status": status, "kind": "exec", "mode": "prepared"}), "ops")
    r.rates = rates
    r.rate = summarize(rates)
    r.unit_ns = summarize(1e9 / rates)
    r.shortest_trial_ns = elapsed_ms * 1e6
    return r


def test_a_clear_difference_is_significant_and_reads_as_times_faster_with_its_interval():
    fast, slow = cell([200, 202, 199, 201, 198]), cell([100, 101, 99, 102, 100])
    c = compare(fast, slow)
    assert c.significant and c.p_value < 0.05
    assert c.ci_low > 1.03 and c.ci_low <= c.ratio <= c.ci_high
    assert c.verdict.startswith("2.00× faster [") and c.verdict.endswith("]")
    assert compare(slow, fast).verdict.startswith("2.00× slower [")


def test_a_difference_inside_the_noise_threshold_is_not_significant_even_when_the_test_rejects():
    a, b = cell([101.0, 101.1, 101.2, 101.3, 101.4]), cell([100.0, 100.1, 100.2, 100.3, 100.4])
    c = compare(a, b)
    assert c.p_value < 0.05
    assert not c.significant and c.verdict == "no significant difference"
    assert "within 3%" in c.reason


def test_one_trial_gives_no_interval_and_never_a_significant_difference_however_many_the_other_has():
    one, many = cell([300.0]), cell([100.0 + i % 3 for i in range(60)])  # 2 / 61: the test alone would reject
    c = compare(one, many)
    assert not c.bounded and not c.significant
    assert c.interval(lambda v: f"{v:.2f}") == "(no CI: 1 vs 60 trials)"
    assert c.reason == "1 vs 60 trials: a ratio's CI needs two trials a side; run more trials"
    assert compare(cell([3.0, 3.1]), many).interval(lambda v: f"{v:.2f}").startswith("[")
    # nor does the cell's own median: one trial's bootstrap is that trial, an interval of no width
    assert (one.rate.ci_low, one.rate.ci_high, one.half_width) == (None, None, None)
    assert VIEWS["median"].spread(one) is None and VIEWS["per1000"].spread(one) is None
    assert VIEWS["median"].spread(many) is not None


def test_three_trials_a_side_can_never_be_significant_and_the_reason_says_so():
    c = compare(cell([300, 301, 302]), cell([100, 101, 102]))
    assert smallest_p(3, 3) == pytest.approx(0.1)
    assert not c.significant
    assert "3 vs 3 trials" in c.reason


def test_overlapping_noisy_trials_are_no_significant_difference():
    rng = np.random.default_rng(3)
    c = compare(cell(rng.normal(100, 10, 5)), cell(rng.normal(100, 10, 5)))
    assert not c.significant


def test_the_noise_threshold_and_level_are_settings():
    a, b = cell([110, 111, 112, 113, 114]), cell([100, 101, 102, 103, 104])
    assert compare(a, b).significant
    assert not compare(a, b, noise=0.15).significant
    assert not compare(a, b, alpha=0.001).significant


def test_a_cell_whose_spread_exceeds_ten_percent_is_flagged_unstable():
    kinds = {f.kind for f in flags(cell([100, 130, 80, 120, 70]))}
    assert "unstable" in kinds
    assert "unstable" not in {f.kind for f in flags(cell([100, 101, 99, 100, 100]))}


def test_trials_under_a_few_milliseconds_are_flagged_short():
    assert "short" in {f.kind for f in flags(cell([100, 101, 99, 100, 100], elapsed_ms=0.5))}
    assert "short" not in {f.kind for f in flags(cell([100, 101, 99, 100, 100], elapsed_ms=50))}


def test_too_few_trials_for_the_spread_are_flagged_with_how_many_would_do():
    noisy = [f for f in flags(cell([100, 106, 94, 103, 97])) if f.kind == "few"]
    assert noisy and noisy[0].trials_needed == trials_needed(summarize([100, 106, 94, 103, 97]).cv, 0.03)
    assert [f.kind for f in flags(cell([100, 100.5, 99.5]))] == ["few"]  # 3 trials: no test can decide
    assert not flags(cell([100, 100.5, 99.5, 100.2, 99.8]))


def test_outliers_are_flagged_and_kept():
    rates = [100, 101, 99, 100, 100.5, 40]
    assert outliers(np.array(rates)) == [5]
    r = cell(rates)
    assert r.rate.n == 6 and r.rate.min == 40  # still counted
    assert any(f.kind == "outlier" and "trial 6" in f.text for f in flags(r))


def test_the_study_views_take_best_mean_and_per_thousand_from_the_same_trials():
    r = cell([100, 200, 400])
    assert VIEWS["median"].value(r) == 200
    assert VIEWS["best"].value(r) == 400
    assert VIEWS["mean"].value(r) == pytest.approx(np.mean([1e7, 5e6, 2.5e6]))
    assert VIEWS["mean"].spread(r) == (pytest.approx(2.5e6), pytest.approx(1e7))
    assert VIEWS["per1000"].value(r) == pytest.approx(5.0)


def test_views_rank_the_better_cell_first_whichever_way_better_points():
    slow, fast = cell([100, 100, 100], method="slow"), cell([200, 200, 200], method="fast")
    mismatched = cell([900, 900, 900], method="wrong", status="mismatch")
    for view in VIEWS.values():
        assert [r.cell["method"] for r in view.rank([slow, mismatched, fast])] == ["fast", "slow", "wrong"]
        assert view.times_behind(slow, fast) == pytest.approx(2.0)


def test_runs_pair_by_step_method_target_and_path_and_report_the_rest():
    run_a = [cell([100] * 5, method="x"), cell([100] * 5, method="y"), cell([100] * 5, method="z", status="mismatch")]
    run_b = [cell([110] * 5, method="x"), cell([100] * 5, method="y", path="unix"), cell([100] * 5, method="z")]
    pairs, alone = pair_runs(run_a, run_b)
    assert [(p.reference.cell["method"], p.candidate.cell["method"]) for p in pairs] == [("x", "x")]
    assert pairs[0].r_percent == pytest.approx(100 / 1.1) and pairs[0].diff_ns < 0
    assert {(r.cell["method"], r.cell["path"]) for r in alone} == {("y", "unix"), ("z", "tcp"), ("y", "tcp")}


def test_two_runs_of_one_path_each_are_paired_across_the_path_when_it_is_what_changed():
    near = [cell([1000] * 5, method="x"), cell([1000] * 5, method="y")]
    far = [cell([100] * 5, method="x", path="tcp+250us"), cell([1000] * 5, method="y", path="tcp+250us")]
    assert axis_change(near, far) == Change("path", "tcp", "tcp+250us")
    assert pair_runs(near, far)[0] == []  # by path, nothing matches
    pairs, alone = pair_runs(near, far, across="path")
    assert [(p.candidate.cell["method"], p.comparison.significant) for p in pairs] == [("x", True), ("y", False)]
    assert alone == []
    assert axis_change(near, near) is None
    assert axis_change(near, far + [cell([1] * 5, method="x", path="unix")]) is None  # B has two paths


def test_every_method_is_compared_with_the_first_base_that_has_a_cell_in_its_place():
    results = [cell([100] * 5, method="c-libpq"), cell([50] * 5, method="py"),
               cell([300] * 5, method="c-sqlite", target="sqlite", path="inproc"),
               cell([150] * 5, method="py", target="sqlite", path="inproc"),
               cell([10] * 5, method="py", target="other", path="tcp")]
    pairs, without = pair_with_base(results, ["c-libpq", "c-sqlite"])
    assert [(p.reference.cell["method"], p.candidate.where) for p in pairs] == [
        ("c-libpq", "postgresql/tcp"), ("c-sqlite", "sqlite/inproc")]
    assert all(p.r_percent == pytest.approx(200) for p in pairs)
    assert without == [("other", "tcp")]


def test_cpu_per_operation_is_shown_only_where_every_trial_measured_ten_ticks_or_more():
    from accessbench.stats.cells import _cpu_per_op

    assert _cpu_per_op([(40_000_000, 1000), (50_000_000, 1000)], 1_000) == (45_000.0, None)
    value, why = _cpu_per_op([(0, 1000), (10_000_000, 1000)], 10_000_000)  # a 10 ms tick reads 0 or 10 ms
    assert value is None and "under 10× its clock's resolution (10 ms)" in why
    assert _cpu_per_op([], 1_000) == (None, None)  # nothing read: no figure, and nothing to explain


def test_the_drift_floor_is_the_cells_own_scatter_between_runs_when_it_exceeds_the_noise():
    from accessbench.stats import drift

    rng = np.random.default_rng(1)
    ratios = list(np.exp(rng.normal(0.0, 0.05, 400)))  # cells scattered by 5% between two runs
    found = drift.estimate(ratios, noise=0.03)
    assert 0.08 < found.floor < 0.12  # 1.96 × 5%, as a relative change
    assert drift.estimate([1.0] * 400, noise=0.03).floor == 0.03  # no scatter: the noise threshold
    assert drift.estimate(ratios[:3], noise=0.03).spread is None  # three cells say nothing of a spread


def test_a_hosts_calibrated_drift_raises_the_floor_and_is_named():
    from accessbench.stats import drift

    found = drift.estimate([1.0] * 50, noise=0.03, host_floor=0.12, host_cells=700)
    assert found.floor == 0.12 and "calibrated run-to-run drift ±12.0% (from 700 cells" in found.sources
    assert abs(drift.calibration([1.1] * 96 + [1.3] * 4) - 0.1) < 1e-9  # the 95th percentile of |ratio − 1|


def test_steps_that_moved_as_a_whole_are_told_apart_from_the_cells_scatter_around_them():
    rng = np.random.default_rng(7)
    by_step = {("v", i, "sqlite"): list(shift * np.exp(rng.normal(0, 0.02, 12)))
               for i, shift in enumerate((0.7, 1.0, 1.5))}
    found = step_shifts(by_step)
    assert -0.33 < found.low < -0.27 and 0.45 < found.high < 0.55
    assert 0.02 < found.within < 0.06  # 1.96 × the cells' own 2% around their step
    assert step_shifts({("v", 0, "sqlite"): [1.0] * 12}) is None  # one step says nothing of steps


def test_two_runs_of_one_server_version_each_are_paired_across_the_target_when_it_is_what_changed():
    sixteen = [cell([1000] * 5, method="x", target="postgresql@16"), cell([1000] * 5, method="y", target="postgresql@16")]
    eighteen = [cell([500] * 5, method="x", target="postgresql@18"), cell([1000] * 5, method="y", target="postgresql@18")]
    change = axis_change(sixteen, eighteen)
    assert (change.axis, change.reference, change.candidate) == ("target", "postgresql@16", "postgresql@18")
    assert pair_runs(sixteen, eighteen)[0] == []  # by target, nothing matches
    pairs, alone = pair_runs(sixteen, eighteen, across=change.axis)
    assert [(p.candidate.cell["method"], p.comparison.significant) for p in pairs] == [("x", True), ("y", False)]
    assert alone == []
    moved_both = [cell([500] * 5, method="x", target="postgresql@18", path="unix")]
    assert axis_change(sixteen, moved_both) is None  # the path changed too: no one axis to match across
