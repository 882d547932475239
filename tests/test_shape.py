"""A step statement's shape (suite/shape.py): what a layer's API needs to know of it."""

from __future__ import annotations

import pytest

from accessbench.suite.loader import builtin_names, load
from accessbench.suite.shape import KINDS, Shape, of_step, shape


def test_a_select_by_key_names_its_table_columns_and_key():
    assert shape("SELECT id, reqtype FROM webhits WHERE id = ?") == Shape("select", "webhits", ("id", "reqtype"), ("id",))


def test_a_scan_has_no_where_and_columns_may_be_qualified_by_their_table():
    assert shape("select webhits.a, b from webhits") == Shape("select", "webhits", ("a", "b"))


def test_a_select_star_from_a_table_of_the_suite_reads_its_columns():
    tables = {"records": ["key1", "key2", "qty"]}
    assert (shape("SELECT * FROM records WHERE key1 = ? AND key2 = ?", tables)
            == Shape("select", "records", ("key1", "key2", "qty"), ("key1", "key2")))
    assert shape("SELECT * FROM other", tables) is None


def test_an_insert_names_its_columns_in_marker_order():
    assert shape("INSERT INTO hits_new (id, b, c) VALUES (?, ?, ?)") == Shape("insert", "hits_new", ("id", "b", "c"))


def test_an_update_sets_then_compares_in_marker_order_whichever_side_the_marker_is_on():
    assert (shape("UPDATE rowops SET val = ?, note = ? WHERE k1 = ? AND (? = k2)")
            == Shape("update", "rowops", ("val", "note"), ("k1", "k2")))


def test_a_delete_compares_columns_with_markers():
    assert shape("DELETE FROM t WHERE k = ?") == Shape("delete", "t", (), ("k",))
    assert shape("DELETE FROM t").message() == {"kind": "delete", "table": "t", "columns": [], "where": []}


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t",
    "SELECT a FROM t WHERE a = 1",
    "SELECT a FROM t WHERE a = ? OR b = ?",
    "SELECT a FROM t WHERE a > ?",
    "SELECT count(a) FROM t",
    "SELECT a AS x FROM t",
    "SELECT a FROM t ORDER BY a",
    "SELECT a FROM t LIMIT 1",
    "SELECT DISTINCT a FROM t",
    "SELECT a FROM t JOIN u ON t.id = u.id",
    "SELECT a FROM t, u",
    "SELECT a FROM s.t",
    "SELECT a FROM t AS x",
    "SELECT u.a FROM t",
    "SELECT a FROM (SELECT a FROM t) AS q",
    "SELECT a FROM t WHERE a = (SELECT ?)",
    "SELECT a FROM t WHERE a = ? + 1",
    "INSERT INTO t (a, b) VALUES (?, 1)",
    "INSERT INTO t (a) VALUES (?), (?)",
    "INSERT INTO t VALUES (?, ?)",
    "INSERT INTO t (a) SELECT a FROM u",
    "UPDATE t SET a = a + ? WHERE k = ?",
    "UPDATE t SET a = ? WHERE k <> ?",
    "UPDATE t SET a = ? FROM u WHERE t.k = u.k",
    "DELETE FROM t WHERE k IN (?, ?)",
    "SELECT 1; SELECT 2",
    "BEGIN",
    "CALL p(?)",
    "this is not SQL at all (",
    "",
])
def test_statements_beyond_the_plain_shapes_have_none(sql):
    assert shape(sql) is None


def test_the_quick_suite_steps_have_the_shapes_their_layers_need():
    suite = load("quick")
    shapes = {step.name: shape(step.sql) for variant in suite.variants for step in variant.steps if step.sql}
    assert shapes["sel1-prepared"] == Shape("select", "webhits", ("id", "reqtype", "reqfile", "browser", "reqts",
                                                                   "reqsize", "requser", "geoid"), ("id",))
    assert shapes["scan-6k"].kind == "select" and shapes["scan-6k"].where == ()
    assert shapes["ins1"].kind == "insert" and shapes["insb-10"].kind == "insert"
    assert shapes["upd10"] == Shape("update", "rowops", ("val",), ("k1", "k2"))
    assert {s.kind for s in shapes.values()} <= set(KINDS)


def test_every_shaped_builtin_statement_names_a_table_of_its_suite_and_only_its_columns():
    shaped = 0
    for name in builtin_names():
        for variant in load(name).variants:
            columns = {t.name: [c.name for c in t.columns] for t in variant.tables}
            for step in variant.steps:
                for sql in filter(None, [step.sql, *step.sql_for.values()]):
                    found = shape(sql, columns)
                    if found is not None:
                        shaped += 1
                        assert found.kind in KINDS and found.table in columns, (name, step.name)
                        assert set(found.columns) | set(found.where) <= set(columns[found.table]), (name, step.name)
    assert shaped > 0


def test_every_step_message_with_a_statement_carries_its_shape_so_no_worker_parses_sql():
    from accessbench.suite.message import step_message

    suite = load("quick")
    tables = suite.variants[0].tables
    steps = suite.variants[0].steps
    batch = next(s for s in steps if s.kind == "batch")
    message = step_message(batch, "postgresql", suite.seed, tables)
    assert message["shape"]["kind"] == "insert" and message["shape"]["table"] == "hits_new"
    assert len(message["shape"]["columns"]) == len(message["params"])
    connect = step_message(next(s for s in steps if s.kind == "connect"), "postgresql", suite.seed, tables)
    assert "sql" not in connect and "shape" not in connect


def test_a_layer_step_message_carries_the_shape_worked_out_against_the_suites_tables():
    tables = load("quick").variants[0].tables
    assert of_step("SELECT * FROM rowops WHERE k1 = ?", tables) == {
        "kind": "select", "table": "rowops", "columns": ["k1", "k2", "k3", "val", "note"], "where": ["k1"],
        "table_columns": ["k1", "k2", "k3", "val", "note"],
        "table_types": ["integer", "integer", "integer", "integer", "char(20)"], "key": ["k1", "k2", "k3"]}
    assert "key" not in of_step("SELECT a FROM elsewhere", tables)  # not a table of the suite: no entity to map
    assert of_step("SELECT 1", tables) is None


def test_no_method_in_the_catalog_is_half_a_layer():
    from accessbench.methods import catalog
    names = {m.name for m in catalog()}
    assert all((m.layer is None) == (m.over is None) and (m.over is None or m.over in names) for m in catalog())
