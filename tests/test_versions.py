"""Driver versions as methods: py-psycopg@3.2.10 beside the pinned py-psycopg, installed side by
side by make setup (methods/versions.toml), listed with its version, measured and verified like
any method; a version not installed, or a C library's, is one line and exit 2."""

from __future__ import annotations

import sqlite3

import pytest

from accessbench.methods import select
from accessbench.methods.versions import declared, installed

from .conftest import accessbench

VERSION = "py-psycopg@3.2.10"


def test_every_declared_version_is_a_method_of_its_own_under_its_base_entry():
    psycopg = declared()["py-psycopg"]
    assert "3.2.10" in psycopg.versions and "3.2.11" in psycopg.versions
    [method] = select([VERSION])
    [base] = select(["py-psycopg"])
    assert method.version == "3.2.10" and not method.default
    assert (method.language, method.driver, method.module, method.dbms) == (base.language, base.driver, base.module,
                                                                            base.dbms)


def test_methods_lists_each_installed_version_with_the_version_its_worker_reports():
    assert installed("py-psycopg", "3.2.10"), "make setup installs the versions methods/versions.toml declares"
    result = accessbench("methods")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith(VERSION + " "))
    assert "yes" in line and "3.2.10" in line.split()[-1]


@pytest.mark.parametrize("name, says", [
    ("py-psycopg@3.2.9", "--method py-psycopg@3.2.9: not a version declared here (installed: 3.2.10, 3.2.11, and "
                         "py-psycopg without @ is its pinned version); to add one, list it in "
                         "src/accessbench/methods/versions.toml and run make setup"),
    ("c-libpq@16", "--method c-libpq@16: c-libpq's library comes from Debian's package: it has one version here"),
])
def test_a_version_not_installed_here_is_one_line_naming_those_that_are(name, says):
    result = accessbench("run", "--method", name, "--target", "postgresql")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and says in result.stderr


@pytest.mark.server
def test_two_versions_of_one_driver_read_the_same_rows_and_each_stores_its_own_version(tmp_path):
    store = str(tmp_path / "results.db")
    result = accessbench("--store", store, "run", "--quick", "--target", "postgresql", "--path", "unix",
                         "--method", f"{VERSION},py-psycopg", "--step", "sel1-prepared,scan-6k", "--trials", "2",
                         "--precision", "0", "--no-report")
    assert result.returncode == 0, result.stderr[-3000:]
    with sqlite3.connect(store) as db:
        versions = dict(db.execute("SELECT method, driver_version FROM run_methods"))
        cells = db.execute("SELECT step, method, status, checksum FROM cells").fetchall()
    assert versions[VERSION] == "3.2.10" and versions["py-psycopg"] != "3.2.10"
    assert {status for _, _, status, _ in cells} == {"ok"}
    by_step: dict[str, set] = {}
    for step, _, _, checksum in cells:
        by_step.setdefault(step, set()).add(checksum)
    assert all(len(checksums) == 1 for checksums in by_step.values())  # both versions read the same rows
