"""The round-trip model, on hand-made cell results (pure logic)."""

from accessbench.stats.cells import CellResult
from accessbench.store.model import Cell
from accessbench.stats.model import checks, predict


def cell(method, path, step="s", per_op_ns=None, trips=None, status="ok"):
    r = CellResult(Cell(**{"variant": "", "target": "postgresql", "method": method, "path": path, "step": step,
                    "step_index": 0, "status": status}), "ops")
    r.rate = object() if per_op_ns else None  # measured
    r.per_op_ns, r.round_trips_per_op = per_op_ns, trips
    return r


def test_prediction_adds_two_delays_per_round_trip_to_the_base_time():
    results = [cell("m", "tcp", per_op_ns=50_000), cell("m", "tcp+250us", per_op_ns=1_100_000, trips=2)]
    (p,) = predict(results, 1000)
    assert p.round_trips_per_op == 2 and p.predicted_ns == 50_000 + 2 * 2 * 1_000_000
    assert p.measured is None  # nothing was measured at 1 ms


def test_checks_compare_the_prediction_with_each_proxied_measurement():
    results = [cell("m", "tcp", per_op_ns=50_000), cell("m", "tcp+250us", per_op_ns=1_100_000, trips=2)]
    (p,) = checks(results)
    assert p.predicted_ns == 1_050_000 and p.measured.cell["path"] == "tcp+250us"
    assert round(p.error, 4) == round((1_050_000 - 1_100_000) / 1_100_000, 4)


def test_a_method_whose_round_trips_were_never_counted_is_not_predicted():
    assert predict([cell("m", "tcp", per_op_ns=50_000)], 250) == []
    mismatched = [cell("m", "tcp", per_op_ns=50_000), cell("m", "tcp+250us", per_op_ns=9, trips=1, status="mismatch")]
    assert predict(mismatched, 250) == []
