"""Layers as their users write them: what each maps through its own API, what it answers
unsupported and why, and a statement of no shape named in every report as the layer's raw-SQL
API — on real runs, SQLite's layers beside their driver."""

from __future__ import annotations

import html

from accessbench.store import Store

from .conftest import accessbench

SUITE = """\
[suite]
name = "shapes"
seed = 5

[[tables]]
name = "items"
rows = 50
primary_key = ["id"]
columns = [
  { name = "id",  type = "integer", gen = { kind = "seq", start = 1 } },
  { name = "grp", type = "integer", gen = { kind = "seq", start = 0, div = 10 } },
]

[[steps]]
name = "page"
kind = "exec"
sql = "SELECT id, grp FROM items WHERE id > ? ORDER BY id LIMIT 10"
params = [{ kind = "uniform", lo = 0, hi = 40 }]
mode = "prepared"
iterations = 20

[[steps]]
name = "distinct"
kind = "scan"
sql = "SELECT DISTINCT grp FROM items"
iterations = 5
"""

LAYERS = ("py-sqlalchemy-core+sqlite3", "py-sqlalchemy-orm+sqlite3")


def test_a_layer_builds_a_page_with_its_own_api_and_names_its_raw_sql_api_where_a_statement_has_no_shape(tmp_path):
    suite = tmp_path / "shapes.toml"
    suite.write_text(SUITE)
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--full", "--suite", str(suite), "--target", "sqlite",
                         "--method", ",".join(("py-sqlite3", *LAYERS)), "--trials", "2", "--precision", "0",
                         "--no-report", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    with Store(store) as s:
        cells = {(c["method"], c["step"]): c for c in s.load(s.resolve("last")).cells}
    for layer in LAYERS:
        assert cells[(layer, "page")]["status"] == "ok" and cells[(layer, "page")]["api"] is None
        assert cells[(layer, "distinct")]["api"] == "raw"
        assert cells[(layer, "page")]["checksum"] == cells[("py-sqlite3", "page")]["checksum"]
    assert cells[("py-sqlite3", "distinct")]["api"] is None  # a driver has no other API
    text = " ".join(result.stdout.split())
    assert "py-sqlalchemy-core+sqlite3 (through SQLAlchemy Core's raw-SQL API)" in text
    assert "py-sqlalchemy-core+sqlite3 (through SQLAlchemy Core's raw-SQL API) over py-sqlite3" in text  # its layer cost
    for fmt in ("md", "html"):
        exported = accessbench("--store", store, "export", "last", "--format", fmt, cwd=tmp_path)
        assert "through SQLAlchemy ORM's raw-SQL API" in html.unescape(exported.stdout), fmt


def test_methods_long_lists_what_each_layer_maps_and_why_not_the_rest():
    result = accessbench("methods", "--long")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "shapes through SQLAlchemy ORM's own API:" in text
    assert "unsupported: load-joined —" in text  # Django's select_related follows only forward keys
