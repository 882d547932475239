"""MariaDB as a second server: managed and external targets, storage engines as variants,
the server settings a suite sets, the serving thread's CPU, and record-level access through
HANDLER — run for real against mariadbd started by the tests."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pymysql
import pytest

from accessbench.errors import SuiteError
from accessbench.runner.plan import variant_label, variant_targets
from accessbench.stats.cells import analyse
from accessbench.store import Store
from accessbench.suite.loader import parse
from accessbench.targets.mariadb import ManagedMariaDB

from .conftest import QUICK_STEPS, accessbench, processes_mentioning

pytestmark = pytest.mark.server

PY_METHODS = "py-mysqlclient,py-pymysql,py-mariadb,py-pyodbc"

ENGINES = """
[suite]
name = "engines"
seed = 8

[parameters]
engine = ["InnoDB", "MyISAM"]

[server.mariadb]
innodb_flush_log_at_trx_commit = 2

[[tables]]
name = "records"
rows = 500
engine = "${engine}"
primary_key = ["key1", "key2"]
columns = [
  { name = "key1", type = "integer", gen = { kind = "seq", start = 0, div = 10 } },
  { name = "key2", type = "integer", gen = { kind = "seq", start = 0, mod = 10 } },
  { name = "qty",  type = "integer", gen = { kind = "const", value = 0 } },
  { name = "name", type = "varchar(20)", gen = { kind = "text", pattern = "r'e\\\\c ####" } },
]

[[steps]]
name = "scan-${mode}"
kind = "scan"
sql = "SELECT * FROM records"
mode = "${mode}"
record = { table = "records" }
vary = { mode = ["record"] }
iterations = 3

[[steps]]
name = "scan-sql"
kind = "scan"
sql = "SELECT * FROM records"
iterations = 3

[[steps]]
name = "get-${mode}"
kind = "exec"
sql = "SELECT * FROM records WHERE key1 = ? AND key2 = ?"
params = [{ kind = "uniform", lo = 0, hi = 55 }, { kind = "uniform", lo = 0, hi = 9 }]
mode = "${mode}"
record = { table = "records", index = "PRIMARY" }
vary = { mode = ["literal", "record"] }
iterations = 200

[[steps]]
name = "upd10"
kind = "exec"
sql = "UPDATE records SET qty = ? WHERE key1 = ?"
params = [{ kind = "uniform", lo = 1, hi = 9 }, { kind = "uniform", lo = 0, hi = 49 }]
mode = "literal"
iterations = 100
reset = ["UPDATE records SET qty = 0 WHERE qty <> 0"]
check = "SELECT key1, key2, qty FROM records"
"""


def run(tmp_path, workdir, suite_text: str, *args: str):
    suite = tmp_path / "suite.toml"
    suite.write_text(suite_text)
    store = str(tmp_path / "s.db")
    result = accessbench("--store", store, "run", "--suite", str(suite), "--no-report", "--workdir", workdir,
                         "--trials", "2", "--warmup", "0", "--precision", "0", *args)
    assert result.returncode == 0, result.stderr[-3000:]
    with Store(store) as s:
        return s.load(s.resolve("last")), result


def test_the_quick_suite_runs_on_a_managed_mariadb_that_is_gone_afterwards(tmp_path, workdir):
    result = accessbench("--store", str(tmp_path / "s.db"), "run", "--quick", "--target", "mariadb", "--method",
                         PY_METHODS, "--step", QUICK_STEPS, "--trials", "2", "--warmup", "0", "--precision", "0", "--no-report",
                         "--workdir", workdir)
    assert result.returncode == 0, result.stderr[-3000:]
    with Store(str(tmp_path / "s.db")) as s:
        stored = s.load(s.resolve("last"))
    results = analyse(stored)
    bad = [(r.label, r.cell["step"], r.cell["status"], r.cell["message"]) for r in results
           if r.cell["status"] not in ("ok", "unsupported")]
    assert not bad
    (target,) = stored.targets
    assert target["dbms"] == "mariadb" and target["server_version"].startswith("10.")
    assert target["settings"]["innodb_flush_log_at_trx_commit"] == "1"
    # the serving thread's CPU clock, read by its OS thread id
    assert any(r.server_cpu_per_op_ns for r in results if r.cell["method"] == "py-mysqlclient")
    assert not processes_mentioning(workdir)


def test_engines_are_variants_on_mariadb_and_one_run_elsewhere_and_record_access_reads_what_sql_reads(
        tmp_path, workdir):
    stored, result = run(tmp_path, workdir, ENGINES, "--target", "mariadb,sqlite",
                         "--method", f"{PY_METHODS},py-sqlite3")
    cells = stored.cells
    assert {c["variant"] for c in cells if c["target"] == "mariadb"} == {"engine=InnoDB", "engine=MyISAM"}
    assert {c["variant"] for c in cells if c["target"] == "sqlite"} == {""}  # an engine means nothing there
    assert not [c for c in cells if c["status"] not in ("ok", "unsupported")], \
        [(c["method"], c["step"], c["status"], c["message"]) for c in cells if c["status"] not in ("ok", "unsupported")]
    by = {(c["method"], c["target"], c["variant"], c["step"]): c for c in cells}
    for variant in ("engine=InnoDB", "engine=MyISAM"):
        # HANDLER … READ FIRST/NEXT read the same records as SELECT *: the same checksum
        record = by[("py-mysqlclient", "mariadb", variant, "scan-record")]
        sql = by[("py-mysqlclient", "mariadb", variant, "scan-sql")]
        assert record["status"] == sql["status"] == "ok"
        assert (record["checksum"], record["verify_rows"]) == (sql["checksum"], sql["verify_rows"]) and sql["verify_rows"] == 1500
        keyed = by[("py-mariadb", "mariadb", variant, "get-record")]
        literal = by[("py-mariadb", "mariadb", variant, "get-literal")]
        assert keyed["checksum"] == literal["checksum"] and 0 < keyed["verify_rows"] < 200  # some keys are missing
    # record access is MariaDB's: elsewhere it is shown unsupported, never run another way
    assert by[("py-sqlite3", "sqlite", "", "scan-record")]["status"] == "unsupported"
    (target,) = [t for t in stored.targets if t["dbms"] == "mariadb"]
    assert target["settings"]["innodb_flush_log_at_trx_commit"] == "2"  # the suite's [server.mariadb]


def test_an_external_mariadb_touches_only_its_own_database_and_keeps_no_password(workdir, tmp_path):
    server = ManagedMariaDB()
    server.start(workdir)
    try:
        with pymysql.connect(unix_socket=server.socket, user="root", autocommit=True) as root, root.cursor() as cur:
            cur.execute("DROP DATABASE accessbench")  # as a server we have never touched
            cur.execute("CREATE DATABASE shop")
            for host in ("localhost", "127.0.0.1"):
                cur.execute(f"GRANT ALL ON shop.* TO 'accessbench'@'{host}'")
                # what a DBA grants a benchmark user: databases of accessbench's form, nothing else
                cur.execute(f"REVOKE ALL ON accessbench.* FROM 'accessbench'@'{host}'")
                cur.execute(f"GRANT ALL ON `accessbench\\_%`.* TO 'accessbench'@'{host}'")
            cur.execute("CREATE TABLE shop.customers (id INT PRIMARY KEY, name TEXT)")
            cur.execute("INSERT INTO shop.customers VALUES (1, 'ada'), (2, 'grace')")
        url = f"mariadb://accessbench:{server.password}@127.0.0.1:{server.port}/"
        store = tmp_path / "s.db"
        result = accessbench("--store", str(store), "run", "--quick", "--target", url, "--method", "py-mysqlclient",
                             "--trials", "1", "--warmup", "0", "--no-report")
        assert result.returncode == 0, result.stderr[-2000:]
        assert server.password not in result.stdout + result.stderr
        assert server.password.encode() not in store.read_bytes()
        assert f"mariadb://accessbench@127.0.0.1:{server.port}/" in result.stdout
        with pymysql.connect(unix_socket=server.socket, user="accessbench", password=server.password) as c:
            with c.cursor() as cur:
                cur.execute("SELECT * FROM shop.customers ORDER BY id")
                assert cur.fetchall() == ((1, "ada"), (2, "grace"))
                cur.execute("SHOW DATABASES LIKE 'accessbench'")
                assert cur.fetchall() == ()
    finally:
        server.admin = None  # its database is gone: nothing to close there
        server.stop()


def test_managed_servers_started_at_once_each_install_and_answer(workdir):
    # Parallel test workers start several servers together; sharing /tmp, their installers
    # once collided on internal temporary table names and one of them failed.
    servers = [ManagedMariaDB() for _ in range(6)]
    dirs = [os.path.join(workdir, str(n)) for n in range(len(servers))]
    for path in dirs:
        os.mkdir(path)
        os.chmod(path, 0o755)
    try:
        with ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda pair: pair[0].start(pair[1]), zip(servers, dirs)))
        for server in servers:
            assert server.query("SELECT 1") == [(1,)]
    finally:
        for server in servers:
            server.stop()


def test_a_bad_server_setting_is_one_clear_line(tmp_path, workdir):
    suite = tmp_path / "bad.toml"
    suite.write_text(ENGINES.replace("innodb_flush_log_at_trx_commit = 2", "no_such_setting = 1"))
    result = accessbench("run", "--suite", str(suite), "--target", "mariadb", "--method", "py-pymysql",
                         "--no-report", "--workdir", workdir)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "no_such_setting" in result.stderr + result.stdout


def test_variants_that_differ_only_in_engines_collapse_outside_mariadb():
    suite = parse(ENGINES, "engines.toml")
    assert [variant_label(v, suite.variants, "mariadb") for v in suite.variants] == ["engine=InnoDB", "engine=MyISAM"]
    assert [variant_label(v, suite.variants, "postgresql") for v in suite.variants] == ["", ""]

    class Target:
        def __init__(self, name, dbms):
            self.name, self.dbms = name, dbms

    pg, maria = Target("postgresql", "postgresql"), Target("mariadb", "mariadb")
    assert [[t.name for t in ts] for ts in variant_targets(suite.variants, [pg, maria])] == \
        [["postgresql", "mariadb"], ["mariadb"]]


def test_a_record_step_must_read_every_column_of_its_table():
    bad = ENGINES.replace('name = "scan-sql"', 'name = "scan-sql2"\nmode = "record"\nrecord = { table = "records" }', 1)
    bad = bad.replace('sql = "SELECT * FROM records"\niterations = 3\n\n[[steps]]\nname = "get',
                      'sql = "SELECT key1 FROM records"\niterations = 3\n\n[[steps]]\nname = "get', 1)
    with pytest.raises(SuiteError) as e:
        parse(bad, "bad.toml")
    assert "SELECT * FROM records" in str(e.value)


def test_autocommit_is_not_a_server_setting_a_suite_can_turn_off(tmp_path):
    suite = tmp_path / "ac.toml"
    suite.write_text(ENGINES.replace("innodb_flush_log_at_trx_commit = 2", "autocommit = 0"))
    result = accessbench("run", "--suite", str(suite), "--target", "mariadb", "--method", "py-pymysql")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{suite}:" in result.stderr and "commit_every" in result.stderr


def test_a_suite_setting_the_server_has_no_default_record_for_is_recorded_too(tmp_path, workdir):
    stored, _ = run(tmp_path, workdir, ENGINES.replace("innodb_flush_log_at_trx_commit = 2",
                                                       "innodb_flush_log_at_trx_commit = 2\ninnodb_log_buffer_size = 8388608"),
                    "--target", "mariadb", "--method", "py-mysqlclient")
    (target,) = stored.targets
    assert target["settings"]["innodb_log_buffer_size"] == "8388608"
