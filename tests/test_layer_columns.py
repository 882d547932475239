"""A layer reads the columns a step selects, no more: what the server was sent, read from its
own statement log.

A step that selects some of a table's columns (S1's rows, the quick suite's scans, the
connection suites' two of three) is written by an ORM's users as a partial load or a projection
— GORM's ``Select("a", "b")``, SQLAlchemy's ``load_only``, Django's ``only``, ActiveRecord's
``select``, Diesel's select clause, SeaORM's ``select_only().column(…)``, Hibernate's tuple
``multiselect`` — not as a load of whole entities that the checksum then reads two columns of.
Loading every column would read more bytes than the driver beside it and put that in the
layer's cost. Verification cannot see it (it checksums the step's columns only), so the
server's log is asked: a PostgreSQL that logs every statement, given to the run by URL.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

import accessbench as accessbench_package
from accessbench.methods import catalog
from accessbench.store import Store

from .conftest import accessbench

pytestmark = pytest.mark.server

QUICK = Path(accessbench_package.__file__).parent / "suites" / "quick.toml"


def quick_webhits(rows: int) -> str:
    """quick's own table ``webhits`` as its suite declares it (a layer whose entities are
    compiled from the built-in suites, Diesel's and SeaORM's, maps only those), at ``rows``."""
    block = re.search(r"\[\[tables\]\]\nname = \"webhits\"\n.*?\n\]\n", QUICK.read_text(), re.DOTALL).group(0)
    return re.sub(r"(?m)^rows = \d+$", f"rows = {rows}", block)


# No step reads ``reqfile``, webhits' widest column: a statement that selects it loaded whole rows.
UNREAD = "reqfile"
READS = {  # step: (statement, its parameter), each in the three protocol modes
    "get": ("SELECT browser FROM webhits WHERE id = ?", '{ kind = "uniform", lo = 1, hi = 200 }'),
    "equal": ("SELECT id, browser FROM webhits WHERE browser = ?", '{ kind = "choice", values = ["Opera", "Lynx"] }'),
    "page": ("SELECT id, browser FROM webhits WHERE id > ? ORDER BY id LIMIT 10", '{ kind = "uniform", lo = 1, hi = 150 }'),
}
STEPS = "".join(f"""
[[steps]]
name = "{name}-${{mode}}"
kind = "exec"
sql = "{sql}"
params = [{param}]
mode = "${{mode}}"
vary = {{ mode = ["literal", "extended", "prepared"] }}
iterations = 5
""" for name, (sql, param) in READS.items()) + """
[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT id, browser FROM webhits"
iterations = 2
"""


def suite_text() -> str:
    return ('[suite]\nname = "columns"\ndescription = "Selects of some of a table\'s columns: by key, by equality, '
            'a page and a scan."\nseed = 1\n\n' + quick_webhits(200) + STEPS)


LANGUAGES = sorted({m.language for m in catalog() if m.layer and "postgresql" in m.dbms})


def layers_on_postgresql(language: str) -> list[str]:
    """The language's layers over PostgreSQL that can run here (their worker built)."""
    return [m.name for m in catalog() if m.layer and m.language == language and "postgresql" in m.dbms
            and not m.missing()]


def logged_statements(datadir_parent: str) -> list[str]:
    """Each statement the server logged (``statement:`` and ``execute …:`` lines, with their
    continuation lines), as sent."""
    text = "".join(Path(p).read_text(errors="replace")
                   for p in glob.glob(os.path.join(datadir_parent, "**", "*.log"), recursive=True))
    statements, current = [], None
    for line in text.splitlines():
        m = re.search(r"LOG:\s+(?:statement|execute [^:]*): (.*)$", line)
        if m:
            current = [m.group(1)]
            statements.append(current)
        elif line.startswith("\t") and current is not None:
            current.append(line.strip())
        else:
            current = None
    return [" ".join(s) for s in statements]


def reads_beyond_the_step(sql: str) -> bool:
    """A SELECT of table ``webhits`` whose select list has ``*`` or the column no step reads."""
    if not re.match(r"\s*(\(\s*)*(SELECT|WITH)\b", sql, re.IGNORECASE):
        return False
    try:
        tree = sqlglot.parse_one(re.sub(r"\$\d+", "1", sql), read="postgres")
    except sqlglot.errors.SqlglotError:
        return False
    for select in tree.find_all(exp.Select):
        source = select.args.get("from_") or select.args.get("from")  # sqlglot 30 names it from_
        if source is None or not any(t.name == "webhits" for t in source.find_all(exp.Table)):
            continue
        for item in select.expressions:
            target = item.unalias() if isinstance(item, exp.Alias) else item
            if isinstance(target, exp.Star) or (isinstance(target, exp.Column) and
                                                 (target.name == UNREAD or isinstance(target.this, exp.Star))):
                return True
    return False


def test_the_log_reader_tells_a_projection_from_a_load_of_whole_entities():
    assert reads_beyond_the_step('SELECT "webhits"."id", "webhits"."reqfile" FROM "webhits" WHERE "id" = $1')
    assert reads_beyond_the_step("SELECT * FROM webhits WHERE id > 3 ORDER BY id LIMIT 10")
    assert reads_beyond_the_step("select t0.* from webhits as t0")
    assert not reads_beyond_the_step('SELECT "webhits"."browser" FROM "webhits" WHERE "webhits"."id" = $1 LIMIT 1')
    assert not reads_beyond_the_step("SELECT count(*) FROM webhits")
    assert not reads_beyond_the_step("SELECT * FROM other")
    assert not reads_beyond_the_step("COPY webhits (id, reqfile) FROM STDIN")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_layer_over_postgresql_selects_only_the_columns_the_step_reads(language, workdir, tmp_path):
    from accessbench.targets.postgresql import ManagedPostgres

    layers = layers_on_postgresql(language)
    if not layers:
        pytest.skip(f"no {language} layer over PostgreSQL is built here")
    suite = tmp_path / "columns.toml"
    suite.write_text(suite_text())
    server = ManagedPostgres()
    server.server_settings = {"log_statement": "all"}
    server.start(workdir)
    try:
        url = f"postgresql://accessbench:{server.password}@127.0.0.1:{server.port}/accessbench"
        result = accessbench("--store", str(tmp_path / "s.db"), "run", "--suite", str(suite), "--target", url,
                             "--method", ",".join(layers), "--path", "tcp", "--trials", "1", "--warmup", "0",
                             "--precision", "0", "--no-report", cwd=tmp_path, timeout=1200)
        assert result.returncode == 0, result.stderr[-3000:]
        sent = logged_statements(workdir)
    finally:
        server.stop()
    with Store(str(tmp_path / "s.db")) as store:
        run = store.load(store.resolve("last"))
    builders = {m.method for m in run.methods if m.capabilities.get("shapes") is not None}  # not polars' SQL text
    for method in layers:  # each through its own API: a select sent as the step's text would prove nothing
        mine = [c for c in run.cells if c.method == method]
        assert mine and any(c.status == "ok" for c in mine), (method, [(c.step, c.status, c.message) for c in mine])
        assert all(c.status in ("ok", "unsupported") and (c.api != "raw" or method not in builders) for c in mine), \
            [(c.step, c.status, c.api, c.message) for c in mine]
    assert any("webhits" in s for s in sent), "the server logged no statement of the suite"
    beyond = sorted({s for s in sent if reads_beyond_the_step(s)})
    assert not beyond, "statements that read more than the step selects:\n" + "\n".join(beyond)
