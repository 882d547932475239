"""Steps under load: several clients started together, by duration, open loop at a rate, and
connect-per-request — run for real against a managed PostgreSQL and SQLite files."""

from __future__ import annotations

import json

import pytest

from accessbench.protocol.histogram import EXACT, LIMIT, Histogram, index, lower, upper
from accessbench.protocol.schedule import Schedule, uniform_starts_within
from accessbench.store import Store
from accessbench.stats.cells import analyse

from .conftest import accessbench

SUITE = """
[suite]
name = "load-test"

[[tables]]
name = "t"
rows = 100
columns = [{{name = "a", type = "integer", gen = {{kind = "seq"}}}}]

{steps}
"""


LOOKUP = "SELECT a FROM t WHERE a = ?"


def step(name: str, sql: str = LOOKUP, mode: str = "prepared", params: str = '{kind = "uniform", lo = 1, hi = 100}',
         iterations: int = 100, **load) -> str:
    """One exec step in TOML, with its load settings (clients, duration, rate, …)."""
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in load.items())
    return (f'[[steps]]\nname = "{name}"\nkind = "exec"\nmode = "{mode}"\nsql = "{sql}"\n'
            f"params = [{params}]\niterations = {iterations}\n{extra}\n")


def run_suite(tmp_path, workdir, steps: str, *args: str, status: int = 0):
    suite = tmp_path / "load.toml"
    suite.write_text(SUITE.format(steps=steps))
    store = str(tmp_path / "s.db")
    # fixed trials: what these tests count and read is the load's shape, not a precise figure
    result = accessbench("--store", store, "run", "--full", "--suite", str(suite), "--no-report", "--workdir", workdir,
                         "--precision", "0", *args)
    assert result.returncode == status, result.stderr[-3000:]
    with Store(store) as s:
        return s.load(s.resolve("last")), result


def test_the_histogram_keeps_every_value_within_one_percent_of_its_bucket():
    for value in (0, 1, 255, 256, 257, 1000, 123_456, 10**9, LIMIT - 1):
        b = index(value)
        assert lower(b) <= value < upper(b)
        if value >= EXACT:
            assert (upper(b) - lower(b)) / lower(b) <= 0.01
    assert [index(v) for v in (255, 256, 511, 512)] == [255, 256, 383, 384]  # contiguous


def test_histograms_merge_and_count_the_overflow():
    a, b = Histogram(), Histogram()
    for v in range(1, 1001):
        a.record(v * 1000)
    b.record(LIMIT + 5)
    a.merge(b)
    assert a.n == 1001 and a.overflow == 1 and a.max == LIMIT + 5
    assert abs(a.percentile(50) - 500_000) / 500_000 < 0.01
    assert Histogram.from_json(json.loads(json.dumps(a.to_json()))).to_json() == a.to_json()


def test_poisson_arrivals_average_the_rate_and_are_the_same_for_the_same_seed():
    s = Schedule(1000.0, "poisson", seed=7)
    offsets = [s.next() for _ in range(20000)]
    assert offsets[0] == 0 and offsets == sorted(offsets)
    assert abs(offsets[-1] / len(offsets) - 1e6) / 1e6 < 0.03
    again = Schedule(1000.0, "poisson", seed=7)
    assert [again.next() for _ in range(100)] == offsets[:100]
    uniform = Schedule(500.0, "uniform")
    assert [uniform.next() for _ in range(3)] == [0, 2_000_000, 4_000_000]


def test_several_python_clients_run_in_one_process_each_and_their_answers_merge(tmp_path, workdir):
    steps = step("four-clients", clients=4, duration="300ms")
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "sqlite", "--method", "py-sqlite3", "--trials", "2",
                       "--warmup", "0")  # it counts the trials (run_suite keeps them fixed: --precision 0)
    cell = run.cells[0]
    assert cell["status"] == "ok" and cell["clients"] == 4
    for trial in run.trials[cell["id"]]:
        per_client = trial["per_client"]
        assert trial["processes"] == 4 and len(per_client) == 4
        assert trial["n"] == sum(c["n"] for c in per_client) and trial["n"] > 100  # cycled through its parameters
        assert trial["latencies"] is None and Histogram.from_json(trial["histogram"]).n == trial["n"]
    (result,) = analyse(run)
    assert result.percentiles[50.0] > 0 and result.percentiles[100.0] >= result.percentiles[99.0]
    assert len(result.per_client_rates) == 8  # 4 clients × 2 trials, each its own rate


@pytest.mark.server
def test_open_loop_latency_includes_the_queueing_behind_a_stalled_server(tmp_path, workdir):
    """200 requests/s at a server that takes 10 ms each (100/s at most): every request waits
    behind the ones before it. Measured from the intended start, latency grows far past the
    10 ms of service; a closed loop on the same statement only ever sees the service time."""
    sleeper = dict(sql="SELECT pg_sleep(0.01) FROM t WHERE a = ?", mode="extended", params='{kind = "const", value = 1}',
                   iterations=50)
    steps = step("closed", **sleeper) + step("open", **sleeper, duration="1s", rate="200/s", arrival="uniform")
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "postgresql", "--path", "unix", "--method", "py-psycopg",
                       "--trials", "1", "--warmup", "0")
    closed, open_ = (r for r in analyse(run))
    assert closed.cell["status"] == open_.cell["status"] == "ok"
    service = closed.percentiles[50.0]
    assert service >= 10_000_000  # pg_sleep(0.01) at least
    trial = run.trials[open_.cell["id"]][0]
    # One client, an arrival every 5 ms, each operation at least 10 ms: operation k (from 0) is
    # meant to start at 5k ms and cannot end before 10(k + 1) ms, so its latency is at least
    # 5k + 10 ms whatever the machine's speed. At most i operations are below 5i + 10 ms, which
    # bounds the median and the maximum from below (less 1%, the histogram's bucket width).
    n = trial["n"]
    assert open_.percentiles[50.0] >= 0.99 * (5 * (n // 2) + 10) * 1e6
    assert open_.percentiles[100.0] >= 0.99 * (5 * (n - 1) + 10) * 1e6
    assert trial["late"] > 0 and trial["n"] < 200
    # behind schedule when the second ends: the arrivals it never started count as skipped
    assert trial["n"] + trial["skipped"] == 200 and trial["skipped"] > 0
    assert open_.late_share == trial["late"] / trial["n"] and closed.late_share is None


@pytest.mark.server
def test_connect_per_request_opens_a_connection_inside_every_operation(tmp_path, workdir, postgres):
    """The server counts the sessions: per request, every operation of every trial is one login
    (the warm-up and the verification pass log in too, so at least that many)."""
    load = dict(clients=2, duration="300ms")
    steps = step("persistent", **load) + step("per-request", **load, policy="per-request")
    methods = ("py-psycopg", "py-psycopg2", "py-pg8000", "py-asyncpg")
    url = f"postgresql://accessbench:{postgres.password}@127.0.0.1:{postgres.port}/accessbench"

    def sessions() -> int:
        return postgres.query("SELECT sessions FROM pg_stat_database WHERE datname = 'accessbench'")[0][0]

    before = sessions()
    run, _ = run_suite(tmp_path, workdir, steps, "--target", url, "--method", ",".join(methods),
                       "--trials", "2", "--warmup", "0")
    opened = sessions() - before
    results = analyse(run)
    assert all(r.cell["status"] == "ok" for r in results), [(r.label, r.cell["message"]) for r in results]
    per_request = [r for r in results if r.cell["step"] == "per-request"]
    assert sorted(r.cell["method"] for r in per_request) == sorted(methods)
    assert all(r.cell["policy"] == "per-request" for r in per_request)
    operations = sum(t["n"] for r in per_request for t in run.trials[r.cell["id"]])
    assert operations > 0 and opened >= operations, (opened, operations)


def test_a_policy_a_worker_has_not_built_is_shown_unsupported_not_run_some_other_way(tmp_path, workdir):
    from accessbench.methods import select

    if select(["c-sqlite"])[0].missing():
        pytest.skip("c-sqlite is not built here")
    steps = step("pooled", params='{kind = "const", value = 1}', iterations=10, clients=2, policy="pooled")
    # its only cell is unsupported: nothing measured, a failed run (exit status 1)
    run, result = run_suite(tmp_path, workdir, steps, "--target", "sqlite", "--method", "c-sqlite", "--trials", "1",
                            status=1)
    assert run.cells[0]["status"] == "unsupported"
    assert "no pooled connection policy" in run.cells[0]["message"]
    assert run.run["status"] == "failed"


@pytest.mark.server
def test_pgbouncer_sits_between_clients_and_server_in_either_pool_mode(tmp_path, workdir):
    # extended: unnamed statements, which transaction pooling can serve (named ones it cannot follow)
    steps = (step("persistent", mode="extended", clients=2, duration="300ms")
             + step("per-request", mode="extended", clients=2, duration="300ms", policy="per-request"))
    # (py-pg8000 is left out: it parses, syncs, then binds, and transaction pooling may hand the
    # bind to another server connection — a real incompatibility, shown as an error in runs;
    # psycopg2 has no extended mode)
    run, result = run_suite(tmp_path, workdir, steps, "--target", "postgresql", "--path", "pooler,pooler:session",
                            "--method", "py-psycopg", "--trials", "1", "--warmup", "0")
    results = analyse(run)
    assert {r.cell["path"] for r in results} == {"pooler", "pooler:session"}
    assert all(r.cell["status"] == "ok" for r in results), [(r.label, r.cell["message"]) for r in results]
    (target,) = run.targets
    assert "pool_mode=transaction" in target["settings"]["pooler"] and "pool_mode=session" in target["settings"]["pooler"]
    # the backend pid a client is told comes from PgBouncer: the whole server's CPU is read, and said to be
    assert all(r.server_cpu_per_op_ns is not None and "whole server" in r.server_cpu_note for r in results)
    assert "pooler (postgresql): PgBouncer 1." in " ".join(result.stdout.split())  # what stood in between


@pytest.mark.server
@pytest.mark.parametrize("path", ["pooler:session", "pgpool"])
def test_more_workers_than_a_pooler_serves_at_once_are_measured_in_batches_it_serves(tmp_path, workdir,
                                                                                     monkeypatch, path):
    from accessbench.methods import select
    from accessbench.runner.run import RunOptions, Runner
    from accessbench.suite.loader import parse
    from accessbench.targets import make

    # pools of two: a third worker's connection would wait for one of the first two to leave,
    # and they stay open for the step (without batches its open times out after --timeout)
    monkeypatch.setattr("accessbench.paths.pooler.POOL_SIZE", 2)
    monkeypatch.setattr("accessbench.paths.pgpool.CHILDREN", 2)
    suite = parse(SUITE.format(steps=step("get", mode="literal") + step("again", mode="literal")), "pools.toml")
    methods = select(["py-psycopg", "py-psycopg2", "py-pg8000"])
    store = Store(str(tmp_path / "s.db"))
    options = RunOptions(trials=2, warmup=1, workdir=workdir, timeout=20, allow_idle_halt=True)
    with store:
        run = store.load(Runner(suite, [make("postgresql")], [path], methods, store, options).run())
    assert run.run["status"] == "complete"
    assert [(c["method"], c["status"]) for c in run.cells if c["status"] != "ok"] == []
    assert len(run.cells) == 6 and all(len(run.trials[c["id"]]) == 2 for c in run.cells)
    assert run.run["environment"]["room"]["connections"][f"postgresql/{path}"] == 2


@pytest.mark.server
def test_a_cell_that_fails_through_a_pooler_carries_the_poolers_own_words(tmp_path, workdir):
    # ADBC reads every result by COPY ... TO STDOUT sent by the extended protocol, on which
    # Debian 12's pgpool-II 4.3.5 loses its child process: the driver sees only a closed connection
    run, _ = run_suite(tmp_path, workdir, step("get", mode="extended"), "--target", "postgresql", "--path", "pgpool",
                       "--method", "py-adbc", "--trials", "1", "--warmup", "0", status=1)
    (cell,) = run.cells
    assert cell["status"] == "error" and "server closed the connection" in cell["message"]
    assert "pgpool-II's log: child process with pid" in cell["message"]
    assert "terminated by segmentation fault" in cell["message"]


def test_an_unknown_pooler_mode_is_refused_naming_the_path(tmp_path):
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--quick", "--path", "pooler:statement")
    assert result.returncode == 2 and "--path pooler:statement" in result.stderr


@pytest.mark.server
def test_a_plain_step_after_a_loaded_one_still_reads_the_servers_cpu(tmp_path, workdir):
    """In-process clients open connections of their own during a loaded trial, whose backends the
    runner cannot name: it reads the whole server's CPU for that trial, and says so; those
    backends end with it and must not cost the worker's later cells their own backend's CPU."""
    from accessbench.methods import select

    if select(["c-libpq"])[0].missing():
        pytest.skip("c-libpq is not built here")
    steps = step("loaded", clients=3, duration="200ms") + step("plain")
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "postgresql", "--path", "unix", "--method", "c-libpq",
                       "--trials", "2", "--warmup", "0")
    loaded, plain = analyse(run)
    assert loaded.cell["status"] == plain.cell["status"] == "ok"
    assert loaded.server_cpu_per_op_ns > 0 and "whole server" in loaded.server_cpu_note  # not undercounted
    assert plain.server_cpu_per_op_ns > 0 and not plain.server_cpu_note  # its own backend's


@pytest.mark.server
def test_python_drivers_borrow_from_their_own_pools(tmp_path, workdir):
    steps = (step("pooled", mode="extended", clients=2, duration="300ms", policy="pooled", pool_size=2)
             + step("pooled-prepared", clients=2, duration="300ms", policy="pooled"))
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "postgresql", "--path", "unix", "--method",
                       "py-psycopg,py-asyncpg", "--trials", "2", "--warmup", "0")
    results = analyse(run)
    assert all(r.cell["status"] == "ok" and r.cell["policy"] == "pooled" for r in results), \
        [(r.label, r.cell["message"]) for r in results]
    pooled = {m["method"]: m["settings"]["pooled"] for m in run.methods}
    assert "psycopg_pool" in pooled["py-psycopg"] and "create_pool" in pooled["py-asyncpg"]


def test_uniform_arrivals_of_one_client_processes_interleave_and_the_trial_lasts_its_duration(tmp_path, workdir):
    """Two py-sqlite3 processes at 400/s in all: process 1's stream starts 2.5 ms after
    process 0's (arrivals dealt in turn, not two at once), so 501 ms holds 101 + 100 intended
    starts — 202 if both started at 0 — and no operation starts after the duration."""
    steps = step("open", clients=2, duration="501ms", rate="400/s", arrival="uniform")
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "sqlite", "--method", "py-sqlite3", "--trials", "2",
                       "--warmup", "0")
    want = uniform_starts_within(400.0, 2, 501_000_000)
    assert want == 201
    for trial in run.trials[run.cells[0]["id"]]:
        assert trial["processes"] == 2 and trial["n"] + trial["skipped"] == want
        assert all(c["elapsed_ns"] >= 501_000_000 for c in trial["per_client"])


@pytest.mark.server
def test_asyncpg_clients_are_tasks_on_one_event_loop_each_with_its_own_connection(tmp_path, workdir):
    load = dict(clients=3, duration="300ms")
    steps = step("persistent", **load) + step("per-request", **load, policy="per-request")
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "postgresql", "--path", "unix", "--method", "py-asyncpg",
                       "--trials", "2", "--warmup", "0")
    (method,) = run.methods
    assert method["capabilities"]["concurrency"].startswith("async tasks")
    for cell in run.cells:
        assert cell["status"] == "ok", cell["message"]
        for trial in run.trials[cell["id"]]:
            per_client = trial["per_client"]
            assert trial["processes"] == 1 and len(per_client) == 3 and all(c["n"] > 0 for c in per_client)


def test_a_step_sweeping_clients_is_drawn_as_curves_across_its_steps(tmp_path, workdir):
    from accessbench.report.html import render_html

    steps = step("get-c${clients}", duration="300ms", clients="${clients}").replace(
        "\n\n", '\nvary = { clients = [1, 2] }\n\n', 1)
    run, _ = run_suite(tmp_path, workdir, steps, "--target", "sqlite", "--method", "py-sqlite3", "--trials", "2",
                       "--warmup", "0")
    assert [c["sweep"] for c in run.cells] == ["get-c${clients}"] * 2
    html = render_html(run)
    chart = html[html.index('data-chart="throughput-clients"'):]
    chart = chart[:chart.index("</svg>")]
    rates = [r.rate.median for r in sorted(analyse(run), key=lambda r: r.cell["clients"])]
    markers = [m for m in chart.split('<circle class="marker"')[1:]]
    assert len(markers) == 2  # one curve: py-sqlite3 on sqlite/inproc, a point per step
    assert [float(m.split('data-value="')[1].split('"')[0]) for m in markers] == rates
    assert 'data-chart="latency-throughput"' in html
