"""The method catalog: what is available here, and when not, why in one line."""

from accessbench.methods import Method, catalog
from accessbench.methods.probe import probe

from .conftest import accessbench


def test_the_catalog_has_the_python_and_c_methods_and_variants_are_opt_in():
    from accessbench.methods import select

    names = [m.name for m in catalog()]
    assert {"py-sqlite3", "py-psycopg", "py-psycopg2", "py-asyncpg", "py-pg8000", "py-pyodbc",
            "c-libpq", "c-odbc", "c-sqlite"} <= set(names)
    defaults = {m.name for m in select(None)}
    assert "c-libpq" in defaults and "c-libpq/format=binary" not in defaults


def test_a_method_whose_module_is_missing_says_which_and_how_to_install_it():
    method = Method(name="py-nothing", language="python", driver="nothing", module="no_such_module_here",
                    package="no-such-package", dbms=["postgresql"])
    assert method.missing() == "Python module no_such_module_here is not installed (pip install no-such-package)"
    assert probe(method).status.startswith("no: Python module no_such_module_here")


def test_without_server_binaries_postgresql_methods_are_for_external_targets_only(monkeypatch):
    monkeypatch.setenv("ACCESSBENCH_PG_BINDIR", "/nonexistent")
    psycopg = next(m for m in catalog() if m.name == "py-psycopg")
    status = probe(psycopg).status
    assert status.startswith("external targets only: no PostgreSQL server binaries")


def test_the_methods_command_lists_one_whole_name_per_line_and_the_pinned_settings_with_long():
    result = accessbench("methods")
    assert result.returncode == 0
    names = [line.split()[0] for line in result.stdout.splitlines()[1:-1]]
    assert names == [m.name for m in catalog()]  # every method, one line each, its name whole
    assert "prepare_threshold" not in result.stdout
    long = accessbench("methods", "--long")
    assert long.returncode == 0
    for name in ("py-sqlite3", "py-psycopg", "py-psycopg2", "py-asyncpg", "py-pg8000"):
        assert name in long.stdout
    assert "prepare_threshold: never reached" in long.stdout and "statement_cache_size: 0" in long.stdout


def test_py_pyodbc_and_c_odbc_pin_the_same_odbc_driver_options():
    from accessbench.methods.probe import probe

    by_name = {m.name: m for m in catalog()}
    python, c = probe(by_name["py-pyodbc"]).settings, probe(by_name["c-odbc"]).settings
    for key in ("postgresql options", "sqlite options", "mariadb driver", "mariadb options"):
        assert python[key] == c[key], key
