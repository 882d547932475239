"""A step statement's shape (suite/shape.py): what a layer's API needs to know of it."""

from __future__ import annotations

import pytest

from accessbench.suite.loader import builtin_names, load
from accessbench.suite.shape import KINDS, Shape, of_step, shape


def _plain(found: Shape) -> tuple:
    return found.kind, found.table, found.columns, found.where


def test_a_select_by_key_names_its_table_columns_and_key():
    assert _plain(shape("SELECT id, reqtype FROM webhits WHERE id = ?")) == ("select", "webhits", ("id", "reqtype"), ("id",))


def test_a_scan_has_no_where_and_columns_may_be_qualified_by_their_table():
    assert _plain(shape("select webhits.a, b from webhits")) == ("select", "webhits", ("a", "b"), ())


def test_a_select_star_from_a_table_of_the_suite_reads_its_columns():
    tables = {"records": ["key1", "key2", "qty"]}
    found = shape("SELECT * FROM records WHERE key1 = ? AND key2 = ?", tables)
    assert _plain(found) == ("select", "records", ("key1", "key2", "qty"), ("key1", "key2")) and found.star
    assert shape("SELECT * FROM other", tables) is None


def test_an_insert_names_its_columns_in_marker_order():
    assert _plain(shape("INSERT INTO hits_new (id, b, c) VALUES (?, ?, ?)")) == ("insert", "hits_new", ("id", "b", "c"), ())


def test_an_update_sets_then_compares_in_marker_order_whichever_side_the_marker_is_on():
    assert (_plain(shape("UPDATE rowops SET val = ?, note = ? WHERE k1 = ? AND (? = k2)"))
            == ("update", "rowops", ("val", "note"), ("k1", "k2")))


def test_a_delete_compares_columns_with_markers():
    assert _plain(shape("DELETE FROM t WHERE k = ?")) == ("delete", "t", (), ("k",))
    assert shape("DELETE FROM t").message() == {"kind": "delete", "table": "t", "columns": [], "where": [],
                                                 "features": ["delete"], "filter": None}


@pytest.mark.parametrize("sql", [
    "SELECT a AS x FROM t",
    "SELECT DISTINCT a FROM t",
    "SELECT a FROM t JOIN u ON t.id = u.id",  # no declared reference to join over
    "SELECT a FROM t, u",
    "SELECT a FROM s.t",
    "SELECT u.a FROM t",
    "SELECT a FROM (SELECT a FROM t) AS q",
    "SELECT a FROM t WHERE a = (SELECT ?)",
    "SELECT a FROM t WHERE a = ? + 1",
    "SELECT a FROM t WHERE lower(a) = ?",
    "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1",
    "SELECT a, b FROM t GROUP BY a",
    "INSERT INTO t (a, b) VALUES (?, 1)",
    "INSERT INTO t (a) VALUES (?), (?)",
    "INSERT INTO t VALUES (?, ?)",
    "INSERT INTO t (a) SELECT a FROM u",
    "UPDATE t SET a = ? FROM u WHERE t.k = u.k",
    "UPDATE t SET a = b + ?",
    "SELECT 1; SELECT 2",
    "BEGIN",
    "CALL p(?)",
    "this is not SQL at all (",
    "",
])
def test_statements_beyond_what_a_builder_expresses_have_no_shape(sql):
    assert shape(sql) is None


@pytest.mark.parametrize("sql, features", [
    ("SELECT a FROM t WHERE a > ?", ("select", "compare")),
    ("SELECT a FROM t WHERE a = ? OR b = ?", ("select", "where", "or")),
    ("SELECT a FROM t WHERE a BETWEEN ? AND ? AND b IN (?, ?)", ("select", "between", "in")),
    ("SELECT a FROM t WHERE a IS NOT NULL AND b LIKE 'x%'", ("select", "null", "like")),
    ("SELECT a FROM t ORDER BY a DESC LIMIT ? OFFSET ?", ("select", "order", "limit", "offset")),
    ("SELECT a, count(*), avg(b) FROM t GROUP BY a", ("select", "aggregate", "group")),
    ("UPDATE t SET a = a + ? WHERE k = ?", ("where", "update", "increment")),
    ("DELETE FROM t WHERE k IN (?, ?)", ("in", "delete")),
])
def test_richer_statements_have_shapes_that_name_the_features_they_use(sql, features):
    found = shape(sql)
    assert found is not None and found.features == features and found.where is None


def test_a_condition_is_a_tree_whose_markers_are_numbered_in_the_order_of_the_text():
    found = shape("SELECT a FROM t WHERE (b LIKE ? OR a IS NULL) AND a BETWEEN ? AND 5 LIMIT ?")
    assert found.filter == {"and": [
        {"or": [{"op": "like", "column": {"table": "t", "column": "b"}, "args": [{"param": 0}]},
                {"op": "is null", "column": {"table": "t", "column": "a"}, "args": []}]},
        {"op": "between", "column": {"table": "t", "column": "a"}, "args": [{"param": 1}, {"value": 5}]}]}
    assert found.limit == {"param": 2}


def test_a_marker_on_the_left_mirrors_the_comparison():
    assert shape("SELECT a FROM t WHERE ? < a").filter == {"op": ">", "column": {"table": "t", "column": "a"},
                                                           "args": [{"param": 0}]}


def test_a_join_has_a_shape_only_over_a_declared_reference_and_resolves_aliases():
    tables = {"employee": ["emp_id", "dept_id", "ename"], "department": ["dept_id", "dname"]}
    sql = "SELECT e.ename, d.dname FROM employee e JOIN department d ON d.dept_id = e.dept_id ORDER BY d.dname"
    assert shape(sql, tables) is None
    found = shape(sql, tables, {("employee", "dept_id"): "department.dept_id"})
    assert found.joins == ({"type": "inner", "table": "department", "on": [
        {"table": "employee", "column": "dept_id"}, {"table": "department", "column": "dept_id"}]},)
    assert found.items == ({"table": "employee", "column": "ename"}, {"table": "department", "column": "dname"})
    assert found.order == ({"table": "department", "column": "dname", "desc": False},)
    assert "join" in found.features and found.columns == ()


def test_an_aggregate_names_its_function_column_and_alias():
    found = shape("SELECT g, count(*) AS n, max(v) FROM t GROUP BY g")
    assert found.items == ({"table": "t", "column": "g"}, {"fn": "count", "table": None, "column": None, "as": "n"},
                           {"fn": "max", "table": "t", "column": "v", "as": None})
    assert found.group == ({"table": "t", "column": "g"},)


def test_every_feature_is_one_a_layer_can_name():
    from accessbench.suite.shape import FEATURES
    assert len(set(FEATURES)) == len(FEATURES) and {"get", "left-join", "load-lazy", "increment"} <= set(FEATURES)


def test_a_layer_is_not_sent_a_shape_it_does_not_map_and_says_why():
    from accessbench.suite.shape import unmapped
    message = {"shape": {"features": ["select", "order", "limit"]}}
    shapes = {"maps": ["select", "order"], "unsupported": {"limit": "no paging in this API"}}
    assert unmapped(message, shapes, "Some ORM") == "Some ORM has no limit in its API: no paging in this API"
    assert unmapped(message, {"maps": ["select", "order", "limit"]}, "Some ORM") is None
    load = {**message, "load": {"strategy": "joined"}}
    assert "load-joined" in unmapped(load, {"maps": ["select", "order", "limit"]}, "Some ORM")
    assert unmapped({"shape": None}, shapes, "Some ORM") is None  # no shape: its raw-SQL API, labelled


def test_the_quick_suite_steps_have_the_shapes_their_layers_need():
    suite = load("quick")
    shapes = {step.name: shape(step.sql) for variant in suite.variants for step in variant.steps if step.sql}
    assert _plain(shapes["sel1-prepared"]) == ("select", "webhits", ("id", "reqtype", "reqfile", "browser", "reqts",
                                                                      "reqsize", "requser", "geoid"), ("id",))
    assert shapes["scan-6k"].kind == "select" and shapes["scan-6k"].where == ()
    assert shapes["ins1"].kind == "insert" and shapes["insb-10"].kind == "insert"
    assert _plain(shapes["upd10"]) == ("update", "rowops", ("val",), ("k1", "k2"))
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
                        assert set(found.columns) | set(found.where or ()) <= set(columns[found.table]), (name, step.name)
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
    message = of_step("SELECT * FROM rowops WHERE k1 = ?", tables)
    assert {k: message[k] for k in ("kind", "table", "columns", "where", "table_columns", "table_types", "key")} == {
        "kind": "select", "table": "rowops", "columns": ["k1", "k2", "k3", "val", "note"], "where": ["k1"],
        "table_columns": ["k1", "k2", "k3", "val", "note"],
        "table_types": ["integer", "integer", "integer", "integer", "char(20)"], "key": ["k1", "k2", "k3"]}
    assert message["tables"]["rowops"]["key"] == ["k1", "k2", "k3"] and message["star"]
    assert "get" not in message["features"]  # k1 alone is not the key
    assert "get" in of_step("SELECT * FROM rowops WHERE k1 = ? AND k3 = ? AND k2 = ?", tables)["features"]
    assert "key" not in of_step("SELECT a FROM elsewhere", tables)  # not a table of the suite: no entity to map
    assert of_step("SELECT 1", tables) is None


def test_no_method_in_the_catalog_is_half_a_layer():
    from accessbench.methods import catalog
    names = {m.name for m in catalog()}
    assert all((m.layer is None) == (m.over is None) and (m.over is None or m.over in names) for m in catalog())


def test_the_python_worker_names_the_same_features_as_the_runner():
    from accessbench.pyworker.base import SHAPE_FEATURES
    from accessbench.suite.shape import FEATURES
    assert SHAPE_FEATURES == FEATURES  # the worker imports nothing of the runner's, so it keeps its own copy
