"""A Dask distributed cluster as the runner's client hosts: one ``ClientHost`` actor per host
(Dask workers grouped by address), their clocks compared with the runner's, their trials run
together.

Clock offsets are measured as Cristian's algorithm does: the runner reads its clock, asks the
host's, reads its own again; the host's offset is its reading minus the midpoint, known to
within half the round trip. Of several tries the one with the shortest round trip is kept.
Each host is then given the barrier in its own clock (the runner's instant plus its offset),
so that hosts whose clocks disagree still start together.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

CLOCK_TRIES = 7


@dataclass
class Host:
    name: str           # as reports show it: the Dask worker's name, else its address
    address: str        # the Dask worker's address
    actor: Any          # its ClientHost
    facts: dict = field(default_factory=dict)
    offset_ns: int = 0          # its clock minus the runner's
    uncertainty_ns: int = 0     # ± half the round trip the offset was read in

    def call(self, method: str, *args) -> Any:
        return getattr(self.actor, method)(*args).result()


class Cluster:
    """Connected to a scheduler; ``hosts`` ready once ``connect`` returns."""

    def __init__(self, scheduler: str, workdir: str, timeout: float = 30.0) -> None:
        self.scheduler = scheduler
        self.workdir = workdir
        self.timeout = timeout
        self.client = None
        self.hosts: list[Host] = []

    def connect(self, expect: int | None = None) -> None:
        """Connect, wait for ``expect`` workers (when given), and put an actor on one worker of
        each host."""
        from distributed import Client

        from .host import ClientHost

        try:
            self.client = Client(self.scheduler, timeout=self.timeout)  # the default: actors find it so
        except (OSError, TimeoutError) as e:
            raise InputError(f"--cluster: no Dask scheduler answers at {self.scheduler} ({e})") from None
        if expect:
            self.client.wait_for_workers(expect, timeout=self.timeout)
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        if not workers:
            raise InputError(f"--cluster: the Dask scheduler at {self.scheduler} has no workers")
        by_host: dict[str, list[tuple[str, dict]]] = {}
        for address, info in sorted(workers.items()):
            by_host.setdefault(info["host"], []).append((address, info))
        for host, found in by_host.items():
            address, info = found[0]
            future = self.client.submit(ClientHost, f"{self.workdir}/{host}", actor=True, workers=[address],
                                        allow_other_workers=False, pure=False, key=f"accessbench-host-{host}")
            # a host of one Dask worker by that worker's name (local:N's host1…), else by its address
            name = info.get("name") if len(found) == 1 and isinstance(info.get("name"), str) else host
            self.hosts.append(Host(name, address, future.result(timeout=self.timeout)))
        for host in self.hosts:
            host.facts = host.call("facts")
        self.measure_clocks()

    def local_address(self) -> str:
        """This host's address on the way to the scheduler (where a managed server listens
        for the cluster's clients)."""
        import socket
        from urllib.parse import urlsplit

        where = urlsplit(self.scheduler)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((where.hostname, where.port or 8786))
            return probe.getsockname()[0]

    def measure_clocks(self) -> None:
        for host in self.hosts:
            best = None
            for _ in range(CLOCK_TRIES):
                before = time.time_ns()
                theirs = host.call("clock")
                after = time.time_ns()
                if best is None or after - before < best[1] * 2:
                    best = (theirs - (before + after) // 2, (after - before) // 2)
            host.offset_ns, host.uncertainty_ns = best

    def check_built(self, files: dict[str, list[str]]) -> None:
        """Every method's files on every host, or one error saying which are missing where."""
        wanted = sorted({path for paths in files.values() for path in paths})
        problems = []
        for host in self.hosts:
            missing = set(host.call("missing", wanted))
            for method, paths in files.items():
                lacking = [p for p in paths if p in missing]
                if lacking:
                    problems.append(f"{host.name}: {method} needs {', '.join(lacking)}")
        if problems:
            raise InputError("--cluster: worker binaries are not built on every host (build them there first): "
                             + "; ".join(problems))

    def describe(self) -> dict:
        """What the run stores of its cluster."""
        return {"scheduler": self.scheduler,
                "hosts": [{"name": h.name, "address": h.address, "hostname": h.facts.get("hostname"),
                           "cpus": h.facts.get("cpus"), "cpu_limited": h.facts.get("limited"),
                           "clock_offset_ns": h.offset_ns, "clock_uncertainty_ns": h.uncertainty_ns}
                          for h in self.hosts]}

    def trial(self, per_host: dict[int, dict[str, dict]], start_at: int, timeout: float) -> dict[int, dict]:
        """Each host's processes sent their messages at once, the barrier in each host's clock."""
        def run(index: int) -> dict:
            host = self.hosts[index]
            at = start_at + host.offset_ns
            messages = {key: {**m, "start_at_unix_ns": at} for key, m in per_host[index].items()}
            return host.call("trial", messages, at, timeout)

        with ThreadPoolExecutor(max_workers=len(per_host)) as pool:
            results = dict(zip(per_host, pool.map(run, per_host)))
        return results

    def close(self) -> None:
        for host in self.hosts:
            try:
                host.call("close")
            except Exception:  # the host went away: its processes went with it
                pass
        self.hosts.clear()
        if self.client is not None:
            try:
                self.client.close(timeout=10)
            except Exception:
                pass
            self.client = None
