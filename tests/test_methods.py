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


def test_a_languages_name_selects_every_method_of_its_worker_but_its_web_pages_and_other_versions():
    from accessbench.methods import select

    php = {m.name for m in select(["php"])}
    assert {"php-pgsql", "php-pdo-mysql", "php-pgsql/batch=copy"} <= php and not any(n.startswith("php-apache") for n in php)
    ruby = {m.name for m in select(["ruby"])}
    assert {"rb-pg", "rb-activerecord+pg", "rb-sequel+sqlite3"} <= ruby  # its layers too
    assert "py-psycopg@3.2.10" not in {m.name for m in select(["python"])}
    both = [m.language for m in select(["cpp", "perl"])]
    assert both == sorted(both) and set(both) == {"cpp", "perl"}  # each language's methods, in the order asked


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


class Watched(Method):
    """py-sqlite3 whose worker is said to run from ``watched`` too: a build to change."""

    watched: str

    def files(self) -> list[str]:
        return [*super().files(), self.watched]


def test_methods_answer_from_the_kept_hello_until_the_workers_build_changes_or_probe_is_asked(tmp_path, monkeypatch):
    from accessbench.methods.probe import probe_all

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    build = tmp_path / "worker.bin"
    build.write_text("one")
    base = next(m for m in catalog() if m.name == "py-sqlite3")
    method = Watched(**base.model_dump(), watched=str(build))
    (first,) = probe_all([method])
    assert first.status == "yes" and first.version and not first.kept  # asked: nothing was kept yet
    (second,) = probe_all([method])
    assert second.kept and (second.status, second.version, second.settings) == (first.status, first.version,
                                                                                first.settings)
    (again,) = probe_all([method], again=True)
    assert not again.kept
    build.write_text("two, rebuilt")
    (rebuilt,) = probe_all([method])
    assert not rebuilt.kept and rebuilt.version == first.version
    assert probe_all([method])[0].kept


def test_a_kept_hello_never_hides_that_a_method_can_no_longer_run_here(tmp_path, monkeypatch):
    from accessbench.methods.probe import probe_all

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    psycopg = next(m for m in catalog() if m.name == "py-psycopg")
    assert probe_all([psycopg])[0].status == "yes"
    monkeypatch.setenv("ACCESSBENCH_PG_BINDIR", "/nonexistent")
    found = probe_all([psycopg])[0]
    assert found.kept and found.status.startswith("external targets only: no PostgreSQL server binaries")


def _readme_table(heading_text: str) -> dict[tuple[str, str], set[str]]:
    """The README's table of methods after ``heading_text``: (language, DBMS) → method names."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "README.md").read_text()
    lines = text[text.index(heading_text):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| language |"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    found: dict[tuple[str, str], set[str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        for dbms, cell in zip(header[1:], cells[1:]):
            names = set(re.findall(r"`([^`]+)`", cell))
            if names:
                found[(cells[0], dbms)] = names
    return found


LANGUAGES = {"python": "Python", "c": "C", "java": "Java", "go": "Go", "rust": "Rust", "node": "Node.js", "php": "PHP",
             "ruby": "Ruby", "cpp": "C++", "perl": "Perl"}
DBMS_NAMES = {"postgresql": "PostgreSQL", "mariadb": "MariaDB", "sqlite": "SQLite", "duckdb": "DuckDB"}


def _catalog_table(layers: bool) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for m in catalog():
        # the layers' table: ORMs, query builders, row mappers (a data frame over a columnar
        # reader is told of beside the bulk and columnar readers)
        if m.tier or m.reads == "floor" or bool(m.over) != layers or not (layers or m.default) \
                or layers and m.reads != "rows":
            continue
        for dbms in m.dbms:
            found.setdefault((LANGUAGES[m.language], DBMS_NAMES[dbms]), set()).add(m.name)
    return found


def test_the_readmes_tables_of_drivers_and_layers_are_the_catalogs():
    from accessbench.methods import select

    assert _readme_table("## Methods today") == _catalog_table(layers=False)
    assert _readme_table("**Layers** above the drivers") == _catalog_table(layers=True)
    readme = (__import__("pathlib").Path(__file__).parents[1] / "README.md").read_text()
    default = [m for m in select(None) if not m.over and m.reads != "floor" and not m.tier]
    languages = {m.language for m in default}
    words = {6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    assert f"{len(default)} run by default, in {words[len(languages)]} languages" in readme


def test_a_method_says_how_many_connections_its_worker_holds_where_it_is_not_one():
    from accessbench.tier.settings import PROCESSES

    methods = {m.name: m for m in catalog()}
    assert methods["py-psycopg"].connections == 1 and methods["py-psycopg"].app_server is None
    assert methods["rust-seaorm+sqlx"].connections == 2  # one pool per statement mode
    assert methods["php-apache-pgsql/server=fpm"].app_server == PROCESSES
