"""What happens when things go wrong: a hung worker, Ctrl-C, and a run with no server."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from accessbench.store import Store

from .conftest import QUICK_STEPS, accessbench, processes_mentioning, wait_for_trials

HANG_SUITE = """\
[suite]
name = "hang"

[[tables]]
name = "t"
rows = 20
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "stuck"
kind = "exec"
sql = "SELECT pg_sleep(60)"
mode = "literal"
iterations = 1

[[steps]]
name = "after"
kind = "scan"
sql = "SELECT id FROM t"
iterations = 2
"""


@pytest.mark.server
def test_a_hung_worker_is_timed_out_and_the_other_cells_still_run(tmp_path):
    suite = tmp_path / "hang.toml"
    suite.write_text(HANG_SUITE)
    store = str(tmp_path / "s.db")
    result = accessbench("--store", store, "run", "--suite", str(suite), "--target", "postgresql", "--path", "unix",
                         "--method", "py-psycopg,py-pg8000", "--timeout", "3", "--trials", "2", "--warmup", "0",
                         "--precision", "0")
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(store) as s:
        run = s.load(s.resolve("last"))
    status = {(c["method"], c["step"]): c for c in run.cells}
    for method in ("py-psycopg", "py-pg8000"):
        assert status[(method, "stuck")]["status"] == "timeout"
        assert "no answer within 3 s" in status[(method, "stuck")]["message"]
        assert status[(method, "after")]["status"] == "ok"
        assert len(run.trials[status[(method, "after")]["id"]]) == 2
    assert run.run["status"] == "complete"


def test_a_sqlite_run_needs_no_server(tmp_path):
    store = str(tmp_path / "s.db")
    result = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "py-sqlite3,c-sqlite",
                         "--step", QUICK_STEPS, "--trials", "1", "--warmup", "0")
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(store) as s:
        run = s.load(s.resolve("last"))
    assert {c["target"] for c in run.cells} == {"sqlite"} and "py-sqlite3" in {c["method"] for c in run.cells}
    assert {c["status"] for c in run.cells} == {"ok"}



@pytest.mark.server
def test_a_run_killed_outright_leaves_its_server_running_until_the_next_run_stops_it_and_removes_its_files(
        tmp_path, workdir):
    store = str(tmp_path / "s.db")
    proc = subprocess.Popen(
        [sys.executable, "-m", "accessbench", "--store", store, "run", "--quick", "--target", "postgresql",
         "--method", "py-psycopg,c-libpq", "--trials", "20", "--workdir", workdir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        wait_for_trials(store, proc, 1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its workers: nothing of theirs can clean up
        proc.wait(timeout=60)
    (killed,) = os.listdir(workdir)
    assert processes_mentioning(workdir), "the managed server (a daemon) should outlive the killed run"

    done = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "c-sqlite",
                       "--trials", "1", "--warmup", "0", "--no-report", "--workdir", workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"removed {os.path.join(workdir, killed)}, left by a run that was killed: stopped" in \
        (done.stdout + done.stderr).replace("\n", " ")
    assert processes_mentioning(workdir) == [], "the killed run's server is still running"
    assert os.listdir(workdir) == [], "the killed run's work directory is still there"


@pytest.mark.server
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_ctrl_c_or_a_kill_keeps_finished_trials_and_stops_the_server(sig, tmp_path, workdir):
    store = str(tmp_path / "s.db")
    proc = subprocess.Popen(
        # a worker of each kind (an interpreter, a native program, a JVM), each with its children
        [sys.executable, "-m", "accessbench", "--store", store, "run", "--quick", "--target", "postgresql",
         "--method", "py-psycopg,c-libpq,java-pgjdbc", "--trials", "20", "--workdir", workdir],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    trials = wait_for_trials(store, proc, 5)
    assert processes_mentioning(workdir), "the managed server should be running mid-run"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in out + err
    db = sqlite3.connect(store)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    status, finished = db.execute("SELECT status, finished_at FROM runs").fetchone()
    assert status == "interrupted" and finished
    assert db.execute("SELECT count(*) FROM trials").fetchone()[0] >= trials
    assert processes_mentioning(workdir) == [], "a process of the run outlived it"
    assert os.listdir(workdir) == [], "the run's work directory was left behind"
