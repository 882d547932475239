"""netem paths: workers in a network namespace reach the managed server over a veth pair.
This machine's kernel has no netem, so the test runs `netem:0us` (the namespace and veth hop,
no qdisc); with a delay the same plumbing adds `tc qdisc … netem` on both ends."""

from __future__ import annotations

import subprocess

import pytest

from accessbench.paths import netem_missing
from accessbench.store import Store

from .conftest import accessbench

pytestmark = pytest.mark.server

SUITE = """\
[suite]
name = "hop"

[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT id FROM t"
iterations = 2
"""


def namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("accessbench-")}


@pytest.mark.skipif(netem_missing(0) is not None, reason=str(netem_missing(0)))
def test_a_netem_path_runs_workers_in_a_namespace_and_leaves_none_behind(tmp_path):
    suite = tmp_path / "hop.toml"
    suite.write_text(SUITE)
    store = str(tmp_path / "s.db")
    before = namespaces()
    result = accessbench("--store", store, "run", "--suite", str(suite), "--target", "postgresql",
                         "--path", "tcp,netem:0us", "--method", "py-psycopg,c-libpq", "--trials", "1", "--warmup", "0")
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(store) as s:
        run = s.load(s.resolve("last"))
    cells = {(c["method"], c["path"]): c for c in run.cells}
    for method in ("py-psycopg", "c-libpq"):
        assert cells[(method, "netem:0us")]["status"] == "ok"
        assert cells[(method, "netem:0us")]["checksum"] == cells[(method, "tcp")]["checksum"]
    assert "namespace accessbench-" in run.targets[0]["settings"]["netem"]
    assert namespaces() == before


def test_a_netem_delay_without_kernel_netem_is_refused_with_the_reason(tmp_path, capsys):
    from accessbench.cli import main

    why = netem_missing(250)
    if why is None:
        pytest.skip("this kernel has netem")
    assert main(["--store", str(tmp_path / "s.db"), "run", "--path", "netem:250us"]) == 2
    assert why in capsys.readouterr().err
