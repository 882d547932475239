"""Faults end cleanly: a managed server that dies, SQL of the suite's that fails or runs too
long, a store that cannot be written or read, a work directory that cannot be made, URLs that
are not URLs. Each ends in one line (never a traceback), with the run's status and reason
stored where the store can still be written, servers stopped and work directories removed."""

from __future__ import annotations

import glob
import json
import os
import platform
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing

import pytest

from accessbench.store import Store

from .conftest import SCRATCH, accessbench, processes_mentioning

SECRET = "S3cr%et-pw"

SQLITE_SUITE = """\
[suite]
name = "faulty"

[[tables]]
name = "t"
rows = 50
primary_key = ["id"]
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } },
           { name = "v", type = "integer", gen = { kind = "const", value = 0 } }]
{setup}
[[steps]]
name = "bad-reset"
kind = "exec"
mode = "literal"
sql = "UPDATE t SET v = 1 WHERE id = 1"
reset = ["DELETE FROM no_such_table"]
iterations = 2

[[steps]]
name = "bad-check"
kind = "exec"
mode = "literal"
sql = "UPDATE t SET v = 2 WHERE id = 2"
reset = ["UPDATE t SET v = 0"]
check = "SELECT v FROM no_such_table"
iterations = 2

[[steps]]
name = "endless-reset"
kind = "exec"
mode = "literal"
sql = "UPDATE t SET v = 3 WHERE id = 3"
reset = ["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"]
iterations = 2

[[steps]]
name = "fine"
kind = "scan"
sql = "SELECT id, v FROM t"
iterations = 3
"""


def _one_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def _last(store) -> dict:
    with Store(str(store)) as s:
        return s.load(s.resolve("last"))


# 5. a managed server that dies stops the run at once

@pytest.mark.server
@pytest.mark.parametrize("dbms", ["postgresql", "mariadb"])
def test_a_managed_server_that_dies_stops_the_run_at_once_as_failed_with_its_reason(dbms, tmp_path, workdir):
    store = tmp_path / "s.db"
    method = "py-psycopg" if dbms == "postgresql" else "py-mysqlclient"
    proc = subprocess.Popen([sys.executable, "-m", "accessbench", "--store", str(store), "run", "--no-report", "--quick",
                             "--target", dbms, "--path", "unix", "--method", method, "--trials", "30",
                             "--workdir", workdir], cwd=SCRATCH, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        pidfile = None
        while time.monotonic() < deadline:
            found = glob.glob(os.path.join(workdir, "accessbench-*", "postgresql", "data", "postmaster.pid")
                              if dbms == "postgresql" else os.path.join(workdir, "accessbench-*", "mariadb", "run",
                                                                        "mariadb.pid"))
            if found and store.exists() and _measured(store):
                pidfile = found[0]
                break
            time.sleep(0.2)
        assert pidfile, "the run never measured a trial"
        with open(pidfile) as f:
            os.kill(int(f.readline()), signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-2000:]
    assert "Traceback" not in out + err
    line = err.strip().splitlines()[-1]
    assert "stopped" in line and f"the managed {'PostgreSQL' if dbms == 'postgresql' else 'MariaDB'} server stopped" in line
    run = _last(store)
    assert run.run["status"] == "failed" and "server stopped" in run.run["message"]
    assert os.listdir(workdir) == []  # the work directory went with the run
    assert processes_mentioning(workdir) == []


def _measured(store) -> int:
    try:
        with Store(str(store)) as s:
            return s.measured(s.resolve("last"))
    except Exception:  # not written yet
        return 0


# 6 and 11. a failing or endless reset, check or setup fails its cell, not the run

def test_a_failing_reset_or_check_fails_its_cell_with_the_statement_and_the_run_goes_on(tmp_path):
    suite = tmp_path / "faulty.toml"
    suite.write_text(SQLITE_SUITE.replace("{setup}", ""))
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--no-report", "--suite", str(suite),
                         "--target", "sqlite", "--method", "py-sqlite3", "--trials", "2", "--warmup", "0",
                         "--precision", "0", "--timeout", "2")
    assert result.returncode == 0, result.stderr[-2000:]
    cells = {c["step"]: c for c in _last(tmp_path / "s.db").cells}
    assert cells["bad-reset"]["status"] == "error"
    assert cells["bad-reset"]["message"] == "reset `DELETE FROM no_such_table`: no such table: no_such_table"
    assert cells["bad-check"]["status"] == "error"
    assert cells["bad-check"]["message"] == "check `SELECT v FROM no_such_table`: no such table: no_such_table"
    # the runner's own statements are bounded by --timeout too
    assert cells["endless-reset"]["status"] == "timeout"
    assert cells["endless-reset"]["message"].startswith("reset `WITH RECURSIVE")
    assert cells["fine"]["status"] == "ok"
    assert _last(tmp_path / "s.db").run["status"] == "complete"


def test_a_failing_setup_fails_its_cells_and_a_run_that_measured_nothing_exits_1_as_failed(tmp_path):
    suite = tmp_path / "faulty.toml"
    suite.write_text(SQLITE_SUITE.replace("{setup}", '[setup]\nsqlite = ["INSERT INTO nowhere VALUES (1)"]\n'))
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--no-report", "--suite", str(suite),
                         "--target", "sqlite", "--method", "py-sqlite3", "--trials", "2", "--warmup", "0",
                         "--precision", "0")
    assert result.returncode == 1
    assert "nothing was measured" in _one_line(result)
    run = _last(tmp_path / "s.db")
    assert run.run["status"] == "failed"
    assert {c["status"] for c in run.cells} == {"error"}
    assert {c["message"] for c in run.cells} == {"setup `INSERT INTO nowhere VALUES (1)` failed: no such table: nowhere"}


# 7. store, work directory and report directory

@pytest.fixture
def small_disk():
    """A 128 KiB file system of the test's own (tmpfs): a quick run's store needs about 220 KiB."""
    if os.geteuid() != 0:
        pytest.skip("*** SKIPPING the disk-full test: mounting a small tmpfs needs root ***")
    path = tempfile.mkdtemp(prefix="accessbench-small-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", path], check=True)
    yield path
    subprocess.run(["umount", path], check=False)
    os.rmdir(path)


def test_a_store_that_fills_the_disk_mid_run_is_one_line_and_the_work_directory_goes(small_disk, tmp_path, workdir):
    store = os.path.join(small_disk, "s.db")
    result = accessbench("--store", store, "run", "--no-report", "--quick", "--target", "sqlite",
                         "--method", "py-sqlite3,c-sqlite", "--trials", "30", "--warmup", "0", "--workdir", workdir)
    assert result.returncode == 1
    line = _one_line(result)
    assert f"--store {store}: cannot write" in line and "full" in line
    assert os.listdir(workdir) == []
    assert processes_mentioning(workdir) == []
    with closing(sqlite3.connect(store)) as db:  # what was committed before the disk filled is there
        assert db.execute("SELECT count(*) FROM trials").fetchone()[0] > 0


def test_a_work_directory_that_is_missing_or_read_only_is_one_line(tmp_path):
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--quick", "--target", "sqlite",
                         "--workdir", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert _one_line(result) == f"accessbench: --workdir {tmp_path / 'nowhere'}: no such directory"
    if os.geteuid() == 0:  # root writes through permission bits: a read-only mount it is
        path = tempfile.mkdtemp(prefix="accessbench-ro-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", path], check=True)
    else:
        path = tempfile.mkdtemp(prefix="accessbench-ro-")
        os.chmod(path, 0o555)
    try:
        result = accessbench("--store", str(tmp_path / "s.db"), "run", "--quick", "--target", "sqlite",
                             "--workdir", path)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", path], check=False)
        shutil.rmtree(path, ignore_errors=True)
    assert result.returncode == 2
    assert f"--workdir {path}: cannot make the run's directory there" in _one_line(result)


def test_a_damaged_store_or_someone_elses_sqlite_file_is_one_line_and_left_as_it_is(tmp_path):
    store = tmp_path / "s.db"
    result = accessbench("--store", str(store), "run", "--no-report", "--quick", "--target", "sqlite",
                         "--method", "py-sqlite3", "--trials", "1", "--warmup", "0")
    assert result.returncode == 0, result.stderr[-2000:]
    data = bytearray(store.read_bytes())
    page = 4096
    for start in range(2 * page, len(data), 3 * page):  # garble every third page after the first two
        data[start:start + page] = os.urandom(page)
    store.write_bytes(bytes(data))
    for args in (("show", "last"), ("runs",), ("export", "last")):
        result = accessbench("--store", str(store), *args)
        assert result.returncode == 2
        assert "not an accessbench store, or damaged" in _one_line(result)
    other = tmp_path / "notes.db"
    with closing(sqlite3.connect(other)) as db, db:
        db.execute("CREATE TABLE notes (body text)")
        db.execute("INSERT INTO notes VALUES ('mine')")
    before = other.read_bytes()
    result = accessbench("--store", str(other), "run", "--quick", "--target", "sqlite")
    assert result.returncode == 2 and "not an accessbench store" in _one_line(result)
    assert other.read_bytes() == before


def test_a_report_directory_that_cannot_be_written_is_one_line(tmp_path):
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--quick", "--target", "sqlite",
                         "--method", "py-sqlite3", "--trials", "1", "--warmup", "0", "--report-dir", "/proc/nope")
    assert result.returncode == 2
    assert "--report-dir /proc/nope: cannot write the report" in _one_line(result)


# 9. URLs: one line, exit 2, never the password

@pytest.mark.parametrize("url", [
    f"postgresql://me:{SECRET}@127.0.0.1:99999/app",
    f"postgresql://me:{SECRET}@[::1/app",
    f"postgresql://me:{SECRET}@db:5432/app?sslmode",
    f"postgresql://me:{SECRET}@db:5432:6543/app",
    f"postgresql://me:{SECRET}@db/app#part",
    f"postgres:/me:{SECRET}@db/app",
    f"mariadb://me:{SECRET}@db:3306/?bogus=1",
    f"mysql://me:{SECRET}@db:port/",
    f"mariadb://me:{SECRET}@db/a/b",
    f"postgresql://me@db/app?password={SECRET}&sslmode",
])
def test_a_malformed_target_url_is_one_line_without_its_password(url, tmp_path):
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--quick", "--target", url)
    assert result.returncode == 2
    line = _one_line(result)
    assert line.startswith("accessbench: --target ")
    assert SECRET not in line and "S3cr" not in line and "***" in line
    assert not (tmp_path / "s.db").exists()  # nothing started, nothing stored


@pytest.mark.parametrize("url", [f"postgresql://me:{SECRET}@127.0.0.1:1/app",
                                 f"mariadb://me:{SECRET}@127.0.0.1:1/"])
def test_a_server_that_cannot_be_reached_is_one_line_and_a_failed_run_with_its_reason(url, tmp_path):
    store = tmp_path / "s.db"
    result = accessbench("--store", str(store), "run", "--quick", "--target", url)
    assert result.returncode == 2
    line = _one_line(result)
    assert "cannot connect to" in line and "S3cr" not in line
    assert b"S3cr" not in store.read_bytes()
    run = _last(store)
    assert run.run["status"] == "failed" and "cannot connect" in run.run["message"]
    listed = accessbench("--store", str(store), "runs")
    assert "failed: cannot connect" in listed.stdout


def test_a_store_given_as_a_url_is_one_line_without_its_password(tmp_path):
    result = accessbench("--store", f"postgresql://me:{SECRET}@db/results", "runs")
    assert result.returncode == 2
    assert "S3cr" not in _one_line(result)


# 11. the seconds-per-1,000 matrix marks what it marks truly

def test_the_per_1000_matrix_tells_a_stopped_cell_from_a_mismatch(tmp_path):
    store = tmp_path / "s.db"
    result = accessbench("--store", str(store), "run", "--no-report", "--quick", "--target", "sqlite",
                         "--method", "py-sqlite3,c-sqlite", "--trials", "1", "--warmup", "0")
    assert result.returncode == 0, result.stderr[-2000:]
    with closing(sqlite3.connect(store)) as db, db:  # as a cell that timed out after its trials would be stored
        db.execute("UPDATE cells SET status = 'timeout', message = 'no answer' WHERE id = (SELECT min(id) FROM cells)")
    shown = accessbench("--store", str(store), "show", "last", "--full").stdout
    assert "† = stopped by an error or timeout" in shown
    assert "verification mismatch" not in shown


SCRIPT_KILLED = """
import os, signal, sys, time
from accessbench.runner.cleanup import interruptible

def main():
    try:
        os.kill(os.getpid(), signal.{sig})
        time.sleep(30)  # the handler interrupts this
        return 0
    finally:
        open(sys.argv[1], "w").write("cleaned up")

interruptible(main)
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_bench_script_killed_or_interrupted_runs_its_clean_up_and_ends_in_one_line_with_130(sig, tmp_path):
    marker = tmp_path / "marker"
    # A shell without job control starts background jobs with SIGINT ignored; a user's
    # terminal does not, so the child is given Python's own default back.
    done = subprocess.run([sys.executable, "-c", SCRIPT_KILLED.replace("{sig}", sig), str(marker)],
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert done.returncode == 130, done.stderr
    assert marker.read_text() == "cleaned up"
    assert done.stderr.strip().splitlines() == [
        "interrupted: what it started is stopped and its work directory removed"], done.stderr


def test_only_work_directories_whose_maker_is_gone_are_removed_and_only_servers_naming_them_are_stopped(tmp_path):
    from accessbench.runner.cleanup import OWNER, claim, left_by_killed_runs

    def made_by(name: str, pid: int, started, host: str | None = None) -> str:
        path = tmp_path / name
        path.mkdir()
        (path / OWNER).write_text(json.dumps({"pid": pid, "started": started, "host": host or platform.node()}))
        return str(path)

    gone = subprocess.Popen(["true"])  # a process that has ended: its pid names no one now
    gone.wait()
    live = tmp_path / "accessbench-live"
    live.mkdir()
    claim(str(live))  # this process's: still going
    dead = made_by("accessbench-dead", gone.pid, "1")
    reused = made_by("accessbench-reused", os.getpid(), "1")  # a live pid, but not the maker's start time
    elsewhere = made_by("accessbench-elsewhere", gone.pid, "1", host="another-host")
    (tmp_path / "accessbench-unmarked").mkdir()
    (tmp_path / "someone-elses").mkdir()
    # a server of the dead run's, and a process of someone else's that its pid file names
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", dead + "/server.conf"])
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        os.makedirs(dead + "/srv")
        with open(dead + "/srv/server.pid", "w") as f:
            f.write(f"{server.pid}\n")
        with open(reused + "/other.pid", "w") as f:
            f.write(f"{bystander.pid}\n")
        lines = left_by_killed_runs(str(tmp_path))
        assert lines == [f"removed {dead}, left by a run that was killed: stopped 1 server still running there",
                         f"removed {reused}, left by a run that was killed"]
        assert server.wait(timeout=30) == -signal.SIGTERM
        assert bystander.poll() is None, "a process whose command line does not name the directory was stopped"
        assert sorted(os.listdir(tmp_path)) == ["accessbench-elsewhere", "accessbench-live", "accessbench-unmarked",
                                                 "someone-elses"]
        assert os.path.exists(elsewhere)
    finally:
        for proc in (server, bystander):
            proc.kill()
            proc.wait()
