"""Client load from many hosts (--cluster): a local Dask cluster of network namespaces, each
host's part of a trial kept, the hosts' histograms merged without losing any latency, the
barrier's skew and a saturated client host reported, and nothing left behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
import pytest

from accessbench.cluster import parse
from accessbench.cluster.placement import Placed, place
from accessbench.errors import InputError
from accessbench.methods import select as select_methods
from accessbench.protocol.histogram import Histogram
from accessbench.store import Store

from .conftest import accessbench, processes_mentioning

SWEEP = """
[suite]
name = "hosts-test"
description = "a short load sweep over one client host and two"
seed = 11

[[tables]]
name = "visitors"
rows = 500
primary_key = ["id"]
columns = [
  { name = "id", type = "integer", gen = { kind = "seq" } },
  { name = "name", type = "varchar(40)", gen = { kind = "text", pattern = "visitor-#####" } },
]

[[steps]]
name = "c${clients}-h${hosts}"
kind = "exec"
mode = "literal"
description = "clients for half a second"
sql = "SELECT name FROM visitors WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 500 }]
iterations = 500
clients = "${clients}"
hosts = "${hosts}"
duration = "0.5s"
vary = { clients = [3], hosts = [1, 2] }
"""


def test_a_cluster_is_given_as_local_hosts_with_an_optional_cpu_limit_or_as_a_dask_scheduler():
    assert parse("local:3").local_hosts == 3 and parse("local:3").cpus is None
    assert parse("local:2@0.5cpu").cpus == 0.5
    assert parse("dask://10.0.0.5:8786").scheduler == "tcp://10.0.0.5:8786"
    for bad, why in (("local:0", "1 to 16 hosts"), ("local:3@0cpu", "CPU limit"), ("dask://h", "not a cluster"),
                     ("k8s://x", "not a cluster"), ("dask://h:70000", "port 70000")):
        with pytest.raises(InputError, match=why):
            parse(bad)


def test_clients_are_dealt_to_hosts_in_turn_one_process_per_client_or_one_per_host():
    assert place(5, 3, one_client_per_process=False) == [Placed(0, 0, 2), Placed(1, 0, 2), Placed(2, 0, 1)]
    assert place(2, 3, one_client_per_process=False) == [Placed(0, 0, 1), Placed(1, 0, 1)]
    assert place(3, 2, one_client_per_process=True) == [Placed(0, 0, 1), Placed(0, 1, 1), Placed(1, 0, 1)]


def test_a_bad_cluster_or_a_path_the_cluster_cannot_take_is_one_line_and_exit_status_2():
    bad = accessbench("run", "--cluster", "local:many")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--cluster" in bad.stderr and "local:N" in bad.stderr
    unix = accessbench("run", "--cluster", "local:2", "--path", "unix", "--target", "postgresql")
    assert unix.returncode == 2 and unix.stderr.strip().splitlines() == [
        "accessbench: --path unix: with --cluster the clients on the cluster's hosts reach the targets over tcp only; "
        "measure other paths in a run of their own"]
    embedded = accessbench("run", "--cluster", "local:2", "--target", "sqlite")
    assert embedded.returncode == 2 and embedded.stderr.strip().splitlines() == [
        "accessbench: --target sqlite: embedded, so no client of it can run on another host; --cluster measures "
        "servers (postgresql, mariadb, or a server's URL)"]


def _leftovers() -> list[str]:
    """What a local cluster makes and must remove: namespaces, bridge and veth ends, cgroups, Dask processes."""
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    cgroups = [p for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/cpu") if os.path.isdir(root)
               for p in os.listdir(root) if p.startswith("accessbench-c")]
    return ([line for line in namespaces.splitlines() if "accessbench-c" in line]
            + [line for line in links.splitlines() if re.search(r": abc\d+[bh]\d*[:@]", line)] + cgroups
            + processes_mentioning("distributed.cli.dask_"))


@pytest.mark.skipif(os.geteuid() != 0, reason="local clusters need root (network namespaces)")
def test_a_sweep_on_two_local_hosts_keeps_each_hosts_part_and_merges_histograms_within_one_percent(tmp_path):
    suite = tmp_path / "hosts.toml"
    suite.write_text(SWEEP)
    methods = ["py-psycopg", "py-pymysql"] + [m for m in ("go-pgx",) if not select_methods([m])[0].missing()]
    store = tmp_path / "s.db"
    result = accessbench("--store", str(store), "run", "--suite", str(suite), "--cluster", "local:2@0.5cpu",
                         "--target", "postgresql,mariadb", "--method", ",".join(methods), "--trials", "2", "--warmup", "0",
                         "--precision", "0", "--raw-latencies", "--no-report", "--width", "240")
    assert result.returncode == 0, result.stderr[-3000:]
    header = next(line for line in result.stdout.splitlines() if line.startswith("clients on:"))
    assert "local:2@0.5cpu: 2 client hosts (host1, host2, 0.5 CPU each (limit))" in header
    assert "start barrier skew: hosts woke within" in header
    with Store(str(store)) as s:
        run = s.load(s.resolve("last"))
    assert run.run["environment"]["cluster"]["spec"] == "local:2@0.5cpu"
    assert [h["name"] for h in run.run["environment"]["cluster"]["hosts"]] == ["host1", "host2"]
    checked = 0
    for cell in run.cells:
        assert cell["status"] == "ok", cell["message"]
        for trial in run.trials[cell["id"]]:
            hosts = trial["per_host"]
            assert [h["host"] for h in hosts] == (["host1"] if cell["step"].endswith("h1") else ["host1", "host2"])
            assert sum(h["clients"] for h in hosts) == 3 and sum(h["n"] for h in hosts) == trial["n"]
            assert all(h["cpus"] == 0.5 and h["busy"] is not None for h in hosts)
            if not cell["method"].startswith("py-"):
                continue
            raw = np.frombuffer(zlib.decompress(trial["latencies"]), dtype="<u8")
            merged = Histogram.from_json(trial["histogram"])
            assert merged.n == len(raw) == trial["n"]
            for p in (50, 90, 99, 100):
                exact = float(np.percentile(raw, p, method="inverted_cdf"))
                assert abs(merged.percentile(p) - exact) <= 0.01 * exact, (p, merged.percentile(p), exact)
            checked += 1
    assert checked == 8  # py-psycopg on PostgreSQL, py-pymysql on MariaDB: 2 steps × 2 trials each
    exported = accessbench("--store", str(store), "export", "last", "--format", "json")
    assert exported.returncode == 0, exported.stderr[-2000:]
    parts = [p for c in json.loads(exported.stdout)["cells"] for t in c["trials"] for p in t["per_host"]]
    assert {p["host"] for p in parts} == {"host1", "host2"} and all(p["cpus"] == 0.5 for p in parts)
    assert _leftovers() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="local clusters need root (network namespaces)")
def test_a_worker_missing_on_a_host_is_named_with_the_host_before_anything_runs():
    from accessbench.cluster.dask import Cluster
    from accessbench.cluster.local import LocalCluster

    work = tempfile.mkdtemp(prefix="accessbench-test-")
    local = LocalCluster(2, None, work)
    try:
        local.make_network()
        cluster = Cluster(local.start_dask(), os.path.join(work, "hosts"))
        try:
            cluster.connect(expect=2)
            with pytest.raises(InputError) as refused:
                cluster.check_built({"go-pgx": ["/nowhere/abworker-go"], "py-psycopg": [os.__file__]})
            assert str(refused.value) == ("--cluster: worker binaries are not built on every host (build them there "
                                          "first): host1: go-pgx needs /nowhere/abworker-go; host2: go-pgx needs "
                                          "/nowhere/abworker-go")
        finally:
            cluster.close()
    finally:
        local.stop()
    try:
        assert os.listdir(os.path.join(work, "hosts")) == []  # each host removed its own directory
        assert _leftovers() == []
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="local clusters need root (network namespaces)")
def test_ctrl_c_in_a_cluster_run_keeps_its_trials_and_removes_hosts_namespaces_and_processes(tmp_path, workdir):
    suite = tmp_path / "hosts.toml"
    suite.write_text(SWEEP.replace('duration = "0.5s"', 'duration = "2s"'))
    store = str(tmp_path / "s.db")
    proc = subprocess.Popen(
        [sys.executable, "-m", "accessbench", "--store", store, "run", "--suite", str(suite), "--cluster", "local:2",
         "--target", "postgresql", "--method", "py-psycopg", "--trials", "20", "--warmup", "0", "--precision", "0",
         "--workdir", workdir, "--no-report"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, trials = time.monotonic() + 180, 0
    while trials < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
        try:
            trials = sqlite3.connect(store).execute("SELECT count(*) FROM trials WHERE per_host IS NOT NULL").fetchone()[0]
        except sqlite3.OperationalError:  # not made yet
            pass
    assert trials >= 2, "the run never stored a trial on the cluster"
    assert _leftovers(), "the cluster should be running mid-run"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    db = sqlite3.connect(store)
    assert db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
    assert db.execute("SELECT count(*) FROM trials WHERE per_host IS NOT NULL").fetchone()[0] >= trials
    assert _leftovers() == []
    assert processes_mentioning(workdir) == [] and os.listdir(workdir) == []
