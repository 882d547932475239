"""Python layer methods beyond SQLAlchemy over psycopg and sqlite3: SQLAlchemy Core and ORM over
mysqlclient (MariaDB), and the Django ORM over psycopg 3 — each through its own API, measured on
the same steps beside the driver it runs on, reading and writing the same values."""

from __future__ import annotations

import datetime as dt

import pytest

from accessbench.data.generate import table_rows
from accessbench.methods import catalog
from accessbench.suite.loader import load
from accessbench.suite.shape import of_step

from .layers import assert_same_values, run_beside_driver

pytestmark = pytest.mark.server

LAYERS = {  # name: (over, dbms)
    "py-sqlalchemy-core+mysqlclient": ("py-mysqlclient", ["mariadb"]),
    "py-sqlalchemy-orm+mysqlclient": ("py-mysqlclient", ["mariadb"]),
    "py-django+psycopg": ("py-psycopg", ["postgresql"]),
}


def needs(*names: str) -> None:
    """Skip, saying why, when a method's Python module is not installed here."""
    methods = {m.name: m for m in catalog()}
    for name in names:
        why = methods[name].missing()
        if why:
            pytest.skip(f"{name} unavailable: {why}")


def test_django_measured_beside_psycopg_reads_and_writes_the_same_values(tmp_path):
    needs("py-django+psycopg")
    cells = run_beside_driver(tmp_path, {"postgresql": ("py-psycopg", ["py-django+psycopg"])}, ["postgresql"])
    # Every step but the literal one through the ORM: reads by key, scans, inserts, bulk
    # inserts, updates by key and by other columns.
    assert_same_values(cells, "py-psycopg", "py-django+psycopg", {"sel1-literal": "Django binds every value"})


def test_sqlalchemy_over_mysqlclient_measured_beside_it_reads_and_writes_the_same_values(tmp_path):
    needs("py-mysqlclient", "py-sqlalchemy-core+mysqlclient", "py-sqlalchemy-orm+mysqlclient")
    layers = ["py-sqlalchemy-core+mysqlclient", "py-sqlalchemy-orm+mysqlclient"]
    cells = run_beside_driver(tmp_path, {"mariadb": ("py-mysqlclient", layers)}, ["mariadb"])
    # MySQLdb interpolates every value on the client: no extended or prepared mode under it,
    # as py-mysqlclient; its literal mode is SQLAlchemy's binds inlined by MySQLdb.
    prepared = "no binary-protocol prepared statements"
    unsupported = {"sel1-extended": "interpolates parameters on the client", "sel1-prepared": prepared,
                   "ins1": prepared, "upd1": prepared, "upd10": prepared, "upd100": prepared}
    for layer in layers:
        assert_same_values(cells, "py-mysqlclient", layer, unsupported)
    # … exactly the steps py-mysqlclient leaves unmeasured
    assert {step for step, c in cells["py-mysqlclient"].items() if c["status"] == "unsupported"} == set(unsupported)


def test_django_reads_by_key_with_objects_get_and_updates_by_loading_and_saving(postgres):
    needs("py-django+psycopg")
    from accessbench.pyworker.drivers.py_django import Driver

    suite = load("quick")
    tables = suite.variants[0].tables
    postgres.create(tables)
    rowops = next(t for t in tables if t.name == "rowops")
    postgres.load(rowops, table_rows(rowops, suite.seed))
    layer = Driver()
    layer.open(postgres.endpoint("unix"), {})
    sent: list[str] = []

    def record(execute, sql, params, many, context):
        sent.append(" ".join(sql.split()))
        return execute(sql, params, many, context)

    try:
        with layer.db.execute_wrapper(record):
            update = "UPDATE rowops SET val = ? WHERE k1 = ? AND k2 = ? AND k3 = ?"
            layer.shape = of_step(update, tables)
            assert layer.exec_op(update, "extended", reads=False)((7, 3, 3, 0)) == 1
            key = '("rowops"."k1", "rowops"."k2", "rowops"."k3") = (%s, %s, %s)'  # CompositePrimaryKey
            assert sent[0].startswith('SELECT "rowops"."k1"') and key in sent[0]
            assert sent[1] == f'UPDATE "rowops" SET "val" = %s WHERE {key}'  # save(update_fields=["val"])
            sent.clear()
            get = "SELECT note, val FROM rowops WHERE k3 = ? AND k2 = ? AND k1 = ?"  # the key in another order
            layer.shape = of_step(get, tables)
            assert layer.exec_op(get, "prepared", reads=True)((0, 3, 3)) == \
                postgres.query("SELECT note, val FROM rowops WHERE k1 = 3 AND k2 = 3 AND k3 = 0") and \
                layer.db.connection.prepare_threshold == 0  # prepared: psycopg prepares at first execution
            assert len(sent) == 1 and key in sent[0]
            layer.end_step()
            assert layer.db.connection.prepare_threshold is None
            sent.clear()
            ten = "UPDATE rowops SET val = ? WHERE k1 = ? AND k2 = ?"  # not by key: QuerySet.update
            layer.shape = of_step(ten, tables)
            assert layer.exec_op(ten, "extended", reads=False)((5, 4, 4)) == 10
            assert sent == ['UPDATE "rowops" SET "val" = %s WHERE ("rowops"."k1" = %s AND "rowops"."k2" = %s)']
            sent.clear()
            odd = "SELECT k1, k2, k3 FROM rowops WHERE val > ? ORDER BY k1, k2, k3"  # no plain shape
            layer.shape = of_step(odd, tables)
            assert layer.shape is None  # so Django's raw-SQL API: connection.cursor()
            assert layer.exec_op(odd, "extended", reads=True)((4,)) == [(3, 3, 0)] + [(4, 4, k) for k in range(10)]
            assert sent == ["SELECT k1, k2, k3 FROM rowops WHERE val > %s ORDER BY k1, k2, k3"]
    finally:
        layer.close()


def test_django_writes_a_batch_group_with_bulk_create_in_one_transaction(postgres):
    needs("py-django+psycopg")
    from accessbench.pyworker.drivers.py_django import Driver

    tables = load("quick").variants[0].tables
    postgres.create(tables)
    layer = Driver()
    layer.open(postgres.endpoint("unix"), {})
    sent: list[tuple[str, bool]] = []
    try:
        insert = ("INSERT INTO hits_new (id, reqtype, reqfile, browser, reqts, reqsize, requser, geoid) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        layer.shape = of_step(insert, tables)
        rows = [(i, "GET", f"/f{i}", "Lynx", dt.datetime(2001, 5, 1, 0, 0, i), 200 + i, None if i % 2 else i, 7)
                for i in range(1, 11)]
        batch = layer.batch_op(insert)

        def record(execute, sql, params, many, context):
            sent.append((sql, context["connection"].in_atomic_block))
            return execute(sql, params, many, context)

        with layer.db.execute_wrapper(record):
            assert batch(rows) == 10
        # One statement for the group (Django 5.2 on PostgreSQL: an array per column, UNNEST),
        # inside transaction.atomic(); autocommit again after it.
        ((sql, atomic),) = sent
        assert sql.startswith('INSERT INTO "hits_new"') and "UNNEST" in sql and atomic
        assert layer.db.get_autocommit() and not layer.db.in_atomic_block
        stored = postgres.query("SELECT id, reqtype, rtrim(reqfile), rtrim(browser), reqts, reqsize, requser, geoid "
                                "FROM hits_new ORDER BY id")
        assert stored == [(i, "GET".ljust(10), *rest) for i, _, *rest in rows]  # char(10) comes back padded
    finally:
        layer.close()


def test_sqlalchemy_over_mysqlclient_writes_a_batch_group_as_one_multirow_insert(workdir):
    needs("py-sqlalchemy-core+mysqlclient")
    from accessbench.pyworker.drivers.py_sqlalchemy import CoreOverMysqlclient
    from accessbench.targets.mariadb import ManagedMariaDB

    server = ManagedMariaDB()
    server.start(workdir)
    try:
        tables = load("quick").variants[0].tables
        server.create([t for t in tables if t.name == "hits_new"])
        layer = CoreOverMysqlclient()
        opened = layer.open(server.endpoint("unix"), {})
        assert isinstance(opened["server_pid"], int)
        try:
            insert = ("INSERT INTO hits_new (id, reqtype, reqfile, browser, reqts, reqsize, requser, geoid) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            layer.shape = of_step(insert, tables)
            rows = [(i, "GET", f"/f{i}", "Lynx", dt.datetime(2001, 5, 1), 200, None, 7) for i in range(1, 11)]
            inserts = "SHOW SESSION STATUS LIKE 'Com_insert'"
            before = int(layer.conn.exec_driver_sql(inserts).one()[1])
            assert layer.batch_op(insert)(rows) == 10
            # executemany, rewritten by MySQLdb into one INSERT of every row, as py-mysqlclient's batch
            assert int(layer.conn.exec_driver_sql(inserts).one()[1]) - before == 1
            assert server.query("SELECT COUNT(*) FROM hits_new") == [(10,)]
        finally:
            layer.close()
    finally:
        server.stop()
