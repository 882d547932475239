"""The quick suite's kinds of step at --quick size, end to end, on a managed PostgreSQL, a managed MariaDB and
SQLite with every default method: verification, storage, and reports read back from the store."""

from __future__ import annotations

import glob
import sqlite3
from collections import defaultdict

import pytest

from accessbench.methods import select
from accessbench.store import Store

from .conftest import QUICK_STEPS, accessbench

pytestmark = pytest.mark.server

# What each driver cannot do, as it says itself.
EXPECTED_UNSUPPORTED = {("py-psycopg2", "sel1-extended"), ("py-asyncpg", "sel1-literal")}
# ADBC's PostgreSQL driver reports -1 rows changed, so its writing statements there are unsupported
# (its batches count the rows they send).
WRITES_UNCOUNTED = {("py-adbc", "postgresql")}
# Readers that keep no connection (each read connects): no backend of theirs to read the CPU of.
KEEP_NO_CONNECTION = {"py-connectorx"}


def writes(step_name: str) -> bool:
    from accessbench.suite.loader import load

    step = next(s for s in load("quick", quick=True).variants[0].steps if s.name == step_name)
    return step.writes or step.kind == "batch"


def odbc_logs() -> set[str]:
    return set(glob.glob("/tmp/psqlodbc_*"))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    store = str(tmp_path_factory.mktemp("store") / "results.db")
    logs_before = odbc_logs()
    # one warm-up even for JIT runtimes: what these tests read is the run's shape, not warm figures
    # (test_warmup.py holds the JIT warm-up to its rule); one path per target, TCP for a server
    # (conformance runs every method on each of its paths)
    result = accessbench("--store", store, "run", "--full", "--quick", "--step", QUICK_STEPS, "--path", "inproc,tcp",
                         "--trials", "2", "--precision", "0", "--max-warmup", "1")
    assert result.returncode == 0, result.stderr[-3000:]
    with Store(store) as s:
        run = s.load(s.resolve("last"))
    run.new_odbc_logs = odbc_logs() - logs_before
    return store, result, run


def test_a_run_leaves_no_driver_logs_behind(quick_run):
    _, _, run = quick_run
    assert not run.new_odbc_logs


def available_defaults() -> set[str]:
    return {m.name for m in select(None) if not m.missing()}


def test_the_run_completes_and_is_stored(quick_run):
    _, _, run = quick_run
    assert run.run["status"] == "complete"
    assert {t["target"] for t in run.targets} == {"postgresql", "mariadb", "sqlite", "duckdb"}
    assert {m["method"] for m in run.methods} == available_defaults()
    assert {"py-sqlite3", "py-psycopg", "py-psycopg2", "py-asyncpg", "py-pg8000"} <= available_defaults()


def test_every_cell_is_verified_except_the_modes_a_driver_cannot_do(quick_run):
    _, _, run = quick_run
    caps = {m["method"]: m["capabilities"] for m in run.methods}
    for c in run.cells:
        method, step, status = c["method"], c["step"], c["status"]
        # a mode or kind the method does not list is never run some other way; DuckDB's
        # workers read its file read-only, so it refuses the steps that write
        cannot = ((method, step) in EXPECTED_UNSUPPORTED or (c["mode"] and c["mode"] not in caps[method]["modes"])
                  or c["kind"] not in caps[method]["kinds"]
                  or writes(step) and (c["target"] == "duckdb"
                                       or c["kind"] == "exec" and (method, c["target"]) in WRITES_UNCOUNTED))
        assert status == ("unsupported" if cannot else "ok"), (method, c["target"], step, status, c["message"])


def test_every_method_on_a_target_reads_and_writes_the_same_data(quick_run):
    _, _, run = quick_run
    seen = defaultdict(set)
    for c in run.cells:
        if c["status"] == "ok":
            seen[(c["target"], c["step"])].add((c["verify_rows"], c["checksum"], c["check_checksum"]))
    assert seen and all(len(keys) == 1 for keys in seen.values()), {k: v for k, v in seen.items() if len(v) > 1}
    postgres_methods = {c["method"] for c in run.cells if c["target"] == "postgresql" and c["step"] == "scan-6k"}
    assert postgres_methods == {m.name for m in select(None) if "postgresql" in m.dbms and not m.missing()}


def test_scans_read_every_row_and_every_value(quick_run):
    _, _, run = quick_run
    for c in run.cells:
        if c["step"] == "scan-6k" and c["status"] == "ok":
            assert c["verify_rows"] == 6071 and c["verify_values"] == 6071 * 7


def test_each_measured_cell_has_its_trials_with_latencies_and_cpu(quick_run):
    _, _, run = quick_run
    for c in run.cells:
        if c["status"] == "ok":
            trials = run.trials[c["id"]]
            assert len(trials) == 2
            assert all(t["elapsed_ns"] > 0 and t["user_ns"] is not None for t in trials)
            assert len(run.latencies(c["id"])) == sum(t["n"] for t in trials)


def test_the_printed_report_ranks_methods_and_shows_the_per_1000_table(quick_run):
    _, result, _ = quick_run
    assert "sel1-prepared" in result.stdout and "95% CI" in result.stdout
    assert "Seconds per 1,000 units" in result.stdout
    # the report fits its width: a long line wraps between words
    assert ("py-psycopg2 has no extended mode: psycopg2 interpolates parameters on the client"
            in " ".join(result.stdout.split()))


def test_show_prints_the_stored_report_again(quick_run):
    store, result, run = quick_run
    shown = accessbench("--store", store, "show", run.run["id"][:15], "--full")  # the run printed it whole (--full)
    assert shown.returncode == 0
    assert shown.stdout == result.stdout[result.stdout.index("accessbench run "):result.stdout.index("stored as run")]


def test_runs_lists_the_run(quick_run):
    store, _, run = quick_run
    listing = accessbench("--store", store, "runs")
    assert run.run["id"] in listing.stdout and "complete" in listing.stdout and "quick" in listing.stdout


def test_the_store_records_environment_and_server_settings(quick_run):
    store, result, run = quick_run
    assert run.run["environment"]["cores"] >= 1
    steadiness = run.run["environment"]["steadiness"]  # the host's speed, timed before and after each step
    assert steadiness["probes"] == len({c["step"] for c in run.cells}) + 1
    assert 0 < steadiness["quickest_ms"] <= steadiness["median_ms"] <= steadiness["p90_ms"] <= steadiness["slowest_ms"]
    assert "host speed: a fixed piece of work took" in result.stdout
    postgres = next(t for t in run.targets if t["target"] == "postgresql")
    assert postgres["server_version"].startswith(("15", "16", "17")) and "fsync" in postgres["settings"]
    psycopg = next(m for m in run.methods if m["method"] == "py-psycopg")
    assert psycopg["driver_version"] and "prepare_threshold" in psycopg["settings"]
    assert sqlite3.connect(store).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_trials_on_the_managed_server_record_the_backends_cpu(quick_run):
    _, _, run = quick_run
    for c in run.cells:
        if c["status"] == "ok" and c["kind"] != "connect" and c["method"] not in KEEP_NO_CONNECTION:
            server = [t["server_ns"] for t in run.trials[c["id"]]]
            if c["target"] in ("postgresql", "mariadb"):  # a backend process; a connection's thread
                assert all(ns is not None and ns > 0 for ns in server), (c["method"], c["target"], c["step"])
            else:  # in process: the server's work is inside the client's CPU
                assert all(ns is None for ns in server)


def test_a_connect_cells_server_cpu_is_not_measured_and_says_why_rather_than_reading_zero(quick_run):
    from accessbench.stats.cells import analyse

    _, _, run = quick_run
    connects = [r for r in analyse(run) if r.cell["kind"] == "connect" and r.cell["target"] in ("postgresql", "mariadb")
                and r.measured]
    assert connects
    for r in connects:
        assert all(t["server_ns"] is None for t in run.trials[r.cell["id"]])  # each backend is gone before it is read
        assert r.server_cpu_per_op_ns is None and "backend is new" in r.server_cpu_note
