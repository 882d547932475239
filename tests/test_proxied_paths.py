"""Proxied paths: workers reach the server through the latency proxy, every trial records
the round trips and bytes that crossed it, and the proxy's own cost is measured per run."""

from __future__ import annotations

import pytest

from accessbench.store import Store

from .conftest import accessbench

pytestmark = pytest.mark.server

SUITE = """\
[suite]
name = "rt"

[[tables]]
name = "t"
rows = 100
primary_key = ["id"]
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "get-${mode}"
kind = "exec"
sql = "SELECT id FROM t WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 100 }]
mode = "${mode}"
vary = { mode = ["literal", "extended", "prepared"] }
iterations = 20

[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT id FROM t"
iterations = 3
"""


def run_suite(tmp_path, *args: str):
    """The round-trip suite run with ``args``; the stored run."""
    suite = tmp_path / "rt.toml"
    suite.write_text(SUITE)
    store = str(tmp_path / "s.db")
    result = accessbench("--store", store, "run", "--suite", str(suite), "--warmup", "0", *args)
    assert result.returncode == 0, result.stderr[-2000:]
    with Store(store) as s:
        return s.load(s.resolve("last"))


def test_a_proxied_run_counts_round_trips_per_operation_and_measures_the_proxy(tmp_path):
    run = run_suite(tmp_path, "--target", "postgresql", "--path", "tcp,tcp+100us", "--method", "c-libpq,py-psycopg",
                    "--trials", "2")
    (target,) = run.targets
    assert set(target["settings"]["proxy_cost_us"]) == {"tcp+0us", "tcp+100us"}
    for cell in run.cells:
        trials = run.trials[cell["id"]]
        if cell["path"] == "tcp":  # direct: nothing to count
            assert all(t["round_trips"] is None for t in trials)
            continue
        # One request and one reply per statement in every mode of both drivers (a pipelined
        # Parse/Bind/Execute/Sync counts once) and per full read; c-libpq's prepared step also
        # prepares inside its first operation and deallocates after the loop, before it answers
        # (psycopg keeps its statement prepared on the connection since the verification pass).
        extra = 2 if (cell["method"], cell["step"]) == ("c-libpq", "get-prepared") else 0
        for t in trials:
            assert t["round_trips"] == t["n"] + extra, (cell["method"], cell["step"], t["round_trips"], t["n"])
            assert t["bytes_to_server"] > 0 and t["bytes_to_client"] > 0


def test_a_proxied_path_reaches_mariadb_and_its_proxy_cost_is_measured_with_mariadbs_own_round_trips(tmp_path):
    run = run_suite(tmp_path, "--target", "mariadb", "--path", "tcp+100us,tcp+100us+compress", "--method", "py-pymysql",
                    "--trials", "1")
    (target,) = run.targets
    costs = target["settings"]["proxy_cost_us"]
    assert set(costs) == {"tcp+0us", "tcp+100us", "tcp+100us+compress"}
    assert costs["tcp+100us+compress"] == costs["tcp+100us"]  # one proxy setting, measured once
    measured = [c for c in run.cells if c["status"] == "ok"]
    assert {c["step"] for c in measured} >= {"get-literal", "scan"}
    assert all(t["round_trips"] for c in measured for t in run.trials[c["id"]])
