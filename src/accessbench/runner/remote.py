"""A loaded step's clients on a cluster's hosts (cluster/): their worker processes, kept per
host between trials as local workers are, and one trial of them all at the barrier.

The runner decides what each process is sent (its share of clients and rate); this module
decides where the processes are, starts them there, and turns the hosts' answers into one
trial: the answers merged as a local trial's are, plus each host's part — its processes,
clients and operations, its client processes' CPU against what the host has, how late it
woke for the barrier, and its clock's offset — so that a report can tell when a client host,
not the server, set the pace.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cluster.dask import Cluster
from ..cluster.placement import Placed, place
from .state import CellFailed

class RemoteFailed(Exception):
    """A client host's process failed; ``kind`` is timeout|unsupported|error (or the worker's own)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    def cell_failed(self):
        return CellFailed(self.kind if self.kind in ("timeout", "unsupported") else "error", str(self))


@dataclass(frozen=True)
class Remote:
    placed: Placed
    key: str


class RemoteClients:
    def __init__(self, cluster: Cluster, endpoints: dict[str, dict], timeout: float) -> None:
        self.cluster = cluster
        self.endpoints = endpoints   # target name → the endpoint the cluster's hosts reach it by
        self.timeout = timeout
        self.started: set[str] = set()

    @property
    def hosts(self) -> int:
        return len(self.cluster.hosts)

    def place(self, cell, one_client_per_process: bool) -> list[Remote]:
        """The cell's processes, over the step's ``hosts`` (default: all), keyed by cell and place."""
        hosts = min(cell.step.hosts or self.hosts, self.hosts)
        tag = "|".join(cell.worker_key)
        return [Remote(p, f"{tag}|h{p.host}p{p.process}")
                for p in place(cell.step.clients, hosts, one_client_per_process)]

    def start(self, remote: Remote, command: list[str], target: str) -> None:
        """The process running on its host (started, greeted, opened), or RemoteFailed."""
        host = self.cluster.hosts[remote.placed.host]
        if remote.key in self.started and host.call("alive", remote.key):
            return
        self.started.discard(remote.key)
        opened = {"op": "open", "endpoint": self.endpoints[target], "options": {}, "clients": 1}
        answer = host.call("start", remote.key, command, {"op": "hello"}, opened, self.timeout)
        if answer.get("failed"):
            raise RemoteFailed(answer["failed"], f"worker start on {host.name}: {answer['message']}")
        for step in ("hello", "open"):
            if not (answer.get(step) or {}).get("ok"):
                error = (answer.get(step) or {}).get("error", {})
                raise RemoteFailed("error", f"{step} on {host.name}: {error.get('message', 'no answer')}")
        self.started.add(remote.key)

    def trial(self, remotes: list[Remote], messages: list[dict], start_at: int) -> tuple[list[dict], list[dict]]:
        """Every process's answer (in ``remotes`` order) and each host's part of the trial."""
        per_host: dict[int, dict[str, dict]] = {}
        for remote, message in zip(remotes, messages):
            per_host.setdefault(remote.placed.host, {})[remote.key] = message
        results = self.cluster.trial(per_host, start_at, self.timeout)
        answers = []
        for remote in remotes:
            answer = results[remote.placed.host]["answers"][remote.key]
            host = self.cluster.hosts[remote.placed.host].name
            if answer.get("failed"):
                self.started.discard(remote.key)
                raise RemoteFailed(answer["failed"], f"on {host}: {answer['message']}")
            if not answer.get("ok"):
                error = answer.get("error", {})
                raise RemoteFailed("unsupported" if error.get("kind") == "unsupported" else "error",
                                   f"on {host}: {error.get('message')}")
            answers.append(answer)
        return answers, [self._part(index, results[index], [a for r, a in zip(remotes, answers)
                                                            if r.placed.host == index])
                         for index in sorted(results)]

    def _part(self, index: int, result: dict, answers: list[dict]) -> dict:
        host = self.cluster.hosts[index]
        capacity = result["cpus"] * result["wall_ns"]
        return {"host": host.name, "processes": len(answers), "clients": sum(a.get("clients") or 1 for a in answers),
                "n": sum(a["n"] for a in answers), "cpu_ns": result["cpu_ns"], "wall_ns": result["wall_ns"],
                "cpus": result["cpus"], "busy": round(result["cpu_ns"] / capacity, 2) if capacity > 0 else None,
                "barrier_late_ns": result["barrier_late_ns"], "clock_offset_ns": host.offset_ns,
                "clock_uncertainty_ns": host.uncertainty_ns}

    def kill(self, remotes: list[Remote]) -> None:
        for index in {r.placed.host for r in remotes}:
            keys = [r.key for r in remotes if r.placed.host == index]
            try:
                self.cluster.hosts[index].call("kill", keys)
            except Exception:  # a host gone: its processes went with it
                pass
            self.started.difference_update(keys)

    def stop_all(self) -> None:
        for host in self.cluster.hosts:
            try:
                host.call("stop_all")
            except Exception:
                pass
        self.started.clear()
