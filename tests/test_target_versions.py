"""A server's version is part of a target's identity: ``--target postgresql@15`` is the managed
server of that version, named so, with a work directory of its own, beside ``postgresql`` in
one run. Versions are those installed on this machine: PostgreSQL 15 and MariaDB 10.11 from
Debian, PostgreSQL 13, 14, 16, 17 and 18 from the npm packages `make setup` installs
(servers/postgresql); the servers the tests start are real."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from accessbench import targets
from accessbench.errors import InputError
from accessbench.runner.select import select
from accessbench.suite.loader import load
from accessbench.targets.mariadb import ManagedMariaDB
from accessbench.targets.postgresql import NPM_SERVERS, ManagedPostgres, installed_versions
from accessbench.targets.url import HIDDEN

from .conftest import QUICK_STEPS, accessbench

QUICK = load("quick", quick=True)


def refusal(spec: str) -> str:
    with pytest.raises(InputError) as caught:
        targets.make(spec)
    return str(caught.value)


def selected(*specs: str) -> list[str]:
    chosen = select(QUICK, targets=list(specs), method_missing=lambda m: None, path_missing=lambda p: None)
    return [t.name for t in chosen.targets]


# --- what a spec names ---------------------------------------------------------------------

def test_a_version_spec_makes_a_target_named_with_its_version_and_the_installed_binaries():
    target = targets.make("postgresql@15")
    assert isinstance(target, ManagedPostgres)
    assert (target.name, target.version, target.dbms) == ("postgresql@15", "15", "postgresql")
    assert target.bindir == "/usr/lib/postgresql/15/bin"


def test_a_spec_without_a_version_is_the_managed_target_as_before():
    target = targets.make("postgresql")
    assert (target.name, target.version) == ("postgresql", None)
    assert target.bindir == "/usr/lib/postgresql/15/bin"  # the newest installed


def test_the_bin_directory_accessbench_pg_bindir_names_is_listed_under_its_own_version(monkeypatch):
    monkeypatch.setenv("ACCESSBENCH_PG_BINDIR", "/usr/local/bin")  # links to PostgreSQL 15's programs
    assert targets.make("postgresql@15").bindir == "/usr/local/bin"
    assert targets.make("postgresql").bindir == "/usr/local/bin"


def test_an_alias_with_a_version_is_named_by_the_canonical_name():
    assert targets.make("postgres@15").name == "postgresql@15"
    assert targets.make("mysql@10.11").name == "mariadb@10.11"


def test_mariadb_versions_are_major_dot_minor_of_the_installed_mariadbd():
    target = targets.make("mariadb@10.11")
    assert isinstance(target, ManagedMariaDB)
    assert (target.name, target.version) == ("mariadb@10.11", "10.11")


def test_a_version_not_installed_is_one_input_error_line_naming_the_installed_ones():
    message = refusal("postgresql@12")
    installed = ", ".join(f"{v} (postgresql@{v})" for v in installed_versions())
    assert message == f"--target postgresql@12: PostgreSQL 12 is not installed here; installed: {installed}"
    assert "15 (postgresql@15)" in installed
    assert refusal("mariadb@10") == ("--target mariadb@10: MariaDB 10 is not installed here; "
                                     "installed: 10.11 (mariadb@10.11)")
    assert "\n" not in refusal("postgresql@")


def test_an_embedded_dbms_refuses_a_version_since_its_version_is_each_workers_librarys():
    message = refusal("sqlite@3.40")
    assert message.startswith("--target sqlite@3.40: SQLite's version is each worker's library's, not a server's")
    assert "no @VERSION" in message and "\n" not in message
    assert "no @VERSION" in refusal("duckdb@1.1")


def test_a_url_with_user_info_is_still_a_url_target_and_its_password_appears_in_no_message():
    spec = "postgresql://u:sekrit@host/db"
    target = targets.make(spec)
    assert (target.managed, target.name, target.version) == (False, "postgresql://u@host/db", None)
    assert targets.dbms_of(spec) == "postgresql"
    with pytest.raises(InputError) as caught:  # a message that names the spec
        select(QUICK, methods=["py-sqlite3"], targets=[spec], method_missing=lambda m: None,
               path_missing=lambda p: None)
    assert "sekrit" not in str(caught.value) and f"u:{HIDDEN}@host" in str(caught.value)
    with pytest.raises(InputError) as caught:
        select(QUICK, targets=[spec, "postgresql://u:other@host/db"], method_missing=lambda m: None,
               path_missing=lambda p: None)
    assert "sekrit" not in str(caught.value) and "other" not in str(caught.value)


def test_the_dbms_of_a_spec_is_read_from_its_name_alias_version_or_url_scheme():
    assert [targets.dbms_of(s) for s in ("postgres@15", "sqlite@3.40", "mysql://me@db/", "nosuch@1", "sqlite")] == \
        ["postgresql", "sqlite", "mariadb", None, "sqlite"]


def test_a_cluster_run_refuses_an_embedded_target_also_with_a_version():
    from types import SimpleNamespace

    from accessbench.runner.prepare import _cluster_paths

    request = SimpleNamespace(cluster=SimpleNamespace(local=False, text="tcp://scheduler:8786"),
                              target=["postgresql", "sqlite@3.40"], path=None)
    with pytest.raises(InputError, match=r"^--target sqlite@3\.40: embedded, so no client"):
        _cluster_paths(request)


def test_a_target_and_its_versioned_twin_are_two_targets_but_one_named_twice_is_refused():
    assert selected("postgresql", "postgresql@15") == ["postgresql", "postgresql@15"]
    with pytest.raises(InputError, match=r"^--target postgres: names postgresql again; name each target once$"):
        selected("postgresql", "postgres")
    with pytest.raises(InputError, match=r"^--target postgres@15: names postgresql@15 again"):
        selected("postgresql@15", "postgres@15")


def test_a_targets_own_directory_is_its_name_made_safe_and_unchanged_for_todays_names():
    assert os.path.basename(targets.make("postgresql@15").own_directory("/w")) == "postgresql-15"
    assert os.path.basename(targets.make("mariadb@10.11").own_directory("/w")) == "mariadb-10.11"
    assert targets.make("postgresql").own_directory("/w") == "/w/postgresql"
    assert targets.make("mariadb").own_directory("/w") == "/w/mariadb"


# --- servers started for real ---------------------------------------------------------------

@pytest.mark.server
@pytest.mark.parametrize("spec, version_sql, version, directory", [
    ("postgresql@15", "SHOW server_version", "15", "postgresql-15"),
    ("mariadb@10.11", "SELECT VERSION()", "10.11.", "mariadb-10.11"),
])
def test_a_versioned_server_starts_for_real_says_its_version_and_keeps_its_files_in_a_directory_named_after_it(
        workdir, spec, version_sql, version, directory):
    target = targets.make(spec)
    try:
        target.start(workdir)
        assert target.query(version_sql)[0][0].startswith(version)
        assert target.describe()["server_version"].startswith(version)
        assert os.path.isdir(os.path.join(workdir, directory))
    finally:
        target.stop()
    assert not os.path.exists(os.path.join(workdir, directory))


@pytest.mark.server
def test_postgresql_and_postgresql_at_15_in_one_run_hold_separate_work_directories(workdir):
    newest, fifteen = targets.make("postgresql"), targets.make("postgresql@15")
    try:
        newest.start(workdir)
        fifteen.start(workdir)
        assert {os.path.dirname(newest.datadir), os.path.dirname(fifteen.datadir)} == {
            os.path.join(workdir, "postgresql"), os.path.join(workdir, "postgresql-15")}
        assert newest.port != fifteen.port and newest.sockdir != fifteen.sockdir
        assert newest.query("SELECT 1") == [(1,)] and fifteen.query("SELECT 2") == [(2,)]
    finally:
        fifteen.stop()
        newest.stop()


# --- PostgreSQL 13 to 18 ----------------------------------------------------------------------

NPM_MAJORS = ("13", "14", "16", "17", "18")


def npm_servers_installed() -> None:
    """make setup installs them with npm; without Node.js it says loudly that it skipped them."""
    if not os.path.isdir(NPM_SERVERS):
        pytest.skip(f"PostgreSQL {', '.join(NPM_MAJORS)} are not installed ({NPM_SERVERS}): make setup installs "
                    "them with npm, and skipped them for want of node or npm")


def test_every_major_from_13_to_18_is_installed_and_postgresql_stays_debians_15():
    npm_servers_installed()
    assert sorted(installed_versions(), key=int) == ["13", "14", "15", "16", "17", "18"]
    assert targets.make("postgresql").bindir == "/usr/lib/postgresql/15/bin"
    assert targets.make("postgresql@15").bindir == "/usr/lib/postgresql/15/bin"


@pytest.mark.server
def test_a_server_a_user_cannot_enter_is_run_from_a_copy_in_the_targets_own_directory(workdir, tmp_path,
                                                                                          monkeypatch):
    npm_servers_installed()
    if os.geteuid() != 0:
        pytest.skip("only root runs the server as another OS user")
    hidden = tmp_path / "hidden"
    hidden.mkdir(mode=0o700)
    shutil.copytree(os.path.join(NPM_SERVERS, "postgresql-13", "native"), hidden / "native", symlinks=True)
    monkeypatch.setenv("ACCESSBENCH_PG_BINDIR", str(hidden / "native" / "bin"))
    target = targets.make("postgresql@13")
    assert target.bindir == str(hidden / "native" / "bin")
    try:
        target.start(workdir)
        assert target.bindir == os.path.join(workdir, "postgresql-13", "server", "bin")
        assert target.query("SHOW server_version")[0][0].startswith("13.")
    finally:
        target.stop()


@pytest.mark.server
def test_each_postgresql_version_loads_and_verifies_the_quick_suite_in_one_run(tmp_path):
    npm_servers_installed()
    store = tmp_path / "versions.db"
    specs = ["postgresql@13", "postgresql@14", "postgresql", "postgresql@16", "postgresql@17", "postgresql@18"]
    result = accessbench("--store", str(store), "run", "--quick", "--target", ",".join(specs),
                         "--method", "py-psycopg,c-libpq", "--path", "unix", "--step", QUICK_STEPS, "--trials", "1", "--warmup", "0",
                         "--precision", "0", "--no-report")
    assert result.returncode == 0, result.stderr[-3000:]
    from accessbench.store import Store

    with Store(str(store)) as s:
        stored = s.load(s.resolve("last"))
    versions = {t.target: t.server_version for t in stored.targets}
    assert sorted(versions) == sorted(specs)
    for spec in specs:
        major = spec.partition("@")[2] or "15"
        assert versions[spec].startswith(f"{major}.")
    by_target: dict[str, set[str]] = {}
    for cell in stored.cells:
        by_target.setdefault(cell.target, set()).add(cell.status)
    assert by_target == {spec: {"ok"} for spec in specs}
    # the HTML report filters by server version: one box per version, each target mapped to its own
    from accessbench.report.html import render_html

    page = render_html(stored)
    labels = {spec: f"postgresql {versions[spec].split()[0]}" for spec in specs}
    for label in labels.values():
        assert f'<input type="checkbox" data-key="version" value="{label}" checked>' in page
    mapping = re.search(r'<script type="application/json" id="target-versions">(.*?)</script>', page).group(1)
    assert json.loads(mapping) == labels


@pytest.mark.server
@pytest.mark.parametrize("dbms", ["postgresql", "mariadb"])
def test_a_managed_server_whose_port_is_taken_before_it_binds_starts_again_on_another(dbms, workdir, port_taken_first):
    # the port free_port chose is taken in between (here on purpose; in a run, by any process's
    # own outgoing connection): the server starts on the next one instead of failing the target
    import socket

    from accessbench import net

    server, port_sql = {"postgresql": (ManagedPostgres(), "SELECT current_setting('port')"),
                        "mariadb": (ManagedMariaDB(), "SELECT @@port")}[dbms]
    taken = port_taken_first(net)
    server.start(workdir)
    try:
        assert server.port != taken
        assert [int(v) for (v,) in server.query(port_sql)] == [server.port]
        socket.create_connection(("127.0.0.1", server.port), timeout=10).close()
    finally:
        server.stop()
