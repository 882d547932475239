"""A suite over the user's existing data (pure logic): what would write is refused before the
run, naming it; such a suite declares no table; --target env finds the server the user's own
client would. The runs themselves, on real servers holding a user's objects, are in
tests/test_external_safety.py."""

from __future__ import annotations

import pytest

from accessbench.errors import InputError, SuiteError
from accessbench.suite.loader import parse
from accessbench.suite.readonly import plannable, write_in
from accessbench.targets import environment


@pytest.mark.parametrize("sql, dbms", [
    ("SELECT count(*) FROM pg_class WHERE relkind = ?", "postgresql"),
    ("SELECT a FROM t UNION SELECT b FROM u", "mariadb"),
    ("WITH x AS (SELECT 1) SELECT * FROM x", None),
    ("VALUES (1)", "postgresql"),
    ("SHOW TABLES", "mariadb"),
    ("TABLE visitors", "postgresql"),
    ("EXPLAIN SELECT 1", "postgresql"),
    ("EXPLAIN ANALYZE SELECT 1", None),
    ("SELECT * FROM t WHERE a @@ to_tsquery(?)", "postgresql"),
    ("SELEC name FROM t", "postgresql"),  # not a statement: the server's EXPLAIN says so
])
def test_a_query_is_no_write(sql, dbms):
    assert write_in(sql, dbms) is None


@pytest.mark.parametrize("sql, dbms, write", [
    ("UPDATE t SET a = 1", None, "UPDATE"),
    ("INSERT INTO t VALUES (?)", "mariadb", "INSERT"),
    ("REPLACE INTO t VALUES (1)", "mariadb", "REPLACE"),
    ("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "postgresql", "DELETE"),
    ("SELECT * INTO newt FROM t", "postgresql", "SELECT … INTO"),
    ("SELECT * FROM t FOR UPDATE", "postgresql", "FOR UPDATE"),
    ("SELECT * FROM t LOCK IN SHARE MODE", "mariadb", "FOR SHARE"),
    ("EXPLAIN ANALYZE DELETE FROM t", "postgresql", "DELETE"),
    ("EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET a = 1", "postgresql", "UPDATE"),
    ("CREATE TEMPORARY TABLE x (a int)", "postgresql", "CREATE"),
    ("SET search_path = x", "postgresql", "SET"),
    ("CALL proc()", "postgresql", "CALL"),
    ("DO $$ BEGIN END $$", "postgresql", "DO"),
    ("COPY t TO STDOUT", "postgresql", "COPY"),
    ("VACUUM t", "postgresql", "VACUUM"),
    ("HANDLER t OPEN", "mariadb", "HANDLER"),
    ("PRAGMA journal_mode=WAL", "sqlite", "PRAGMA"),
    ("SELECT 1; DELETE FROM t", None, "2 statements"),
])
def test_a_statement_that_would_write_is_named_by_what_writes(sql, dbms, write):
    assert write_in(sql, dbms) == write


def test_only_a_statement_explain_can_precede_is_planned_before_the_run():
    assert plannable("SELECT 1") and plannable("WITH x AS (SELECT 1) SELECT * FROM x")
    assert not plannable("EXPLAIN SELECT 1") and not plannable("SHOW TABLES")


EXISTING = """\
[suite]
name = "mine"
data = "existing"
{extra}
[[steps]]
name = "by-id"
kind = "{kind}"
mode = "extended"
sql = "{sql}"
params = [{{ kind = "uniform", lo = 1, hi = 9 }}]
iterations = 10
{step_extra}
"""


def _existing(sql="SELECT name FROM visitors WHERE id = ?", kind="exec", extra="", step_extra=""):
    return EXISTING.format(sql=sql, kind=kind, extra=extra, step_extra=step_extra)


def test_a_suite_over_existing_data_declares_no_table_and_reads_only():
    suite = parse(_existing(), "mine.toml")
    assert suite.existing and suite.variants[0].tables == []


@pytest.mark.parametrize("text, line, says", [
    (_existing(sql="DELETE FROM visitors WHERE id = ?"), 9, "steps.0.sql: DELETE: data = \"existing\""),
    (_existing(step_extra='reset = ["DELETE FROM t"]'), 12, "no batch step, no reset"),
    (_existing(step_extra='check = "UPDATE t SET a = 1"'), 12, "steps.0.check: UPDATE"),
    (_existing(kind="page", step_extra='page = "updates"\nqueries = 2\nwrite = "UPDATE visitors SET n = ? WHERE id = ?"'),
     14, "steps.0.write: UPDATE"),  # TechEmpower's updates page writes by its own statement
    (_existing(extra='[setup]\npostgresql = ["CREATE INDEX ON visitors (name)"]\n'), 4, "no [setup]"),
    (_existing(extra='[[tables]]\nname = "t"\nrows = 1\ncolumns = [{ name = "a", type = "integer", '
                     'gen = { kind = "seq" } }]\n'), 4, "declares no [[tables]]"),
])
def test_what_would_write_in_a_suite_over_existing_data_is_one_line_naming_file_and_line(text, line, says):
    with pytest.raises(SuiteError) as e:
        parse(text, "mine.toml")
    assert str(e.value).startswith(f"mine.toml:{line}: ") and says in str(e.value), str(e.value)


def test_target_env_prefers_database_url_then_libpq_then_mariadbs_option_files(monkeypatch, tmp_path):
    for name in ("DATABASE_URL", *environment.LIBPQ_VARIABLES, "PGPASSWORD", "PGSERVICEFILE", "PGSSLMODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.my.cnf, no ~/.pg_service.conf
    with pytest.raises(InputError, match="--target env: nothing is set"):
        environment.url_from_environment()
    monkeypatch.setenv("PGHOST", "/var/run/postgresql")
    monkeypatch.setenv("PGUSER", "ada")
    monkeypatch.setenv("PGPASSWORD", "pa:ss/w@rd")
    monkeypatch.setenv("PGSSLMODE", "require")
    url, found = environment.url_from_environment()
    assert url.startswith("postgresql://ada:pa%3Ass%2Fw%40rd@%2Fvar%2Frun%2Fpostgresql:5432/") and "sslmode=require" in url
    assert found.startswith("libpq's environment (PGHOST, PGUSER")
    monkeypatch.setenv("DATABASE_URL", "mariadb://me@db:3306/shop")
    assert environment.url_from_environment() == ("mariadb://me@db:3306/shop", "DATABASE_URL")


def test_target_env_names_the_server_without_its_password(monkeypatch, tmp_path):
    from accessbench.targets import make

    for name in ("DATABASE_URL", *environment.LIBPQ_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PGHOST", "127.0.0.1")
    monkeypatch.setenv("PGPORT", "5999")
    monkeypatch.setenv("PGUSER", "ada")
    monkeypatch.setenv("PGDATABASE", "shop")
    monkeypatch.setenv("PGPASSWORD", "S3cret-pw")
    target = make("env")
    assert target.name == "postgresql://ada@127.0.0.1:5999/shop" and "S3cret" not in target.name
