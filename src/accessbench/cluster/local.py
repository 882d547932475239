"""``--cluster local:N``: a Dask cluster made here, for trying ``--cluster`` and for the tests.

A bridge in the runner's network namespace (its address is where the managed servers also
listen and the Dask scheduler serves), and N network namespaces, each joined to the bridge by
a veth pair with an address of its own: every "host" has its own address and its own loopback,
and its clients reach the server over a network link, not the runner's loopback. One Dask
worker runs in each namespace; with ``@Xcpu`` each is held to X CPUs by a cgroup (the CFS
quota), so that a host can saturate as a small client machine would. The hosts still share
this machine's kernel and clock. Needs root and iproute2; everything is removed at the end.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from ..errors import Fault, InputError
from .host import CPUS_ENV

_PERIOD_US = 100_000
# Dask's own background work on a client host, kept small: no statistical profiler sampling
# the worker's threads every 10 ms, no dashboard.
_QUIET = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False", "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "warning"}


def local_missing() -> str | None:
    if os.geteuid() != 0:
        return "--cluster local:N needs root (network namespaces, a bridge, cgroups)"
    if not shutil.which("ip"):
        return "--cluster local:N needs iproute2 (ip)"
    return None


def _signal(process: subprocess.Popen, signum: int) -> None:
    """To the process's whole session (a Dask worker's own children too), if it is still there."""
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass


def _run(*args: str) -> None:
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise Fault(f"--cluster: {' '.join(args)}: {(result.stderr or result.stdout).strip()}")


class CPULimit:
    """A cgroup holding one host's processes to ``cpus`` CPUs (cgroup v2's cpu.max, or v1's
    CFS quota)."""

    def __init__(self, name: str, cpus: float) -> None:
        self.cpus = cpus
        v2 = "/sys/fs/cgroup/cgroup.controllers"
        if os.path.exists(v2) and "cpu" in open(v2).read().split():
            self.path = f"/sys/fs/cgroup/{name}"
            self.files = {"cpu.max": f"{round(cpus * _PERIOD_US)} {_PERIOD_US}"}
            subtree = "/sys/fs/cgroup/cgroup.subtree_control"
            if "cpu" not in open(subtree).read().split():
                with open(subtree, "w") as f:
                    f.write("+cpu")
        elif os.path.isdir("/sys/fs/cgroup/cpu"):
            self.path = f"/sys/fs/cgroup/cpu/{name}"
            self.files = {"cpu.cfs_period_us": str(_PERIOD_US), "cpu.cfs_quota_us": str(round(cpus * _PERIOD_US))}
        else:
            raise InputError("--cluster local:N@Xcpu: this machine has no cgroup CPU controller to hold a host to X CPUs")
        self.made = False

    def make(self) -> None:
        os.makedirs(self.path)
        self.made = True
        for name, value in self.files.items():
            with open(os.path.join(self.path, name), "w") as f:
                f.write(value)

    def add(self, pid: int) -> None:
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(pid))

    def remove(self) -> None:
        if self.made:
            for _ in range(50):  # its processes may take a moment to leave
                try:
                    os.rmdir(self.path)
                    break
                except OSError:
                    time.sleep(0.1)
            self.made = False


class LocalCluster:
    """The namespaces, bridge, scheduler and workers of ``local:N``; ``stop`` removes them all,
    also after a start that failed half-way."""

    def __init__(self, hosts: int, cpus: float | None, workdir: str) -> None:
        tag = f"{os.getpid() % 100000}"
        self.hosts, self.cpus = hosts, cpus
        self.workdir = os.path.join(workdir, "cluster")
        self.bridge = f"abc{tag}b"
        self.namespaces = [f"accessbench-c{tag}-{i + 1}" for i in range(hosts)]
        # a /24 of 10.253.0.0/16 for the run: the bridge .1, host i at .(10 + i)
        self.network = ipaddress.IPv4Network(f"10.253.{os.getpid() % 250 + 1}.0/24")
        self.address = str(self.network[1])
        self.host_addresses = [str(self.network[10 + i]) for i in range(hosts)]
        self.links: list[str] = []
        self.made_bridge = False
        self.made_namespaces: list[str] = []
        self.limits = [CPULimit(f"accessbench-c{tag}-{i + 1}", cpus) for i in range(hosts)] if cpus else []
        self.processes: list[subprocess.Popen] = []
        self.scheduler: str | None = None

    # the network first (the servers listen on the bridge before any worker connects)
    def make_network(self) -> None:
        _run("ip", "link", "add", self.bridge, "type", "bridge")
        self.made_bridge = True
        _run("ip", "addr", "add", f"{self.address}/{self.network.prefixlen}", "dev", self.bridge)
        _run("ip", "link", "set", self.bridge, "up")
        for i, (ns, address) in enumerate(zip(self.namespaces, self.host_addresses)):
            outside, inside = f"{self.bridge[:-1]}h{i + 1}", f"{self.bridge[:-1]}n{i + 1}"
            _run("ip", "netns", "add", ns)
            self.made_namespaces.append(ns)
            _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            self.links.append(outside)
            _run("ip", "link", "set", inside, "netns", ns)
            _run("ip", "link", "set", outside, "master", self.bridge)
            _run("ip", "link", "set", outside, "up")
            _run("ip", "-n", ns, "addr", "add", f"{address}/{self.network.prefixlen}", "dev", inside)
            _run("ip", "-n", ns, "link", "set", inside, "up")
            _run("ip", "-n", ns, "link", "set", "lo", "up")

    def start_dask(self, timeout: float = 60.0) -> str:
        """The scheduler on the bridge and a worker in each namespace; the scheduler's address."""
        os.makedirs(self.workdir, exist_ok=True)
        env = {**os.environ, **_QUIET}
        scheduler_file = os.path.join(self.workdir, "scheduler.json")
        self._spawn([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", self.address, "--port", "0",
                     "--no-dashboard", "--scheduler-file", scheduler_file], "scheduler", env)
        deadline = time.monotonic() + timeout
        while not os.path.exists(scheduler_file):
            self._alive()
            if time.monotonic() > deadline:
                raise Fault(f"--cluster: the Dask scheduler did not start within {timeout:g} s (see {self.workdir})")
            time.sleep(0.1)
        time.sleep(0.1)  # written whole
        with open(scheduler_file) as f:
            self.scheduler = json.load(f)["address"]
        for i, (ns, address) in enumerate(zip(self.namespaces, self.host_addresses)):
            limit = {CPUS_ENV: f"{self.cpus:g}"} if self.cpus else {}
            process = self._spawn(
                ["ip", "netns", "exec", ns, sys.executable, "-m", "distributed.cli.dask_worker", self.scheduler,
                 "--host", address, "--name", f"host{i + 1}", "--nthreads", "4", "--no-nanny", "--no-dashboard",
                 "--local-directory", os.path.join(self.workdir, f"host{i + 1}"), "--death-timeout", "60"],
                f"host{i + 1}", {**env, **limit})
            if self.limits:
                self.limits[i].make()
                self.limits[i].add(process.pid)
        return self.scheduler

    def _spawn(self, command: list[str], name: str, env: dict) -> subprocess.Popen:
        log = open(os.path.join(self.workdir, f"{name}.log"), "ab")
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                   start_new_session=True)
        log.close()
        self.processes.append(process)
        return process

    def _alive(self) -> None:
        for process in self.processes:
            if process.poll() is not None:
                raise Fault(f"--cluster: a Dask process exited with status {process.returncode}: "
                            f"{' '.join(process.args[-12:])} (see {self.workdir})")

    def holds(self) -> str | None:
        if not (self.processes or self.made_namespaces or self.made_bridge):
            return None
        return (f"the local cluster: Dask processes {', '.join(str(p.pid) for p in self.processes) or 'none'}, "
                f"namespaces {', '.join(self.made_namespaces) or 'none'}, bridge {self.bridge}")

    def stop(self) -> None:
        """Safe after a partial start, and twice."""
        for process in reversed(self.processes):  # workers first, the scheduler last
            _signal(process, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _signal(process, signal.SIGKILL)
                process.wait()
        self.processes.clear()
        for limit in self.limits:
            limit.remove()
        for link in self.links:  # both ends of each veth pair, at once (a namespace goes lazily)
            subprocess.run(["ip", "link", "del", link], capture_output=True)
        self.links.clear()
        for ns in self.made_namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.made_namespaces.clear()
        if self.made_bridge:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
            self.made_bridge = False
