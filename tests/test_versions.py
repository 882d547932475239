"""Driver versions as methods: py-psycopg@3.2.10, go-pgx@v5.8.0, rust-tokio-postgres@0.7.15,
java-pgjdbc@42.7.3 and node-pg@8.11.0 beside their pinned methods, installed side by side by make
setup (methods/versions.toml), listed with their versions, measured and verified like any
method, each worker reporting the version it loaded; a version not installed, or a C library's,
is one line and exit 2."""

from __future__ import annotations

import sqlite3

import pytest

from accessbench.errors import InputError
from accessbench.methods import catalog, select, toolchain_absent
from accessbench.methods import versions as versions_module
from accessbench.methods.versions import INSTALLED, declared, directory, installed

from .conftest import accessbench

VERSION = "py-psycopg@3.2.10"
# one version of each language's method: the one the tests run beside its pinned method
VERSIONS = {"python": VERSION, "go": "go-pgx@v5.8.0", "rust": "rust-tokio-postgres@0.7.15",
            "java": "java-pgjdbc@42.7.3", "node": "node-pg@8.11.0"}
HERE = [name for language, name in VERSIONS.items() if not toolchain_absent(language)]


def test_every_declared_version_is_a_method_of_its_own_under_its_base_entry():
    psycopg = declared()["py-psycopg"]
    assert "3.2.10" in psycopg.versions and "3.2.11" in psycopg.versions
    assert {entry.language for entry in declared().values()} == set(VERSIONS)
    methods = {m.name: m for m in catalog()}
    for language, name in VERSIONS.items():
        method, base = methods[name], methods[name.partition("@")[0]]
        version = name.partition("@")[2]
        assert method.version == version and not method.default and method.language == language
        assert (method.driver, method.module, method.dbms) == (base.driver, base.module, base.dbms)


def test_a_version_with_a_worker_of_its_own_starts_that_build_and_java_puts_the_drivers_jar_first():
    methods = {m.name: m for m in catalog()}
    assert methods["go-pgx@v5.8.0"].command() == [str(directory("go-pgx", "v5.8.0") / "abworker-go"), "go-pgx@v5.8.0"]
    assert methods["rust-tokio-postgres@0.7.15"].command()[0].endswith(".cache/versions/rust/rust-tokio-postgres@0.7.15/abworker-rust")
    java = methods["java-pgjdbc@42.7.3"].command()
    assert java[:2] == ["java", "-cp"] and java[2].startswith(f"{directory('java-pgjdbc', '42.7.3')}/*:")
    assert java[2].endswith("java/target/abworker-java.jar") and java[3:] == ["accessbench.worker.Main", "java-pgjdbc@42.7.3"]
    assert methods["node-pg@8.11.0"].command()[-1] == "node-pg@8.11.0"  # its worker loads pg from the version's directory


def test_methods_lists_each_installed_version_with_the_version_its_worker_reports():
    for name in HERE:
        assert installed(*name.split("@")), f"{name}: make setup installs the versions methods/versions.toml declares"
    result = accessbench("methods")
    assert result.returncode == 0, result.stderr
    for name in HERE:
        line = next(line for line in result.stdout.splitlines() if line.startswith(name + " "))
        assert "yes" in line and f" {name.partition('@')[2]}" in line.partition(" ")[2], line  # its worker's version


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


@pytest.mark.parametrize("language", ["go", "rust", "java", "node"])
def test_every_languages_versions_are_said_alike_when_not_declared_or_not_installed(language, tmp_path, monkeypatch):
    base, _, version = VERSIONS[language].partition("@")
    with pytest.raises(InputError) as undeclared:
        select([f"{base}@0.0.1"])
    assert str(undeclared.value).startswith(f"--method {base}@0.0.1: not a version declared here (installed: ")
    assert f"and {base} without @ is its pinned version); to add one, list it in src/accessbench/methods/" \
           "versions.toml and run make setup" in str(undeclared.value)
    monkeypatch.setattr(versions_module, "root", lambda: tmp_path)  # nothing installed there
    with pytest.raises(InputError, match=rf"^--method {base}@{version}: not installed here \(installed: none, and "):
        select([f"{base}@{version}"])
    method = next(m for m in catalog() if m.name == f"{base}@{version}")
    assert method.missing() == f"version {version} is not installed here: make setup installs the versions " \
                               "methods/versions.toml declares"


@pytest.mark.parametrize("language", ["go", "rust"])
def test_a_build_of_a_version_is_not_installed_once_its_workers_sources_change(language, tmp_path, monkeypatch):
    base, _, version = VERSIONS[language].partition("@")
    monkeypatch.setattr(versions_module, "root", lambda: tmp_path)
    (tmp_path / language / f"{base}@{version}").mkdir(parents=True)
    (tmp_path / language / f"{base}@{version}" / INSTALLED).write_text("built\nsources 0000000000000000\n")
    method = next(m for m in catalog() if m.name == f"{base}@{version}")
    assert not installed(base, version)
    assert method.missing() == f"version {version} was built from other {language} worker sources than these: " \
                               "make setup builds it again"


@pytest.mark.server
def test_each_languages_version_reads_the_same_rows_as_its_pinned_method_and_stores_its_own_version(tmp_path):
    # one run for every language here (the run's setup and server are the slow part): each
    # version beside its pinned method, both steps
    store = str(tmp_path / "results.db")
    names = [n for name in HERE for n in (name, name.partition("@")[0])]
    result = accessbench("--store", store, "run", "--quick", "--target", "postgresql", "--path", "unix",
                         "--method", ",".join(names), "--step", "sel1-prepared,scan-6k", "--trials", "2",
                         "--precision", "0", "--no-report")
    assert result.returncode == 0, result.stderr[-3000:]
    with sqlite3.connect(store) as db:
        stored = dict(db.execute("SELECT method, driver_version FROM run_methods"))
        cells = db.execute("SELECT step, method, status, checksum FROM cells").fetchall()
    for name in HERE:
        base, _, version = name.partition("@")
        assert stored[name].split()[0] == version and stored[base].split()[0] != version, (name, stored)
    assert {method for _, method, _, _ in cells} == set(names)
    assert {status for _, _, status, _ in cells} == {"ok"}
    by_step: dict[str, set] = {}
    for step, _, _, checksum in cells:
        by_step.setdefault(step, set()).add(checksum)
    assert all(len(checksums) == 1 for checksums in by_step.values())  # every version read the same rows
