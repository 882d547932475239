"""Plan expansion and ordering, and the statistics (pure logic)."""

import numpy as np

from accessbench.methods import select
from accessbench.runner.plan import cells_by_step, count_executions, trial_order
from accessbench.stats.summary import bootstrap_median_ci, latency_percentiles, summarize
from accessbench.suite.loader import load


class FakeTarget:
    def __init__(self, name, dbms, paths, helps=frozenset()):
        self.name, self.dbms, self.paths, self.helps = name, dbms, paths, helps


def quick_groups(paths=None):
    targets = [FakeTarget("postgresql", "postgresql", ("unix", "tcp")), FakeTarget("sqlite", "sqlite", ("inproc",))]
    return cells_by_step(load("quick").variants[0], targets, paths, select(None))


def test_every_method_meets_every_path_of_every_target_it_reaches():
    first = quick_groups()[0]
    methods = select(None)
    on_postgres = {m.name for m in methods if "postgresql" in m.dbms}
    on_sqlite = {m.name for m in methods if "sqlite" in m.dbms}
    assert {(c.method, c.path) for c in first if c.target == "postgresql"} == {
        (m, p) for m in on_postgres for p in ("unix", "tcp")}
    assert {(c.method, c.path) for c in first if c.target == "sqlite"} == {(m, "inproc") for m in on_sqlite}
    assert len(first) == 2 * len(on_postgres) + len(on_sqlite)


def test_a_path_filter_keeps_only_those_paths():
    assert {c.path for c in quick_groups(["tcp"])[0]} == {"tcp"}


def test_a_step_that_names_its_paths_is_measured_on_those_of_the_run_only():
    targets = [FakeTarget("postgresql", "postgresql", ("unix", "tcp", "tcp+250us"))]
    steps = {s.name: s for s in load("s4-roundtrip").variants[0].steps}
    groups = cells_by_step(load("s4-roundtrip").variants[0], targets, ["unix", "tcp+0.25ms"], select(["c-libpq"]))
    paths = {g[0].step.name: {c.path for c in g} for g in groups if g}
    assert steps["select1-literal"].paths == ["unix", "tcp", "inproc"]
    assert paths["select1-literal"] == {"unix"}  # the slow path is not its own
    assert paths["select1-prepared"] == paths["procedure"] == {"unix", "tcp+0.25ms"}  # however the delay is written


def test_a_step_named_for_plain_tcp_or_a_transaction_pooler_is_not_measured_on_the_proxy_or_a_session_pooler():
    from accessbench.runner.plan import on_path

    step = next(s for s in load("connections").variants[0].steps if s.name == "persistent-prepared")
    assert step.paths == ["tcp", "pooler", "pgpool"]
    assert on_path(step, "tcp") and not on_path(step, "tcp+0us") and not on_path(step, "tcp+tls")
    assert on_path(step, "pooler:transaction") and not on_path(step, "pooler:session")


def connections_step(name, paths, methods=None):
    targets = [FakeTarget("postgresql", "postgresql", ("unix", "tcp"), frozenset({"pooler"}))]
    groups = cells_by_step(load("connections").variants[0], targets, paths, select(methods))
    return next(g for g in groups if g and g[0].step.name == name)


def test_a_step_whose_cells_fit_the_room_is_one_batch():
    from accessbench.runner.plan import Room, batches

    cells = connections_step("sel1-prepared", ["tcp", "pooler:session"])
    assert batches(cells, Room()) == [cells]
    assert batches(cells, Room(workers=len(cells))) == [cells]


def test_a_session_pooler_holds_no_more_workers_than_its_pool_and_twins_stay_in_one_batch():
    from accessbench.runner.plan import Room, batches

    cells = connections_step("sel1-prepared", ["tcp", "pooler:session"])
    lane = ("postgresql", "pooler:session")
    room = Room(lanes={lane: 3}, lane_of={lane: lane})
    parts = batches(cells, room)
    assert sorted(c.label for part in parts for c in part) == sorted(c.label for c in cells)  # every cell once
    assert all(sum(c.path == "pooler:session" for c in part) <= 3 for part in parts)
    assert len(parts) == -(-len(cells) // 6)  # three methods a batch, each on both paths
    for part in parts:  # a method's pooled cell is measured beside its plain twin
        assert {c.method for c in part if c.path == "tcp"} == {c.method for c in part if c.path != "tcp"}


def test_a_connect_step_leaves_room_for_the_connection_each_trial_opens():
    from accessbench.runner.plan import Room, batches

    cells = connections_step("connect", ["tcp"])
    room = Room(lanes={("server", "postgresql"): 4}, lane_of={("postgresql", "tcp"): ("server", "postgresql")})
    assert {len(part) for part in batches(cells, room)[:-1]} == {3}  # three kept, one opened by the trial


def test_a_loaded_step_counts_each_client_and_a_cell_too_big_for_the_room_is_a_batch_alone():
    from accessbench.runner.plan import Room, batches

    cells = connections_step("persistent", ["tcp"])  # 10 clients
    assert [len(p) for p in batches(cells[:3], Room(workers=25))] == [2, 1]
    assert [len(p) for p in batches(cells[:3], Room(workers=5))] == [1, 1, 1]


def test_trials_are_interleaved_across_cells_after_the_warmups():
    cells = quick_groups()[0][:3]
    order = [(c.method + c.path, phase, seq) for c, phase, seq in trial_order(cells, warmup=1, trials=2)]
    names = [c.method + c.path for c in cells]
    assert order == [(n, "warmup", 0) for n in names] + [(n, "trial", 0) for n in names] + [(n, "trial", 1) for n in names]


def test_execution_count_includes_verification_warmup_and_trials():
    groups = quick_groups()
    assert count_executions(groups, 1, 5) == sum(len(g) for g in groups) * 7


def test_summary_reports_median_min_mean_and_sd():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert (s.median, s.min, s.max, s.n) == (3.0, 1.0, 100.0, 5)
    assert s.mean == 22.0 and s.sd > 0 and s.cv > 1


def test_bootstrap_interval_contains_the_median_and_is_reproducible():
    values = np.random.default_rng(1).normal(100, 5, 30)
    low, high = bootstrap_median_ci(values)
    assert low <= np.median(values) <= high
    assert (low, high) == bootstrap_median_ci(values)
    assert bootstrap_median_ci([7.0]) == (7.0, 7.0)


def test_latency_percentiles_are_exact_and_include_the_maximum():
    lat = np.arange(1, 1001, dtype=np.uint64)
    p = latency_percentiles(lat)
    assert p[50.0] == 500.5 and p[100.0] == 1000.0 and 990 <= p[99.0] <= 991


def test_durations_pick_their_unit_after_rounding():
    from accessbench.formatting import duration

    assert duration(999_700_000) == "1 s"
    assert duration(20_100) == "20.1 µs"
    assert duration(512) == "512 ns"
    assert duration(None) == "—"


def test_a_method_that_holds_more_than_one_connection_is_counted_so():
    from accessbench.runner.plan import Room, batches

    cells = connections_step("sel1-prepared", ["pooler:session"],
                             ["py-psycopg", "rust-seaorm+sqlx", "php-apache-pgsql"])
    lane = ("postgresql", "pooler:session")
    room = Room(lanes={lane: 10}, lane_of={lane: lane}, connections={"rust-seaorm+sqlx": 2},
                app_servers={"php-apache-pgsql": 10})
    assert sorted(room.held(c) for c in cells) == [1, 2, 10]
    assert sorted(len(p) for p in batches(cells, room)) == [1, 2]  # the app server's ten fill the pool alone


def test_a_runtime_that_drives_its_clients_in_one_process_holds_one_and_opens_the_rest_in_its_trial():
    from accessbench.runner.plan import Room, batches

    cells = connections_step("persistent", ["tcp"], ["py-psycopg", "c-libpq"])  # 10 clients each
    libpq = next(c for c in cells if c.method == "c-libpq")
    room = Room(workers=5, threaded={"c-libpq"})
    assert (room.processes(libpq), room.held(libpq), room.opened(libpq)) == (1, 1, 10)
    lane = ("server", "postgresql")
    assert [len(p) for p in batches(cells, Room(lanes={lane: 12}, lane_of={("postgresql", "tcp"): lane},
                                                threaded={"c-libpq"}))] == [1, 1]  # 10 kept + 1 + 10 opened > 12
    assert [len(p) for p in batches(cells, Room(lanes={lane: 21}, lane_of={("postgresql", "tcp"): lane},
                                                threaded={"c-libpq"}))] == [2]
