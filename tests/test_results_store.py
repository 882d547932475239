"""A team's results store in PostgreSQL: runs stored there as in a SQLite file (identical
exports), two runs writing at once, only the schema accessbench_results touched, no password
kept, and everyone's runs listed with who made them where."""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import psycopg
import pytest

from accessbench.store import Store
from accessbench.targets.postgresql import ManagedPostgres

from .conftest import SCRATCH, accessbench

pytestmark = pytest.mark.server

QUICK_SQLITE = ("run", "--quick", "--target", "sqlite", "--method", "py-sqlite3", "--trials", "1", "--warmup", "0",
                "--precision", "0", "--no-report")


@pytest.fixture
def server(someone_elses_postgres):
    """A team's PostgreSQL: it already holds their tables."""
    return someone_elses_postgres


def url(server: ManagedPostgres, password: str | None = None) -> str:
    return f"postgresql://accessbench:{password or server.password}@127.0.0.1:{server.port}/accessbench"


def shown(server: ManagedPostgres) -> str:
    return f"postgresql://accessbench@127.0.0.1:{server.port}/accessbench"


def connect(server: ManagedPostgres) -> psycopg.Connection:
    return psycopg.connect(host=server.sockdir, port=server.port, user="accessbench", dbname="accessbench")


def everything_but_the_store(server: ManagedPostgres) -> list:
    """Every object outside accessbench_results, with the rows of the user's table."""
    with connect(server) as c:
        objects = c.execute(
            "SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname NOT IN ('accessbench_results', 'pg_catalog', 'information_schema', 'pg_toast')"
            " ORDER BY 1, 2").fetchall()
        schemas = c.execute("SELECT nspname FROM pg_namespace WHERE nspname <> 'accessbench_results' ORDER BY 1").fetchall()
        rows = c.execute("SELECT * FROM public.customers ORDER BY id").fetchall()
    return [objects, schemas, rows]


def test_a_run_copied_into_a_postgresql_store_exports_exactly_as_from_its_sqlite_file(server, sqlite_store, tmp_path):
    before = everything_but_the_store(server)
    copied = accessbench("--store", sqlite_store, "copy", "last", "--to", url(server))
    assert copied.returncode == 0, copied.stderr
    assert f"to {shown(server)}" in copied.stdout
    exports = {}
    for name, store in (("sqlite", sqlite_store), ("postgresql", url(server))):
        for form in ("json", "csv"):
            out = tmp_path / f"{name}.{form}"
            result = accessbench("--store", store, "export", "last", "--format", form, "--out", str(out))
            assert result.returncode == 0, result.stderr
            exports[name, form] = out.read_bytes()
    assert exports["sqlite", "json"] == exports["postgresql", "json"]
    assert exports["sqlite", "csv"] == exports["postgresql", "csv"]
    again = accessbench("--store", sqlite_store, "copy", "last", "--to", url(server))
    assert again.returncode == 2 and "already in" in again.stderr
    assert everything_but_the_store(server) == before


def test_two_runs_write_to_one_new_postgresql_store_at_once_and_both_are_listed_with_user_and_host(server):
    before = everything_but_the_store(server)
    command = [sys.executable, "-m", "accessbench", "--store", url(server), *QUICK_SQLITE]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRATCH)
            for _ in range(2)]
    outputs = [run.communicate(timeout=600) for run in runs]
    for run, (out, err) in zip(runs, outputs):
        assert run.returncode == 0, err[-2000:]
        assert server.password not in out + err
    listed = accessbench("--store", url(server), "runs")
    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stdout.splitlines()[1:] if line.strip()]
    assert len(lines) == 2 and all("complete" in line for line in lines)
    assert "user@host" in listed.stdout.splitlines()[0]
    import getpass
    import platform

    assert all(f"{getpass.getuser()}@{platform.node()}" in line for line in lines)
    with connect(server) as c:
        counts = c.execute("SELECT r.status, count(t.id) FROM accessbench_results.runs r"
                           " JOIN accessbench_results.cells c ON c.run_id = r.id"
                           " JOIN accessbench_results.trials t ON t.cell_id = c.id GROUP BY r.id, r.status").fetchall()
        assert [status for status, _ in counts] == ["complete", "complete"]
        assert counts[0][1] == counts[1][1] > 0
        stored = c.execute("SELECT string_agg(settings || environment || suite_text, '') FROM accessbench_results.runs"
                           ).fetchone()[0]
        assert server.password not in stored
    assert everything_but_the_store(server) == before


def test_a_schema_of_that_name_not_made_by_accessbench_is_refused_and_left_as_it_is(server):
    server.execute("CREATE SCHEMA accessbench_results")
    server.execute("CREATE TABLE accessbench_results.runs (id text, owner text)")
    server.execute("INSERT INTO accessbench_results.runs VALUES ('theirs', 'finance')")
    result = accessbench("--store", url(server), *QUICK_SQLITE)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"accessbench: --store {shown(server)}: schema accessbench_results exists and was not made by accessbench "
        "(no schema_version table): left as it is"]
    with connect(server) as c:
        assert c.execute("SELECT * FROM accessbench_results.runs").fetchall() == [("theirs", "finance")]
        assert c.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'accessbench_results'").fetchone() == (1,)


def test_a_wrong_password_or_a_malformed_store_url_is_one_line_that_never_shows_the_password(server):
    wrong = accessbench("--store", url(server, "s3cret-Wrong"), "runs")
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1
    assert "s3cret-Wrong" not in wrong.stderr and shown(server) in wrong.stderr
    malformed = accessbench("--store", "postgresql://me:s3cret%zz@db:99999/team", "runs")
    assert malformed.returncode == 2
    assert malformed.stderr.strip() == ("accessbench: --store postgresql://me:***@db:99999/team: port '99999' is not "
                                        "a number from 1 to 65535")


def test_compare_across_hosts_lists_what_differs_between_them(server, sqlite_store, tmp_path):
    """A run made on another machine (its environment says so) compared with this one's."""
    other = tmp_path / "other-host.db"
    shutil.copy(sqlite_store, other)
    with sqlite3.connect(other) as db:
        (run_id, env), = db.execute("SELECT id, environment FROM runs ORDER BY started_at DESC LIMIT 1").fetchall()
        env = {**json.loads(env), "hostname": "build-02", "user": "grace", "cores": 64}
        db.execute("UPDATE runs SET id = 'other-host-run', environment = ? WHERE id = ?", (json.dumps(env), run_id))
        for table in ("run_targets", "run_methods", "cells"):
            db.execute(f"UPDATE {table} SET run_id = 'other-host-run' WHERE run_id = ?", (run_id,))
    for store in (sqlite_store, str(other)):
        result = accessbench("--store", store, "copy", "last", "--to", url(server))
        assert result.returncode == 0, result.stderr
    compared = accessbench("--store", url(server), "compare", run_id, "other-host-run")
    assert compared.returncode == 0, compared.stderr
    assert "host hostname:" in compared.stdout and "→ build-02" in compared.stdout
    assert "host user:" in compared.stdout and "→ grace" in compared.stdout
    assert "host cores:" in compared.stdout
    listed = accessbench("--store", url(server), "runs").stdout
    assert "grace@build-02" in listed


def test_a_run_stopped_with_ctrl_c_in_a_postgresql_store_is_resumed_there_measuring_only_what_it_missed(
        server, tmp_path):
    before = everything_but_the_store(server)
    trials = 6
    run = ("run", "--quick", "--target", "sqlite", "--method", "py-sqlite3", "--trials", str(trials), "--warmup", "0",
           "--precision", "0", "--no-report", "--workdir", str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "accessbench", "--store", url(server), *run],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRATCH)

    def stored() -> list[tuple]:
        with connect(server) as c:
            if c.execute("SELECT to_regclass('accessbench_results.trials')").fetchone()[0] is None:
                return []
            return c.execute("SELECT c.step, t.seq, t.elapsed_ns FROM accessbench_results.trials t"
                             " JOIN accessbench_results.cells c ON c.id = t.cell_id WHERE t.phase = 'trial'"
                             " ORDER BY c.step, t.seq").fetchall()

    try:
        deadline = time.monotonic() + 120
        while len(stored()) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it was stopped"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    with connect(server) as c:
        [(run_id, status)] = c.execute("SELECT id, status FROM accessbench_results.runs").fetchall()
    assert status == "interrupted"
    kept = stored()
    resumed = accessbench("--store", url(server), "run", "--resume", run_id, "--workdir", str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert server.password not in resumed.stdout + resumed.stderr
    with connect(server) as c:
        assert c.execute("SELECT status FROM accessbench_results.runs").fetchall() == [("complete",)]
    after = stored()
    assert set(kept) <= set(after)  # what was measured before stays as it was
    seqs: dict[str, list[int]] = {}
    for step, seq, _ in after:
        seqs.setdefault(step, []).append(seq)
    assert seqs and all(s == list(range(trials)) for s in seqs.values())
    assert everything_but_the_store(server) == before


def test_a_ctrl_c_landing_anywhere_in_a_store_write_still_lets_the_run_be_stored_as_interrupted(server):
    # Ctrl-C raised at random moments in the middle of writes: some land between sending a
    # statement and reading its answer, leaving psycopg's connection mid-exchange. The run's
    # last write, that it was interrupted, must land every time all the same.
    class Suite:
        name, source, text = "interrupted", "builtin:none", ""

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    rng = random.Random(5)
    store = Store(url(server))
    try:
        for n in range(150):
            run_id = f"interrupted-{n}"
            store.begin_run(run_id, Suite, settings={}, environment={}, version="0")
            delay = rng.uniform(0.0005, 0.02)
            # the timer is armed inside the block that expects its interrupt: armed before it,
            # a busy machine can deschedule the test for longer than the delay, and the
            # interrupt then lands before the block is entered
            with pytest.raises(KeyboardInterrupt):
                signal.setitimer(signal.ITIMER_REAL, delay)
                while True:
                    store.note_environment(run_id, "writes", n)
            store.end_run(run_id, "interrupted", "interrupted by the user")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        store.close()
    with connect(server) as c:
        statuses = c.execute("SELECT status, count(*) FROM accessbench_results.runs"
                             " WHERE id LIKE 'interrupted-%' GROUP BY status").fetchall()
    assert statuses == [("interrupted", 150)]
