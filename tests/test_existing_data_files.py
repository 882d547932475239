"""--data: a managed or embedded target holding the user's data for a run over existing data —
a database file copied (the user's own only read), a dump loaded into the run's own server —
measured in read-only sessions, as a server of the user's is (real servers and files)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess

import pytest

from accessbench.store import Store

from .conftest import accessbench

pytestmark = pytest.mark.server


def _run(store, *args):
    return accessbench("--store", str(store), "run", "--no-report", "--quick", "--warmup", "0", "--trials", "2",
                       "--precision", "0", *args, timeout=900)


def _cells(store):
    with Store(str(store)) as s:
        return s.load(s.resolve("last")).cells


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_sqlite_file_is_measured_as_it_is_and_left_byte_for_byte(tmp_path):
    app = tmp_path / "app.db"
    with sqlite3.connect(app) as db:
        db.execute("CREATE TABLE visitors (id INTEGER PRIMARY KEY, name TEXT)")
        db.executemany("INSERT INTO visitors VALUES (?, ?)", [(i, f"visitor {i}") for i in range(1, 501)])
    before = _digest(app)
    result = _run(tmp_path / "s.db", "--data", str(app), "--method", "py-sqlite3,c-sqlite",
                  "--sql", "SELECT name FROM visitors WHERE id = ?", "--param", "uniform(1, 500)")
    assert result.returncode == 0, result.stderr[-2000:]
    assert {c["status"] for c in _cells(tmp_path / "s.db")} == {"ok"}
    assert _digest(app) == before


@pytest.mark.parametrize("dump_args, suffix", [([], "sql"), (["-Fc"], "dump")])
def test_a_postgresql_dump_is_loaded_into_the_runs_own_server_and_read_only_there(dump_args, suffix, tmp_path, workdir):
    from accessbench.targets.postgresql import ManagedPostgres

    source = ManagedPostgres()
    source.start(workdir)
    try:
        source.execute("CREATE TABLE public.visitors (id integer PRIMARY KEY, country char(2))")
        source.execute("INSERT INTO public.visitors SELECT g, (ARRAY['de','fr','us'])[1 + g % 3] FROM generate_series(1, 900) g")
        source.execute("CREATE SEQUENCE public.tickets")
        dump = tmp_path / f"app.{suffix}"
        with open(dump, "wb") as f:
            subprocess.run([f"{source.bindir}/pg_dump", *dump_args, "-h", source.sockdir, "-p", str(source.port),
                            "-U", "accessbench", "accessbench"], stdout=f, check=True)
    finally:
        source.stop()
    result = _run(tmp_path / "s.db", "--target", "postgresql", "--data", str(dump), "--method", "c-libpq,py-psycopg",
                  "--sql", "SELECT count(*) FROM visitors WHERE country = ?", "--param", "choice('de', 'fr')")
    assert result.returncode == 0, result.stderr[-2000:]
    assert {c["status"] for c in _cells(tmp_path / "s.db")} <= {"ok", "unsupported"}
    refused = _run(tmp_path / "w.db", "--target", "postgresql", "--data", str(dump), "--method", "c-libpq",
                   "--mode", "extended", "--sql", "SELECT nextval('tickets')")
    assert refused.returncode == 1  # nothing measured: the server refused the write
    cells = _cells(tmp_path / "w.db")
    assert cells and all(c["status"] == "error" and "25006" in c["message"] for c in cells), cells


def test_data_that_fits_no_target_and_a_target_without_data_are_one_line(tmp_path):
    app = tmp_path / "app.db"
    with sqlite3.connect(app) as db:
        db.execute("CREATE TABLE t (a INTEGER)")
    sql = tmp_path / "app.sql"
    sql.write_text("CREATE TABLE t (a integer);\n")
    for args, says in [
        (["--data", str(app), "--target", "duckdb"], "--target duckdb: a run over existing data"),
        (["--data", str(sql)], "SQL text loads into postgresql or mariadb: say which with --target"),
        (["--target", "sqlite"], "--target sqlite: a run over existing data"),
        (["--data", str(app), "--suite", "quick"], "--suite and --sql/--sql-file: one or the other"),
    ]:
        result = _run(tmp_path / "s.db", *args, "--sql", "SELECT a FROM t")
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("accessbench: ") and says in result.stderr and len(result.stderr.splitlines()) == 1
