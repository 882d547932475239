"""A run holds idle CPUs awake while it measures (runner/awake.py), unless told not to, and
stores and shows which it was. Checked against the kernel: the PM QoS request read back from
/dev/cpu_dma_latency, and the run's own open files while it goes."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import time

import pytest

from accessbench.runner.awake import QOS, KeepAwake, cpuidle_driver
from accessbench.stats.drift import calibration_host
from accessbench.store import Store

CAN_HOLD = os.geteuid() == 0 and cpuidle_driver() != "none" and os.path.exists(QOS)
WHY_NOT = f"PM QoS needs root and a cpuidle driver (here: uid {os.geteuid()}, driver {cpuidle_driver()})"


def requested() -> int:
    """The idle latency the kernel currently honours for every CPU, in µs (PM QoS)."""
    with open(QOS, "rb") as f:
        return struct.unpack("i", f.read(4))[0]


def holds_request(pid: int) -> bool:
    """Whether process ``pid`` has the PM QoS request open (the request lasts while it does).
    Asked of the process itself, since other runs (other tests) may hold one of their own."""
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == QOS for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # it ended, or closed a file just then
        return False


def run_watched(store: str, cwd, *extra: str) -> tuple[subprocess.CompletedProcess, bool]:
    """A quick SQLite run, and whether it held the request at any time while it went."""
    command = [sys.executable, "-m", "accessbench", "--store", store, "run", "--quick", "--target", "sqlite",
               "--method", "py-sqlite3", "--trials", "3", "--precision", "0", "--no-report", *extra]
    held = False
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        reader = threading.Thread(target=lambda: setattr(process, "out", process.communicate()))
        reader.start()
        while process.poll() is None:
            held = held or holds_request(process.pid)
            time.sleep(0.01)
        reader.join()
    return subprocess.CompletedProcess(command, process.returncode, *process.out), held


def stored_run(store: str):
    with Store(store) as s:
        return s.load(s.resolve("last"))


@pytest.mark.skipif(not CAN_HOLD, reason=WHY_NOT)
def test_keeping_cpus_awake_asks_the_kernel_for_no_idle_latency_and_gives_the_request_back():
    with KeepAwake() as awake:
        assert awake.awake and awake.how.startswith("kept awake (PM QoS; cpuidle ")
        assert requested() == 0 and holds_request(os.getpid())
    assert not holds_request(os.getpid())


def test_without_spinning_no_busy_loop_is_started_where_pm_qos_cannot_help():
    awake = KeepAwake(spin=False)
    try:
        assert awake.pids == []
        assert awake.awake == CAN_HOLD
        assert awake.how.startswith("kept awake (PM QoS" if CAN_HOLD else "may halt (")
    finally:
        awake.close()


@pytest.mark.skipif(not CAN_HOLD, reason=WHY_NOT)
def test_a_run_holds_idle_cpus_awake_while_it_measures(tmp_path):
    store = str(tmp_path / "r.db")
    result, held = run_watched(store, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert held
    run = stored_run(store)
    assert run.run["environment"]["idle_cpus"].startswith("kept awake (PM QoS; cpuidle ")
    assert run.run["settings"]["allow_idle_halt"] is False
    assert "idle CPUs" in result.stdout and "kept awake (PM QoS" in result.stdout


def test_a_run_told_to_allow_idle_halt_leaves_the_cpus_alone_and_says_so(tmp_path):
    store = str(tmp_path / "r.db")
    result, held = run_watched(store, tmp_path, "--allow-idle-halt")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not held
    run = stored_run(store)
    assert run.run["environment"]["idle_cpus"] == "may halt (--allow-idle-halt)"
    assert run.run["settings"]["allow_idle_halt"] is True
    assert "may halt (--allow-idle-halt)" in result.stdout


def test_a_hosts_drift_is_calibrated_apart_for_runs_that_held_idle_cpus_awake():
    assert calibration_host({"hostname": "vm1"}) == "vm1"  # a run from before accessbench held them
    assert calibration_host({"hostname": "vm1", "idle_cpus": "may halt (--allow-idle-halt)"}) == "vm1"
    assert calibration_host({"hostname": "vm1", "idle_cpus": "kept awake (PM QoS; cpuidle haltpoll)"}) == \
        "vm1 (idle CPUs kept awake)"
    assert calibration_host({}) is None
