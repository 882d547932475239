"""Python layer methods beyond SQLAlchemy over psycopg and sqlite3: SQLAlchemy Core and ORM over
mysqlclient (MariaDB), and the Django ORM over psycopg 3 — each through its own API, measured on
the same steps beside the driver it runs on, reading and writing the same values."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

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
                   "ins1": prepared, "upd1": prepared, "upd10": prepared}
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
            ranged = "SELECT k1, k2, k3 FROM rowops WHERE val > ? ORDER BY k1, k2, k3"  # filter(val__gt=…).order_by
            layer.shape = of_step(ranged, tables)
            assert layer.exec_op(ranged, "extended", reads=True)((4,)) == [(3, 3, 0)] + [(4, 4, k) for k in range(10)]
            assert len(sent) == 1 and 'WHERE "rowops"."val" > %s ORDER BY "rowops"."k1" ASC' in sent[0]
            assert layer.api is None  # through the ORM
            sent.clear()
            odd = "SELECT DISTINCT k1, k2, k3 FROM rowops WHERE val > ? ORDER BY k1, k2, k3"  # no shape
            layer.shape = of_step(odd, tables)
            assert layer.shape is None  # so Django's raw-SQL API: connection.cursor(), and the answer says so
            assert layer.exec_op(odd, "extended", reads=True)((4,)) == [(3, 3, 0)] + [(4, 4, k) for k in range(10)]
            assert sent == ["SELECT DISTINCT k1, k2, k3 FROM rowops WHERE val > %s ORDER BY k1, k2, k3"]
            assert layer.api == "raw"
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


# Layers as their users write them (issue 42): richer shapes through each API, associations
# loaded by each strategy, the statements a verification pass sends, and "api": "raw" for what
# runs as SQL text. Each worker runs in process (its host's Session), on a real database.

def worker(method: str, endpoint: dict):
    """The Python worker's host for ``method``, opened on ``endpoint``."""
    import importlib

    from accessbench.pyworker.drivers import DRIVERS
    from accessbench.pyworker.host import Session, variant_settings

    base, _, settings = method.partition("/")
    module, _, name = DRIVERS[base].partition(":")
    driver = getattr(importlib.import_module(module), name or "Driver")()
    driver.configure(variant_settings(driver, settings)[0])
    session = Session(driver)
    session.handle({"op": "open", "endpoint": endpoint})
    return session


def orm_suite(target) -> tuple:
    """The orm suite's quick variant, its tables made and filled on ``target``."""
    suite = load("orm", quick=True)
    variant = suite.variants[0]
    target.create(variant.tables)
    for table in variant.tables:
        target.load(table, table_rows(table, suite.seed))
    return suite, variant


READ_USERS = "SELECT id FROM users WHERE id <= 100"  # the parents of the orm suite's load steps


def message(suite, variant, step: str, dbms: str, **extra) -> dict:
    from accessbench.suite.message import step_message

    # the orm suite's reads run in every mode: these tests send the extended one
    found = next(s for s in variant.steps if s.name in (step, f"{step}-extended"))
    return {**step_message(found, dbms, suite.seed, variant.tables), **extra}


def test_sqlalchemy_core_and_orm_load_users_posts_and_comments_by_each_strategy_as_py_sqlite3_reads_them(workdir):
    needs("py-sqlalchemy-orm+sqlite3")
    from accessbench.targets import make

    target = make("sqlite")
    target.start(workdir)
    try:
        suite, variant = orm_suite(target)
        endpoint = target.endpoint("inproc")
        (users,), (posts,), (comments,) = (target.query(f"SELECT count(*) FROM {t}")[0] for t in (
            "users WHERE id <= 100", f"posts WHERE user_id IN ({READ_USERS})",
            f"comments WHERE post_id IN (SELECT id FROM posts WHERE user_id IN ({READ_USERS}))"))
        sessions = {m: worker(m, endpoint) for m in ("py-sqlite3", "py-sqlalchemy-core+sqlite3",
                                                     "py-sqlalchemy-orm+sqlite3")}
        sent: list[str] = []  # the ORM's statements, as SQLAlchemy hands them to the driver
        orm = sessions["py-sqlalchemy-orm+sqlite3"].driver
        sa.event.listen(orm.conn, "before_cursor_execute", lambda *a: sent.append(" ".join(a[2].split())))
        read = {}
        for strategy in ("lazy", "joined", "selectin"):
            for method, session in sessions.items():
                sent.clear()
                answer = session.handle(message(suite, variant, f"load-{strategy}", "sqlite", verify=True))
                read[method, strategy] = (answer["rows"], answer["checksum"])
                # one operation: a lazy load queries each user's posts and each post's comments
                want = {"lazy": 1 + users + posts, "joined": 1,
                        "selectin": 3 if method != "py-sqlalchemy-orm+sqlite3" else 2 + -(-posts // 500)}
                assert answer["statements"] == want[strategy], (method, strategy)
                assert "api" not in answer
                if method == "py-sqlalchemy-orm+sqlite3":  # through its relationships, as the strategy loads them
                    assert {"lazy": "FROM posts WHERE posts.user_id = ?", "joined": "LEFT OUTER JOIN comments",
                            "selectin": "WHERE posts.user_id IN ("}[strategy] in " ".join(sent)
            timed = sessions["py-sqlalchemy-core+sqlite3"].handle(message(suite, variant, f"load-{strategy}", "sqlite"))
            assert "statements" not in timed and timed["rows"] == timed["n"] * (users + posts + comments)
            # the count's listener is gone once its pass is over: the timed loop ran without event dispatch
            assert not sessions["py-sqlalchemy-core+sqlite3"].driver.conn._has_events
        assert set(read.values()) == {(users + posts + comments, read["py-sqlite3", "lazy"][1])}
        for session in sessions.values():
            session.handle({"op": "close"})
    finally:
        target.stop()


def test_layers_map_every_shape_of_the_orm_suite_through_their_api_and_read_what_the_driver_reads(workdir):
    needs("py-sqlalchemy-core+sqlite3", "py-sqlalchemy-orm+sqlite3")
    from accessbench.targets import make

    target = make("sqlite")
    target.start(workdir)
    try:
        suite, variant = orm_suite(target)
        sessions = {m: worker(m, target.endpoint("inproc")) for m in ("py-sqlite3", "py-sqlalchemy-core+sqlite3",
                                                                      "py-sqlalchemy-orm+sqlite3")}
        for name in ("get", "trivial-100", "slice-100", "page-100", "medium", "aggregate"):
            answers = {m: s.handle(message(suite, variant, name, "sqlite", verify=True)) for m, s in sessions.items()}
            assert len({(a["rows"], a["checksum"]) for a in answers.values()}) == 1, name
            for method in ("py-sqlalchemy-core+sqlite3", "py-sqlalchemy-orm+sqlite3"):
                assert "api" not in answers[method] and answers[method]["statements"] == answers[method]["n"], name
        hello = sessions["py-sqlalchemy-orm+sqlite3"].handle({"op": "hello"})
        assert hello["capabilities"]["shapes"]["unsupported"] == {} and "load" in hello["capabilities"]["kinds"]
        # A statement of no shape runs through text(), and the answer says so.
        raw = {"op": "step", "kind": "exec", "mode": "extended", "iterations": 1, "fetch": True, "verify": True,
               "sql": "SELECT DISTINCT hair_color FROM users WHERE id <= ?", "shape": None,
               "params": [{"kind": "const", "value": 3, "seed": 1}]}
        for method in ("py-sqlalchemy-core+sqlite3", "py-sqlalchemy-orm+sqlite3"):
            assert sessions[method].handle(raw)["api"] == "raw"
            assert "api" not in sessions[method].handle(message(suite, variant, "get", "sqlite", verify=True))
    finally:
        target.stop()


def test_django_pages_joins_groups_and_loads_through_its_queryset_api_as_psycopg_reads(postgres):
    needs("py-django+psycopg")
    suite, variant = orm_suite(postgres)
    endpoint = postgres.endpoint("unix")
    psycopg_worker, django_worker = worker("py-psycopg", endpoint), worker("py-django+psycopg", endpoint)
    layer = django_worker.driver
    sent: list[str] = []

    def record(execute, sql, params, many, context):
        sent.append(" ".join(sql.split()))
        return execute(sql, params, many, context)

    try:
        said = {"slice-100": ['WHERE "users"."id" > %s ORDER BY "users"."id" ASC LIMIT 100'],
                "page-100": ['ORDER BY "users"."id" ASC LIMIT 100 OFFSET '],
                "medium": ['FROM "users" LEFT OUTER JOIN "posts" ON ("users"."id" = "posts"."user_id")'],
                "aggregate": ['COUNT(*)', 'MAX("comments"."id")', 'BETWEEN %s AND %s GROUP BY 1 ORDER BY 1 ASC']}
        for name, fragments in said.items():
            want = psycopg_worker.handle(message(suite, variant, name, "postgresql", verify=True))
            sent.clear()
            with layer.db.execute_wrapper(record):
                answer = django_worker.handle(message(suite, variant, name, "postgresql", verify=True))
            assert (answer["rows"], answer["checksum"]) == (want["rows"], want["checksum"]), name
            assert "api" not in answer and answer["statements"] == answer["n"] == len(sent), name
            assert all(f in sent[0] for f in fragments), (name, sent[0])
        (users,), (posts,) = (postgres.query(f"SELECT count(*) FROM {t}")[0] for t in (
            "users WHERE id <= 100", f"posts WHERE user_id IN ({READ_USERS})"))
        for strategy, statements in (("lazy", 1 + users + posts), ("selectin", 3)):
            want = psycopg_worker.handle(message(suite, variant, f"load-{strategy}", "postgresql", verify=True))
            sent.clear()
            with layer.db.execute_wrapper(record):
                answer = django_worker.handle(message(suite, variant, f"load-{strategy}", "postgresql", verify=True))
            assert (answer["rows"], answer["checksum"], answer["statements"]) == \
                   (want["rows"], want["checksum"], statements) == (want["rows"], want["checksum"], want["statements"])
            if strategy == "selectin":  # prefetch_related("posts__comments"): the keys read, IN a list
                assert 'WHERE "posts"."user_id" IN (' in sent[1] and 'WHERE "comments"."post_id" IN (' in sent[2]
        assert not layer.db.execute_wrappers  # the count's wrapper is gone once its pass is over
        # No JOIN loading of a one-to-many collection in Django: hello says why, and so would the step.
        hello = django_worker.handle({"op": "hello"})
        why = hello["capabilities"]["shapes"]["unsupported"]["load-joined"]
        assert "select_related" in why and "prefetch_related" in why
        with pytest.raises(Exception, match="select_related"):
            django_worker.handle(message(suite, variant, "load-joined", "postgresql", verify=True))
    finally:
        psycopg_worker.handle({"op": "close"})
        django_worker.handle({"op": "close"})


def test_django_maps_like_to_startswith_only_for_a_prefix_and_says_why_not_otherwise(postgres):
    needs("py-django+psycopg")
    _, variant = orm_suite(postgres)
    django_worker = worker("py-django+psycopg", postgres.endpoint("unix"))
    try:
        step = {"op": "step", "kind": "exec", "mode": "extended", "iterations": 2, "fetch": True, "verify": True,
                "sql": "SELECT id FROM users WHERE name LIKE ? AND id <= 20"}
        from accessbench.suite.shape import of_step as shaped

        step["shape"] = shaped(step["sql"], variant.tables)
        prefix = {**step, "params": [{"kind": "const", "value": "User 1%", "seed": 1}]}
        want = postgres.query("SELECT id FROM users WHERE name LIKE 'User 1%' AND id <= 20")
        assert django_worker.handle(prefix)["rows"] == 2 * len(want)
        anywhere = {**step, "params": [{"kind": "const", "value": "%1%", "seed": 1}]}
        with pytest.raises(Exception, match="not a prefix"):
            django_worker.handle(anywhere)
        assert "__startswith" in django_worker.handle({"op": "hello"})["settings"]["like"]
    finally:
        django_worker.handle({"op": "close"})


def test_polars_lists_no_shapes_and_answers_every_step_as_run_through_its_sql_text_api(workdir):
    needs("py-polars")
    from accessbench.targets import make

    target = make("sqlite")
    target.start(workdir)
    try:
        _, variant = orm_suite(target)
        polars_worker = worker("py-polars", target.endpoint("inproc"))
        assert "shapes" not in polars_worker.handle({"op": "hello"})["capabilities"]
        scan = {"op": "step", "kind": "scan", "iterations": 2, "fetch": True, "sql": "SELECT id, name FROM users",
                "shape": of_step("SELECT id, name FROM users", variant.tables)}
        assert polars_worker.handle({**scan, "verify": True})["api"] == "raw"
        assert polars_worker.handle(scan)["api"] == "raw"
    finally:
        target.stop()


def test_psycopg_reading_dict_rows_has_no_load_steps_and_says_why(postgres):
    needs("py-psycopg")
    for method, loads in (("py-psycopg", True), ("py-psycopg/row=dict", False)):
        session = worker(method, postgres.endpoint("unix"))
        hello = session.handle({"op": "hello"})
        assert ("load" in hello["capabilities"]["kinds"]) == loads
        assert ("share names" in hello["settings"]["load"]) != loads  # the joined row's columns: id, id, id
        session.handle({"op": "close"})
