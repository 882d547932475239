"""Resuming a stopped run: the same run carries on, measuring only what it is missing, and
refuses (one line, exit 2) when asked to be something else."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing

import pytest

from accessbench.runner.resume import Done
from accessbench.store import Store
from accessbench.suite.loader import load

from .conftest import SCRATCH, accessbench, wait_for_trials

TRIALS = 6
METHODS = ("py-sqlite3", "c-sqlite")
RUN = ("run", "--quick", "--target", "sqlite", "--method", ",".join(METHODS), "--trials", str(TRIALS),
       "--warmup", "0", "--precision", "0", "--no-report")


def start(store: str, workdir: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "accessbench", "--store", store, *RUN, "--workdir", workdir],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRATCH, **popen)



def rows(store: str, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute(sql, params).fetchall()


def freeze(proc: subprocess.Popen, store: str) -> None:
    """Stop a run's process group between two of its store writes: one frozen in the middle of
    committing a trial would hold the file's lock, and every reader would wait on it for ever."""
    for _ in range(100):
        os.killpg(proc.pid, signal.SIGSTOP)
        try:
            with closing(sqlite3.connect(store, timeout=0)) as db:
                db.execute("SELECT count(*) FROM runs").fetchone()
            return
        except sqlite3.OperationalError:  # locked: let the commit finish, and stop it again
            os.killpg(proc.pid, signal.SIGCONT)
            time.sleep(0.01)
    raise AssertionError("the run's store stayed locked")


def trial_seqs(store: str) -> dict[tuple, list[int]]:
    """Every cell of the store, with the seqs of its timed trials."""
    found = rows(store, "SELECT c.method, c.step, t.seq FROM cells c LEFT JOIN trials t ON t.cell_id = c.id"
                        " AND t.phase = 'trial' ORDER BY c.id, t.seq")
    out: dict[tuple, list[int]] = {}
    for method, step, seq in found:
        out.setdefault((method, step), [])
        if seq is not None:
            out[(method, step)].append(seq)
    return out


def assert_complete(store: str, run_id: str) -> None:
    assert rows(store, "SELECT id, status, message FROM runs") == [(run_id, "complete", None)]
    planned = {(m, s) for m in METHODS for s in load("quick", quick=True).step_names}
    assert trial_seqs(store) == {cell: list(range(TRIALS)) for cell in planned}


def processes_in_group(pgid: int) -> list[str]:
    """Live (not zombie) processes of a process group."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(pid)
    return found


@pytest.fixture(scope="module")
def interrupted():
    """A results store holding one run stopped by Ctrl-C with some trials stored."""
    folder = tempfile.mkdtemp(prefix="accessbench-resume-")
    os.chmod(folder, 0o755)
    store = os.path.join(folder, "interrupted.db")
    proc = start(store, folder)
    try:
        wait_for_trials(store, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert rows(store, "SELECT status FROM runs") == [("interrupted",)]
    yield store
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def stopped(interrupted, tmp_path):
    """A copy of the interrupted run's store, for one test to change, and the run's id."""
    store = str(tmp_path / "s.db")
    shutil.copy(interrupted, store)
    return store, rows(store, "SELECT id FROM runs")[0][0]


def test_an_interrupted_run_carries_on_under_its_own_id_measuring_only_the_missing_trials(stopped):
    store, run_id = stopped
    before = rows(store, "SELECT * FROM trials ORDER BY id")
    cells = len(METHODS) * len(load("quick", quick=True).step_names)
    complete = rows(store, "SELECT count(*) FROM cells c WHERE status = 'unsupported' OR status IN ('ok', 'mismatch')"
                           " AND (SELECT count(*) FROM trials t WHERE t.cell_id = c.id AND phase = 'trial') = ?",
                    TRIALS)[0][0]
    missing = cells * TRIALS - sum(row[2] == "trial" for row in before)
    result = accessbench("--store", store, "run", "--resume", run_id[:13])
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"resuming run {run_id}: {complete} of {cells} cells complete, {missing} trials to measure" in result.stdout
    assert_complete(store, run_id)
    assert rows(store, f"SELECT * FROM trials WHERE id <= {before[-1][0]} ORDER BY id") == before
    settings = json.loads(rows(store, "SELECT settings FROM runs")[0][0])
    assert len(settings["resumed"]) == 1 and settings["trials"] == TRIALS


def test_a_resumed_run_expects_each_cells_trials_to_take_what_its_stored_ones_took(stopped):
    store, run_id = stopped
    with Store(store) as s:
        done = Done.of(s, run_id)
    took = {key[3:]: cell.took_s for key, cell in done.cells.items() if cell.seqs}
    stored = rows(store, "SELECT c.method, c.step, avg(t.elapsed_ns) / 1e9 FROM cells c JOIN trials t ON t.cell_id = c.id"
                         " AND t.phase = 'trial' GROUP BY c.id")
    assert stored and took == pytest.approx({(method, step): seconds for method, step, seconds in stored})
    assert all(cell.took_s is None for cell in done.cells.values() if not cell.seqs)


def test_a_resume_with_fewer_trials_is_refused_naming_both_values_and_changes_nothing(stopped):
    store, run_id = stopped
    before = rows(store, "SELECT * FROM trials ORDER BY id")
    result = accessbench("--store", store, "run", "--resume", run_id, "--trials", "2")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"accessbench: --resume {run_id}: --trials 2 is fewer than the run's {TRIALS} (a resumed run may add "
        "trials, never drop them)"]
    assert rows(store, "SELECT status FROM runs") == [("interrupted",)]
    assert rows(store, "SELECT * FROM trials ORDER BY id") == before


def test_a_resume_with_a_changed_suite_file_is_refused_naming_the_first_differing_line(stopped, tmp_path):
    store, run_id = stopped
    text = load("quick").text
    suite = tmp_path / "quick.toml"
    suite.write_text(text.replace("iterations = 50\n", "iterations = 51\n", 1))
    line = text.splitlines().index("iterations = 50") + 1
    result = accessbench("--store", store, "run", "--resume", run_id, "--suite", str(suite))
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert f"at line {line}: 'iterations = 51' here, 'iterations = 50' in the run" in result.stderr


def test_a_resume_on_other_targets_or_methods_is_refused(stopped):
    store, run_id = stopped
    for option, value, stored in (("--target", "postgresql", "sqlite"), ("--method", "c-sqlite", ",".join(METHODS))):
        result = accessbench("--store", store, "run", "--resume", run_id, option, value)
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"accessbench: --resume {run_id}: {option} {value} differs from the run's {stored} (a resumed run keeps "
            "its settings; start a new run for other ones)"]


def test_an_unknown_run_is_refused(stopped):
    store, _ = stopped
    result = accessbench("--store", store, "run", "--resume", "19990101")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1 and "19990101" in result.stderr


def test_a_complete_run_is_refused_as_there_is_nothing_to_resume(tmp_path):
    store = str(tmp_path / "s.db")
    done = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "c-sqlite",
                       "--trials", "1", "--warmup", "0", "--no-report")
    assert done.returncode == 0, done.stderr[-2000:]
    result = accessbench("--store", store, "run", "--resume", "last")
    assert result.returncode == 2
    run_id = rows(store, 'SELECT id FROM runs')[0][0]
    assert result.stderr.splitlines() == [
        f"accessbench: --resume {run_id}: the run is complete: nothing to resume (a larger --trials adds trials to "
        "each cell)"]


def test_more_trials_carry_a_stopped_or_complete_run_on_keeping_every_trial_it_has_and_saying_when(stopped):
    store, run_id = stopped
    before = rows(store, "SELECT * FROM trials ORDER BY id")
    more = TRIALS + 1
    for _ in range(2):  # the stopped run, then the complete one, one trial more each time
        result = accessbench("--store", store, "run", "--resume", run_id, "--trials", str(more))
        assert result.returncode == 0, result.stderr[-2000:]
        assert rows(store, "SELECT status FROM runs") == [("complete",)]
        assert set(map(tuple, trial_seqs(store).values())) == {tuple(range(more))}
        more += 1
    assert rows(store, f"SELECT * FROM trials WHERE id <= {before[-1][0]} ORDER BY id") == before
    settings = json.loads(rows(store, "SELECT settings FROM runs")[0][0])
    assert settings["trials"] == TRIALS + 2 and len(settings["resumed"]) == 2
    assert [(r["from"], r["to"]) for r in settings["trials_raised"]] == [(TRIALS, TRIALS + 1), (TRIALS + 1, TRIALS + 2)]
    shown = accessbench("--store", store, "show", run_id, "--width", "300").stdout
    assert f"trials {TRIALS} → {TRIALS + 1} at " in shown and f"trials {TRIALS + 1} → {TRIALS + 2} at " in shown


def test_a_crashed_run_is_listed_as_stopped_and_resumed_once_its_process_is_gone_leaving_no_process(tmp_path, workdir):
    store = str(tmp_path / "s.db")
    proc = start(store, workdir, start_new_session=True)
    try:
        wait_for_trials(store, proc)
        freeze(proc, store)  # frozen mid-run: still going as far as a resume can tell
        run_id = rows(store, "SELECT id FROM runs")[0][0]
        refused = accessbench("--store", store, "run", "--resume", run_id)
        assert refused.returncode == 2
        assert f"the run is still being measured by process {proc.pid}" in refused.stderr
        assert "stopped" not in accessbench("--store", store, "runs").stdout
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while processes_in_group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_in_group(proc.pid) == [], "a worker of the killed run lives on"
    finally:
        if proc.poll() is None or processes_in_group(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
    assert rows(store, "SELECT status FROM runs") == [("running",)]
    assert "stopped: process gone (--resume)" in accessbench(
        "--store", store, "runs").stdout.replace("\n", "")
    result = accessbench("--store", store, "run", "--resume", run_id, "--workdir", workdir)
    assert result.returncode == 0, result.stderr[-2000:]
    assert_complete(store, run_id)


def test_a_resumed_run_verifies_each_method_again_once_per_target_and_step_on_its_quickest_path():
    from types import SimpleNamespace

    from accessbench.runner.plan import Cell
    from accessbench.runner.resume import Done, StoredCell, identity

    step = SimpleNamespace(name="lineitem")
    cell = lambda target, path, method: Cell("", target, path, method, step)  # noqa: E731
    first = [cell("postgresql", p, m) for m in ("c-libpq", "wire-floor") for p in ("tcp+1ms@10mbit", "tcp", "tcp+10ms")]
    unverified = cell("mariadb", "tcp+1ms", "c-odbc")        # stopped before its first verification
    failed = cell("mariadb", "tcp", "c-libmariadb")          # a mismatch on this path alone: read again
    # a mismatch its method read alike on every path (decimals at another scale): compared again, not read again
    own = [cell("mariadb", p, "py-connectorx") for p in ("tcp+1ms@10mbit", "tcp", "tcp+10ms")]
    # verified (ok), or set back to planned by a resume stopped before it came to the cell
    stored = {identity(c): StoredCell(i, "ok" if i % 2 else "planned", (1000, "abc", None), frozenset())
              for i, c in enumerate(first)}
    stored[identity(failed)] = StoredCell(99, "mismatch", (999, "abd", None), frozenset())
    stored |= {identity(c): StoredCell(100 + i, "mismatch", (1000, "scale", None), frozenset()) for i, c in enumerate(own)}
    cells = [*first, unverified, failed, *own]
    again = Done("r", stored).again(cells)
    # the new server's data and each method's reading, shown once on loopback; the proxied paths'
    # first verifications stand
    assert again == {cell("postgresql", "tcp", "c-libpq"), cell("postgresql", "tcp", "wire-floor"), unverified, failed,
                     cell("mariadb", "tcp", "py-connectorx")}
    assert Done().again(cells) == set(cells)  # a new run verifies every cell
