"""A store made by an earlier accessbench is brought to today's schema when opened, and what it
holds keeps its meaning."""

from __future__ import annotations

import json
import sqlite3

from accessbench.store import Store
from accessbench.store.migrations import MIGRATIONS

# The PHP tier methods were renamed php-apache-* when the PHP CLI worker took the plain names.
BEFORE_THE_RENAME = 13


def old_store(path, methods: list[str]) -> None:
    """A store at schema 13 holding one run of ``methods``, a cell each."""
    db = sqlite3.connect(path)
    for ddl in MIGRATIONS[:BEFORE_THE_RENAME]:
        db.executescript(ddl)
    db.execute(f"PRAGMA user_version = {BEFORE_THE_RENAME}")
    db.execute("INSERT INTO runs (id, started_at, status, suite, suite_source, suite_text, settings, environment, "
               "version) VALUES ('r1', '2026-11-01T00:00:00', 'complete', 's5-web', 'built-in', '', ?, '{}', '0.1')",
               (json.dumps({"methods": methods}),))
    for i, method in enumerate(methods):
        db.execute("INSERT INTO run_methods (run_id, method, settings, capabilities) VALUES ('r1', ?, '{}', '{}')",
                   (method,))
        db.execute("INSERT INTO cells (run_id, variant, target, path, method, step, step_index, kind, description, "
                   "status) VALUES ('r1', 'default', 'postgresql', 'unix', ?, 'persistent', ?, 'exec', '', 'ok')",
                   (method, i))
    db.commit()
    db.close()


def test_the_php_pages_stored_before_the_cli_worker_are_named_php_apache_after_it(tmp_path):
    path = tmp_path / "old.db"
    stored = ["php-pgsql", "php-pgsql/server=fpm,load=wrk", "php-pdo-pgsql", "php-mysqli/load=wrk", "php-pdo-mysql",
              "py-gunicorn-psycopg"]
    old_store(path, stored)
    with Store(str(path)) as store:
        cells = [r["method"] for r in store.execute("SELECT method FROM cells ORDER BY step_index")]
        methods = {r["method"] for r in store.execute("SELECT method FROM run_methods")}
        settings = json.loads(store.execute("SELECT settings FROM runs").fetchone()["settings"])
    renamed = ["php-apache-pgsql", "php-apache-pgsql/server=fpm,load=wrk", "php-apache-pdo-pgsql",
               "php-apache-mysqli/load=wrk", "php-apache-pdo-mysql", "py-gunicorn-psycopg"]
    assert cells == renamed and methods == set(renamed) and settings["methods"] == renamed
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
