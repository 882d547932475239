"""Touch nothing that is not ours: accessbench against servers it did not start.

A PostgreSQL and a MariaDB of the tests' own stand in for a user's servers. They hold the
user's objects — among them a schema (database) named ``accessbench``, the name earlier
versions took for their own — and every test checks that those survive byte for byte (a dump
of the user's databases, and the list of roles or users, before and after), whatever the run
did: finish, fail, run hostile SQL, time out, be interrupted twice or be killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psycopg
import pytest

from accessbench.store import Store
from accessbench.targets.mariadb import ManagedMariaDB
from accessbench.targets.postgresql import ManagedPostgres

from .conftest import SCRATCH, accessbench

pytestmark = pytest.mark.server

USER_PG_SQL = [
    "CREATE TABLE accessbench.orders (id integer PRIMARY KEY, note text)",
    "INSERT INTO accessbench.orders SELECT g, 'order ' || g FROM generate_series(1, 500) AS g",
    "CREATE VIEW accessbench.big_orders AS SELECT * FROM accessbench.orders WHERE id > 250",
    "CREATE FUNCTION accessbench.order_count() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM accessbench.orders'",
    "CREATE TABLE public.precious (id integer PRIMARY KEY, what text)",
    "INSERT INTO public.precious VALUES (1, 'keep me'), (2, 'me too')",
    # a schema with the form of a run's own name, but no mark: the user's, never dropped
    "CREATE SCHEMA accessbench_20250101_000000_abcd_ef01",
    "CREATE TABLE accessbench_20250101_000000_abcd_ef01.lookalike (id integer)",
    "CREATE SEQUENCE public.tickets",
    "CREATE ROLE plain LOGIN PASSWORD 'plain-S3cret-pw'",
    "GRANT CREATE ON DATABASE accessbench TO plain",
]

SLEEPY_SUITE = """\
[suite]
name = "sleepy"

[[tables]]
name = "t"
rows = 20
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "stuck"
kind = "exec"
mode = "literal"
sql = "SELECT SLEEPFN FROM t LIMIT 1"
iterations = 1

[[steps]]
name = "after"
kind = "scan"
sql = "SELECT id FROM t"
iterations = 3
"""

HOSTILE_SUITE = """\
[suite]
name = "hostile"

[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[setup]
postgresql = ["DROP SCHEMA public CASCADE"]
mariadb = ["DROP DATABASE shop"]

[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT id FROM t"
iterations = 2

[[steps]]
name = "wipe"
kind = "exec"
mode = "literal"
sql = "DROP TABLE accessbench.orders"
sql_for = { mariadb = "DROP TABLE shop.customers" }
iterations = 1
"""


class UserPostgres:
    """The user's PostgreSQL: a superuser URL (a DBA's), and one of a user who may not create roles."""

    def __init__(self, pg: ManagedPostgres) -> None:
        self.pg = pg
        self.dba = f"postgresql://accessbench:{pg.password}@127.0.0.1:{pg.port}/accessbench"
        self.dba_name = f"postgresql://accessbench@127.0.0.1:{pg.port}/accessbench"
        self.plain = f"postgresql://plain:plain-S3cret-pw@127.0.0.1:{pg.port}/accessbench"
        self.secrets = [pg.password, "plain-S3cret-pw"]

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(host=self.pg.sockdir, port=self.pg.port, user="accessbench", dbname="accessbench",
                               autocommit=True)

    def snapshot(self) -> str:
        """The user's database as pg_dump writes it, and every role: what must not change."""
        dump = subprocess.run([f"{self.pg.bindir}/pg_dump", "-h", self.pg.sockdir, "-p", str(self.pg.port),
                               "-U", "accessbench", "accessbench"], capture_output=True, text=True, check=True).stdout
        # pg_dump's \restrict lines carry a random key per dump
        dump = "\n".join(line for line in dump.splitlines() if not line.startswith(("\\restrict", "\\unrestrict")))
        with self.connect() as c:
            roles = c.execute("SELECT rolname, rolsuper, rolcreaterole FROM pg_roles ORDER BY 1").fetchall()
        return dump + "\n" + json.dumps(roles)

    def run_objects(self) -> list[str]:
        with self.connect() as c:
            return [r[0] for r in c.execute(
                "SELECT nspname FROM pg_namespace WHERE obj_description(oid, 'pg_namespace') LIKE 'accessbench run %'"
                " UNION ALL SELECT rolname FROM pg_roles WHERE shobj_description(oid, 'pg_authid') LIKE 'accessbench run %'")]


class UserMariaDB:
    def __init__(self, maria: ManagedMariaDB) -> None:
        self.maria = maria
        self.password = "dba-S3cret-pw"
        self.dba = f"mariadb://dba:{self.password}@127.0.0.1:{maria.port}/"
        self.dba_name = f"mariadb://dba@127.0.0.1:{maria.port}/"
        self.limited = f"mariadb://app:app-S3cret-pw@127.0.0.1:{maria.port}/"
        self.secrets = [self.password, "app-S3cret-pw", maria.password]

    def root(self):
        return self.maria._connect(unix_socket=self.maria.socket, user="root")

    def snapshot(self) -> str:
        dump = subprocess.run(["mariadb-dump", f"--socket={self.maria.socket}", "--user=root", "--skip-dump-date",
                               "--routines", "--databases", "accessbench", "shop"],
                              capture_output=True, text=True, check=True).stdout
        with self.root() as c, c.cursor() as cur:
            cur.execute("SELECT User, Host FROM mysql.user ORDER BY 1, 2")
            users = cur.fetchall()
            cur.execute("SHOW DATABASES")
            databases = cur.fetchall()
        return dump + json.dumps([users, databases])

    def run_objects(self) -> list[str]:
        with self.root() as c, c.cursor() as cur:
            cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_COMMENT LIKE 'accessbench run %'"
                        " UNION ALL SELECT DISTINCT User FROM mysql.user WHERE User LIKE 'accessbench\\_2%'")
            return [r[0] for r in cur.fetchall()]


def _workdir() -> str:
    path = tempfile.mkdtemp(prefix="accessbench-test-")
    os.chmod(path, 0o755)
    return path


@pytest.fixture(scope="module")
def user_pg():
    workdir = _workdir()
    pg = ManagedPostgres()
    pg.start(workdir)
    try:
        for sql in USER_PG_SQL:
            pg.execute(sql)
        yield UserPostgres(pg)
    finally:
        pg.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def user_maria():
    if os.geteuid() != 0:
        pytest.skip("*** the MariaDB safety tests log in as the server's root by its socket: run them as root ***")
    workdir = _workdir()
    maria = ManagedMariaDB()
    maria.start(workdir)
    try:
        server = UserMariaDB(maria)
        with server.root() as c, c.cursor() as cur:
            for host in ("localhost", "%"):
                cur.execute(f"CREATE USER 'dba'@'{host}' IDENTIFIED BY '{server.password}'")
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO 'dba'@'{host}' WITH GRANT OPTION")
                cur.execute(f"CREATE USER 'app'@'{host}' IDENTIFIED BY 'app-S3cret-pw'")
                cur.execute(f"GRANT CREATE, DROP, SELECT, INSERT, UPDATE, DELETE, INDEX ON *.* TO 'app'@'{host}'")
            cur.execute("CREATE TABLE accessbench.orders (id integer PRIMARY KEY, note text)")
            cur.execute("INSERT INTO accessbench.orders SELECT seq, CONCAT('order ', seq) FROM accessbench.seq_1_to_500")
            cur.execute("CREATE VIEW accessbench.big_orders AS SELECT * FROM accessbench.orders WHERE id > 250")
            cur.execute("CREATE DATABASE shop")
            cur.execute("CREATE TABLE shop.customers (id integer PRIMARY KEY, name text)")
            cur.execute("INSERT INTO shop.customers VALUES (1, 'ada'), (2, 'grace')")
            cur.execute("CREATE SEQUENCE shop.tickets")
        yield server
    finally:
        maria.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _run(store, *args, timeout=600, **kwargs):
    return accessbench("--store", str(store), "run", "--no-report", "--warmup", "0", "--trials", "2", "--precision", "0",
                       *args,
                       timeout=timeout, **kwargs)


def _suite(tmp_path, text: str, name: str = "suite.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _no_secret(server, *texts) -> None:
    for text in texts:
        for secret in server.secrets:
            assert secret not in text


def _first_line(stdout: str) -> str:
    """The run's first line, as one line however the console wrapped it."""
    return " ".join(stdout.split("\nidle CPUs")[0].split())


def _last_run(store):
    with Store(str(store)) as s:
        return s.load(s.resolve("last"))


# 1. a user's schema named accessbench, and everything else of theirs, survives a run

@pytest.mark.parametrize("fixture, methods, statuses, own", [
    ("user_pg", "py-psycopg,c-libpq", {"ok"}, "owned by role accessbench_"),
    ("user_maria", "py-pymysql,c-libmariadb", {"ok", "unsupported"}, "used as user accessbench_"),  # PyMySQL: literal only
])
def test_a_run_on_an_external_server_leaves_the_users_own_accessbench_objects_byte_for_byte(
        fixture, methods, statuses, own, request, tmp_path):
    server = request.getfixturevalue(fixture)
    before = server.snapshot()
    result = _run(tmp_path / "s.db", "--quick", "--target", server.dba, "--method", methods)
    assert result.returncode == 0, result.stderr[-2000:]
    assert server.snapshot() == before
    assert server.run_objects() == []
    _no_secret(server, result.stdout, result.stderr, (tmp_path / "s.db").read_bytes().decode("latin-1"))
    run = _last_run(tmp_path / "s.db")
    assert {c["status"] for c in run.cells} == statuses
    # the run worked in its own schema (database), as a role (user) of its own
    assert own in run.targets[0]["settings"]["accessbench's objects"]


# 2. a suite's SQL is confined to the run's own schema or database

def test_a_suites_hostile_sql_cannot_touch_the_users_objects_and_the_run_fails(user_pg, user_maria, tmp_path):
    suite = _suite(tmp_path, HOSTILE_SUITE)
    for server, method in ((user_pg, "py-psycopg"), (user_maria, "py-pymysql")):
        before = server.snapshot()
        store = tmp_path / f"{method}.db"
        result = _run(store, "--suite", suite, "--target", server.dba, "--method", method)
        assert result.returncode == 1, result.stderr[-2000:]  # nothing measured: a failed run
        assert server.snapshot() == before
        assert server.run_objects() == []
        run = _last_run(store)
        assert run.run["status"] == "failed" and "nothing was measured" in run.run["message"]
        assert {c["status"] for c in run.cells} == {"error"}
        assert "setup `DROP" in run.cells[0]["message"]


def test_a_user_who_may_not_create_roles_has_a_suite_refused_in_one_line_before_anything_runs(user_pg, tmp_path):
    before = user_pg.snapshot()
    result = _run(tmp_path / "s.db", "--suite", _suite(tmp_path, HOSTILE_SUITE), "--target", user_pg.plain,
                  "--method", "py-psycopg")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--unconfined-sql" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert user_pg.snapshot() == before and user_pg.run_objects() == []
    _no_secret(user_pg, result.stdout, result.stderr)


def test_a_built_in_suite_runs_for_a_user_who_may_not_create_roles_in_a_schema_of_its_own(user_pg, user_maria, tmp_path):
    for server, method in ((user_pg, "py-psycopg"), (user_maria, "py-mysqlclient")):
        before = server.snapshot()
        url = server.plain if server is user_pg else server.limited
        result = _run(tmp_path / f"{method}.db", "--quick", "--target", url, "--method", method)
        assert result.returncode == 0, result.stderr[-2000:]
        assert server.snapshot() == before and server.run_objects() == []


# 3. two runs on one server do not see each other

def test_two_runs_at_once_on_one_server_each_verify_their_own_data(user_pg, tmp_path):
    before = user_pg.snapshot()
    procs = [subprocess.Popen([sys.executable, "-m", "accessbench", "--store", str(tmp_path / f"{i}.db"), "run",
                               "--no-report", "--quick", "--target", user_pg.dba, "--method", "py-psycopg,c-libpq",
                               "--trials", "2", "--warmup", "0", "--precision", "0"], cwd=SCRATCH, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
    for i in range(2):
        run = _last_run(tmp_path / f"{i}.db")
        assert {c["status"] for c in run.cells} == {"ok"}
    assert user_pg.snapshot() == before and user_pg.run_objects() == []


# 4. a timed-out statement does not keep running on the server, nor hold up the clean-up

@pytest.mark.parametrize("dbms", ["postgresql", "mariadb"])
def test_a_timed_out_statement_is_cancelled_on_the_server_and_the_run_goes_on(dbms, request, tmp_path):
    server = request.getfixturevalue("user_pg" if dbms == "postgresql" else "user_maria")
    sleep = "pg_sleep(1000)" if dbms == "postgresql" else "SLEEP(1000)"
    suite = _suite(tmp_path, SLEEPY_SUITE.replace("SLEEPFN", sleep))
    method = "py-psycopg,c-libpq" if dbms == "postgresql" else "py-pymysql,c-libmariadb"
    before = server.snapshot()
    result = _run(tmp_path / "s.db", "--suite", suite, "--target", server.dba, "--method", method, "--timeout", "3",
                  timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    run = _last_run(tmp_path / "s.db")
    cells = {(c["method"], c["step"]): c for c in run.cells}
    for m in method.split(","):
        assert cells[(m, "stuck")]["status"] == "timeout"
        assert "cancelled on the server" in cells[(m, "stuck")]["message"]
        assert cells[(m, "after")]["status"] == "ok"
    # nothing of the run still sleeps on the server (the statement held a lock on t: the
    # clean-up's drop would have waited for it)
    if dbms == "postgresql":
        with server.connect() as c:
            assert c.execute("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(1000)%'"
                             " AND pid <> pg_backend_pid()").fetchone()[0] == 0
    else:
        with server.root() as c, c.cursor() as cur:
            cur.execute("SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%SLEEP(1000)%'"
                        " AND ID <> CONNECTION_ID()")
            assert cur.fetchone()[0] == 0
    assert server.snapshot() == before and server.run_objects() == []


# clean-up interrupted: a second Ctrl-C says what was left where, and `clean` removes it

def _stored_trials(store) -> int:
    """Timed trials the run in ``store`` has committed so far (0 before its run row exists)."""
    try:
        with Store(str(store)) as s:
            return s.measured(s.resolve("last"))
    except Exception:
        return 0


def _wait_for(predicate, what: str, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}")


def test_a_second_ctrl_c_during_clean_up_says_what_was_left_and_clean_removes_only_that(user_pg, tmp_path):
    before = user_pg.snapshot()
    earlier = user_pg.run_objects()  # none, unless an earlier test failed: never this run's
    store = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "accessbench", "--store", str(store), "run", "--no-report",
                             "--quick", "--target", user_pg.dba, "--method", "py-psycopg", "--trials", "50"],
                            cwd=SCRATCH, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    blocker = user_pg.connect()
    try:
        # once the run has its schema and tables, hold a lock its drop will have to wait for
        schema = _wait_for(lambda: blocker.execute(
            "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname LIKE 'accessbench\\_2%%' AND c.relname = 'webhits' AND NOT n.nspname = ANY(%s)",
            [earlier]).fetchone(), "the run's table")[0]
        blocker.autocommit = False
        blocker.execute(f'LOCK TABLE "{schema}".webhits IN ACCESS SHARE MODE')
        _wait_for(lambda: _stored_trials(store), "a stored trial")
        proc.send_signal(signal.SIGINT)
        watcher = user_pg.connect()
        _wait_for(lambda: watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                          " AND query LIKE 'DROP SCHEMA%'").fetchone()[0], "the drop to wait")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        blocker.rollback()
        blocker.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    left = [line for line in out.splitlines() if line.startswith("left behind:")]
    assert any(schema in line and "accessbench clean --target" in line for line in left), out[-2000:]
    for line in left:  # each is true: what it names is there
        if "work directory" in line:
            workdir = line.rsplit(" ", 1)[1]
            assert os.path.isdir(workdir)
            shutil.rmtree(workdir)
    _no_secret(user_pg, out, err)
    assert sorted(user_pg.run_objects()) == [schema, schema]  # the schema and the role
    listed = accessbench("clean", "--target", user_pg.dba)
    assert listed.returncode == 0 and schema in listed.stdout
    assert "lookalike" not in listed.stdout and "abcd_ef01" not in listed.stdout
    removed = accessbench("clean", "--target", user_pg.dba, "--yes")
    assert removed.returncode == 0, removed.stderr
    assert user_pg.run_objects() == []
    assert user_pg.snapshot() == before
    assert _last_run(store).run["status"] == "interrupted"


# a run killed outright cannot drop what it made: `clean` finds exactly that, and removes it

def test_clean_removes_what_a_killed_run_left_on_mariadb_and_nothing_else(user_maria, tmp_path):
    before = user_maria.snapshot()
    store = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "accessbench", "--store", str(store), "run", "--no-report",
                             "--quick", "--target", user_maria.dba, "--method", "py-mysqlclient", "--trials", "50",
                             "--workdir", str(tmp_path)],  # a killed run cannot remove its work directory
                            cwd=SCRATCH, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _wait_for(lambda: _stored_trials(store), "a stored trial")
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its workers: nothing can clean up
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = user_maria.run_objects()
    assert len(left) == 2 and left[0] == left[1]  # the run's database and its user
    listed = accessbench("clean", "--target", user_maria.dba)
    assert listed.returncode == 0 and left[0] in listed.stdout and "shop" not in listed.stdout
    assert "remove them with" in listed.stdout
    assert user_maria.run_objects() == left  # listing removes nothing
    removed = accessbench("clean", "--target", user_maria.dba, "--yes")
    assert removed.returncode == 0, removed.stderr
    assert user_maria.run_objects() == []
    assert user_maria.snapshot() == before
    assert _last_run(store).run["status"] == "running"  # as the killed run left it: --resume can carry it on


# 6. a run over the user's own data creates nothing and writes nothing

# (fixture, methods, a query of the user's table, a write no check before the run can see: a sequence advanced)
EXISTING = [
    ("user_pg", "py-psycopg,c-libpq", "SELECT id, note FROM accessbench.orders WHERE id = ?",
     "SELECT nextval('public.tickets')"),
    ("user_maria", "py-pymysql,c-libmariadb", "SELECT id, note FROM accessbench.orders WHERE id = ?",
     "SELECT NEXTVAL(shop.tickets)"),
]


@pytest.mark.parametrize("fixture, methods, query, write", EXISTING)
def test_a_run_over_existing_data_creates_nothing_and_leaves_every_object_and_row_byte_for_byte(
        fixture, methods, query, write, request, tmp_path):
    server = request.getfixturevalue(fixture)
    before = server.snapshot()
    result = _run(tmp_path / "s.db", "--quick", "--target", server.dba, "--method", methods,
                  "--sql", query, "--param", "uniform(1, 500)", "--sql", "SELECT count(*) FROM accessbench.orders")
    assert result.returncode == 0, result.stderr[-2000:]
    assert server.snapshot() == before
    assert server.run_objects() == []
    _no_secret(server, result.stdout, result.stderr, (tmp_path / "s.db").read_bytes().decode("latin-1"))
    assert "over its existing data, read-only" in _first_line(result.stdout)
    run = _last_run(tmp_path / "s.db")
    assert "ok" in {c["status"] for c in run.cells} <= {"ok", "unsupported"}
    assert run.targets[0]["settings"]["accessbench's objects"].startswith("none: the data already there")


@pytest.mark.parametrize("fixture, methods, query, write", EXISTING)
def test_a_write_no_check_can_see_is_refused_by_the_server_itself(fixture, methods, query, write, request, tmp_path):
    server = request.getfixturevalue(fixture)
    before = server.snapshot()
    result = _run(tmp_path / "s.db", "--quick", "--target", server.dba, "--method", methods, "--sql", write,
                  "--mode", "literal,extended")
    assert server.snapshot() == before  # the sequence did not move
    if result.returncode == 2:  # MariaDB refuses even to plan it in a read-only session: before the run, in its words
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("accessbench: --sql: ") and "READ ONLY" in line, line
        return
    assert result.returncode == 1, result.stderr[-2000:]  # nothing measured
    run = _last_run(tmp_path / "s.db")
    errors = [c for c in run.cells if c["status"] == "error"]
    assert errors and {c["status"] for c in run.cells} <= {"error", "unsupported"}
    for cell in errors:  # the server's own refusal: a read-only transaction (SQLSTATE 25006)
        assert "25006" in cell["message"] or "read-only" in cell["message"] or "READ ONLY" in cell["message"], cell


@pytest.mark.parametrize("sql, says", [
    ("SELECT note FROM accessbench.no_such_orders WHERE id = ?", "no_such_orders"),
    ("SELEC note FROM accessbench.orders WHERE id = ?", "syntax"),
    ("UPDATE accessbench.orders SET note = 'x' WHERE id = ?", "writes (UPDATE)"),
])
def test_a_statement_the_server_would_not_run_is_one_line_naming_which_before_anything_runs(sql, says, user_pg, tmp_path):
    before = user_pg.snapshot()
    result = _run(tmp_path / "s.db", "--quick", "--target", user_pg.dba, "--method", "py-psycopg",
                  "--sql", "SELECT 1", "--sql", sql, "--param", "uniform(1, 500)")
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("accessbench: --sql 2: ") and says in line and "orders" in line
    assert "Traceback" not in result.stdout + result.stderr
    assert user_pg.snapshot() == before and user_pg.run_objects() == []
    _no_secret(user_pg, result.stdout, result.stderr)


def test_a_sql_file_runs_over_existing_tables_and_its_suite_can_be_kept_and_run_again(user_maria, tmp_path):
    queries = tmp_path / "queries.sql"
    queries.write_text("-- step: by-id\n-- param: uniform(1, 500)\nSELECT id, note\n  FROM accessbench.orders\n"
                       " WHERE id = ?;\n\n-- every customer\nSELECT id, name FROM shop.customers ORDER BY id;\n")
    before = user_maria.snapshot()
    kept = tmp_path / "kept.toml"
    result = _run(tmp_path / "s.db", "--quick", "--target", user_maria.dba, "--method", "c-libmariadb",
                  "--sql-file", str(queries), "--mode", "prepared", "--save-suite", str(kept))
    assert result.returncode == 0, result.stderr[-2000:]
    run = _last_run(tmp_path / "s.db")
    assert sorted(c["step"] for c in run.cells) == ["by-id-prepared", "sql2-prepared"]
    assert {c["status"] for c in run.cells} == {"ok"}
    again = _run(tmp_path / "again.db", "--quick", "--target", user_maria.dba, "--method", "c-libmariadb",
                 "--suite", str(kept))
    assert again.returncode == 0, again.stderr[-2000:]
    assert {c["status"] for c in _last_run(tmp_path / "again.db").cells} == {"ok"}
    assert user_maria.snapshot() == before and user_maria.run_objects() == []
    _no_secret(user_maria, result.stdout, again.stdout, kept.read_text())


# 7. --target env: the server the user's own client would reach

def test_target_env_reads_database_url_and_libpq_variables_and_a_service_file_and_never_shows_the_password(
        user_pg, tmp_path):
    pg = user_pg.pg
    service = tmp_path / "pg_service.conf"
    service.write_text(f"[app]\nhost=127.0.0.1\nport={pg.port}\ndbname=accessbench\nuser=accessbench\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PG") and k != "DATABASE_URL"}
    ways = [
        ({"DATABASE_URL": user_pg.dba}, ["--sql", "SELECT count(*) FROM accessbench.orders"], "(from DATABASE_URL)"),
        ({"PGHOST": "127.0.0.1", "PGPORT": str(pg.port), "PGUSER": "accessbench", "PGDATABASE": "accessbench",
          "PGPASSWORD": pg.password}, ["--target", "env", "--sql", "SELECT count(*) FROM accessbench.orders"], ""),
        ({"PGSERVICEFILE": str(service), "PGSERVICE": "app", "PGPASSWORD": pg.password},
         ["--target", "env", "--sql", "SELECT count(*) FROM accessbench.orders"], ""),
    ]
    for i, (env, args, says) in enumerate(ways):
        store = tmp_path / f"{i}.db"
        result = _run(store, "--quick", "--method", "c-libpq", "--mode", "extended", *args, env={**clean, **env})
        assert result.returncode == 0, result.stderr[-2000:]
        first = _first_line(result.stdout)
        assert f"postgresql://accessbench@127.0.0.1:{pg.port}/accessbench" in first and says in first
        _no_secret(user_pg, result.stdout, result.stderr, store.read_bytes().decode("latin-1"))
    nothing = _run(tmp_path / "n.db", "--target", "env", "--sql", "SELECT 1", env={**clean, "HOME": str(tmp_path)})
    assert nothing.returncode == 2 and nothing.stderr.startswith("accessbench: --target env: nothing is set")


def test_target_env_reads_mariadb_option_files_as_the_client_does(user_maria, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".my.cnf").write_text(f"[client]\nuser=dba\npassword={user_maria.password}\nhost=127.0.0.1\n"
                                  f"port={user_maria.maria.port}\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "MYSQL")) and k != "DATABASE_URL"}
    result = _run(tmp_path / "s.db", "--quick", "--target", "env", "--method", "c-libmariadb", "--mode", "literal",
                  "--sql", "SELECT count(*) FROM shop.customers", env={**clean, "HOME": str(home)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"mariadb://dba@127.0.0.1:{user_maria.maria.port}/" in _first_line(result.stdout)
    _no_secret(user_maria, result.stdout, result.stderr, (tmp_path / "s.db").read_bytes().decode("latin-1"))
