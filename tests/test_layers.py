"""Layer methods: a library above a driver, measured through its own API on the same steps."""

from __future__ import annotations

import sqlite3

import sqlalchemy as sa

from accessbench.methods import catalog
from accessbench.pyworker.drivers.py_sqlalchemy import CoreOverSqlite3
from accessbench.store import Store
from accessbench.suite.loader import load
from accessbench.suite.shape import of_step

from .conftest import accessbench


def test_a_layer_builds_its_own_constructs_for_a_shaped_statement_and_text_for_the_rest(tmp_path):
    file = str(tmp_path / "t.db")
    with sqlite3.connect(file) as c:
        c.execute("CREATE TABLE rowops (k1 INTEGER, k2 INTEGER, k3 INTEGER, val INTEGER, note TEXT)")
        c.executemany("INSERT INTO rowops VALUES (?, ?, ?, 0, 'n')", [(i, i % 10, 0) for i in range(20)])
    layer = CoreOverSqlite3()
    layer.open({"file": file}, {})
    try:
        tables = load("quick").variants[0].tables
        update = "UPDATE rowops SET val = ? WHERE k1 = ? AND k2 = ?"
        layer.shape = of_step(update, tables)
        statement, values = layer._built(update)
        assert isinstance(statement, sa.Update) and len(values((7, 3, 3))) == 3
        assert layer.exec_op(update, "extended", reads=False)((7, 3, 3)) == 1
        select = "SELECT k1, val FROM rowops WHERE k1 = ?"
        layer.shape = of_step(select, tables)
        assert isinstance(layer._built(select)[0], sa.Select)
        assert [tuple(r) for r in layer.exec_op(select, "extended", reads=True)((3,))] == [(3, 7)]
        ranged = "SELECT k1 FROM rowops WHERE val > ? ORDER BY k1 LIMIT 5"  # a range, an order, a page: select()
        layer.shape = of_step(ranged, tables)
        assert isinstance(layer._built(ranged)[0], sa.Select) and layer.api is None
        assert [tuple(r) for r in layer.exec_op(ranged, "extended", reads=True)((0,))] == [(3,)]
        odd = "SELECT DISTINCT k2 FROM rowops WHERE val > ?"
        layer.shape = of_step(odd, tables)  # no shape: Core's raw-SQL API, and the answer says so
        assert layer.shape is None and isinstance(layer._built(odd)[0], sa.TextClause) and layer.api == "raw"
        assert [tuple(r) for r in layer.exec_op(odd, "extended", reads=True)((0,))] == [(3,)]
    finally:
        layer.close()


def test_every_layer_names_a_driver_measured_here_and_the_same_dbms():
    # Over a method of its own language, or over the C library its backend binds (Diesel's
    # PostgreSQL backend is libpq itself, measured bare as c-libpq).
    methods = {m.name: m for m in catalog()}
    layers = [m for m in methods.values() if m.over]
    assert {m.name for m in layers} >= {"py-sqlalchemy-core+psycopg", "py-sqlalchemy-core+sqlite3",
                                        "py-sqlalchemy-orm+psycopg", "py-sqlalchemy-orm+sqlite3"}
    assert not any(m.default for m in layers)  # opt-in: the default run stays within its time
    for m in layers:
        assert set(m.dbms) <= set(methods[m.over].dbms) and methods[m.over].language in (m.language, "c")


def test_layers_measured_beside_their_driver_read_and_write_the_same_values(tmp_path):
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--full", "--quick", "--target", "sqlite", "--method",
                         "py-sqlite3,py-sqlalchemy-core+sqlite3,py-sqlalchemy-orm+sqlite3", "--trials", "2",
                         "--precision", "0", "--no-report", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    # Every step with both measured says what the layer costs over its driver, in every report.
    text = " ".join(result.stdout.split())
    assert "layer cost (time per operation over its own driver, 95% CI): py-sqlalchemy-core+sqlite3 over py-sqlite3 " \
           "@ sqlite/inproc: " in text and "py-sqlalchemy-orm+sqlite3 over py-sqlite3 @ sqlite/inproc: " in text
    html = accessbench("--store", store, "report", "last", "--out", str(tmp_path / "html"), cwd=tmp_path)
    assert html.returncode == 0, html.stderr
    (page,) = (tmp_path / "html").glob("accessbench-*.html")
    text = page.read_text()  # the layer view: each driver, the layers above it stacked on its time
    assert "<h3>Layer cost</h3>" in text and 'data-chart="layers"' in text and "+ py-sqlalchemy-orm+sqlite3" in text
    with Store(store) as s:
        cells = s.load(s.resolve("last")).cells
    driver = {c["step"]: c for c in cells if c["method"] == "py-sqlite3"}
    for name in ("py-sqlalchemy-core+sqlite3", "py-sqlalchemy-orm+sqlite3"):
        layer = {c["step"]: c for c in cells if c["method"] == name}
        assert layer["sel1-literal"]["status"] == "unsupported" and "binds every value" in layer["sel1-literal"]["message"]
        measured = {step for step, c in layer.items() if c["status"] == "ok"}
        assert measured == set(layer) - {"sel1-literal"}, name
        for step in measured:  # verified against the driver's own reading of the same steps
            assert (layer[step]["checksum"], layer[step]["check_checksum"]) == \
                   (driver[step]["checksum"], driver[step]["check_checksum"]), (name, step)


def test_the_orm_reads_by_key_with_session_get_and_updates_through_its_unit_of_work(tmp_path):
    from accessbench.pyworker.drivers.py_sqlalchemy import OrmOverSqlite3

    file = str(tmp_path / "t.db")
    with sqlite3.connect(file) as c:
        c.execute("CREATE TABLE rowops (k1 INTEGER, k2 INTEGER, k3 INTEGER, val INTEGER, note TEXT, "
                  "PRIMARY KEY (k1, k2, k3))")
        c.executemany("INSERT INTO rowops VALUES (?, ?, 0, 0, 'n')", [(i, i % 10) for i in range(20)])
    layer = OrmOverSqlite3()
    layer.open({"file": file}, {})
    sent: list[str] = []
    sa.event.listen(layer.conn, "before_cursor_execute", lambda *a: sent.append(" ".join(a[2].split())))
    try:
        tables = load("quick").variants[0].tables
        update = "UPDATE rowops SET val = ? WHERE k1 = ? AND k2 = ? AND k3 = ?"
        layer.shape = of_step(update, tables)
        assert layer.exec_op(update, "extended", reads=False)((7, 3, 3, 0)) == 1
        assert sent[0].startswith("SELECT rowops.k1") and sent[1] == "UPDATE rowops SET val=? WHERE rowops.k1 = ? " \
                                                                     "AND rowops.k2 = ? AND rowops.k3 = ?"
        sent.clear()
        get = "SELECT note, val FROM rowops WHERE k3 = ? AND k2 = ? AND k1 = ?"  # the key in another order
        layer.shape = of_step(get, tables)
        assert layer.exec_op(get, "extended", reads=True)((0, 3, 3)) == [("n", 7)]
        assert len(sent) == 1 and "WHERE rowops.k1 = ? AND rowops.k2 = ? AND rowops.k3 = ?" in sent[0]
    finally:
        layer.close()
