"""An external server given by URL: accessbench works only in its own schema, leaves the
user's tables alone, and never stores or prints the password."""

from __future__ import annotations

import psycopg
import pytest

from .conftest import accessbench

pytestmark = pytest.mark.server


@pytest.fixture
def server(someone_elses_postgres):
    """A PostgreSQL we start ourselves and treat as someone else's, never touched by accessbench."""
    someone_elses_postgres.execute("DROP SCHEMA accessbench CASCADE")
    return someone_elses_postgres


def test_an_external_run_touches_only_its_own_schema_and_keeps_no_password(server, tmp_path):
    url = f"postgresql://accessbench:{server.password}@127.0.0.1:{server.port}/accessbench"
    store = tmp_path / "s.db"
    result = accessbench("--store", str(store), "run", "--quick", "--target", url, "--method", "py-psycopg,py-asyncpg",
                         "--trials", "1", "--warmup", "0", "--precision", "0")
    assert result.returncode == 0, result.stderr[-2000:]
    assert server.password not in result.stdout + result.stderr
    assert server.password.encode() not in store.read_bytes()
    assert f"postgresql://accessbench@127.0.0.1:{server.port}/accessbench" in result.stdout
    with psycopg.connect(host=server.sockdir, port=server.port, user="accessbench", dbname="accessbench") as c:
        assert c.execute("SELECT * FROM public.customers ORDER BY id").fetchall() == [(1, "ada"), (2, "grace")]
        schemas = [r[0] for r in c.execute("SELECT nspname FROM pg_namespace WHERE nspname = 'accessbench'")]
        assert schemas == []
