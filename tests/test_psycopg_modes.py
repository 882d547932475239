"""py-psycopg does what each mode says, seen from the server: prepared parses once per
connection, extended and literal never leave a prepared statement behind (a real PostgreSQL)."""

from __future__ import annotations

import pytest


@pytest.mark.server
@pytest.mark.parametrize("prepare", ["off", "auto"])
def test_py_psycopg_prepares_in_prepared_mode_and_only_there(postgres, prepare):
    from accessbench.pyworker.drivers.py_psycopg import Driver

    driver = Driver()
    driver.configure({"prepare": prepare})
    driver.open(postgres.endpoint("unix"), {})
    held = lambda: driver.conn.execute("SELECT count(*) FROM pg_prepared_statements", prepare=False).fetchone()[0]  # noqa: E731
    try:
        extended = driver.exec_op("SELECT ?::int + 1", "extended", reads=True)
        for i in range(3):  # under the 5 executions after which prepare=auto prepares on its own
            assert extended((i,)) == [(i + 1,)]
        assert held() == 0
        prepared = driver.exec_op("SELECT ?::int + 2", "prepared", reads=True)
        for i in range(3):
            assert prepared((i,)) == [(i + 2,)]
        assert held() == 1  # parsed once, on the server for the connection's life
    finally:
        driver.close()
