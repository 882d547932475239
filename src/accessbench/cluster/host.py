"""What runs on each client host of a cluster: a Dask actor that keeps that host's worker
processes and speaks the worker protocol to them for the runner.

The runner talks to one ``ClientHost`` per host. Dask runs an actor's calls one at a time, so a
trial is one call per host (``trial``) that sends every local process its message at once and
answers with all their answers; the processes themselves wait for the common barrier
(``start_at_unix_ns``, already moved to this host's clock). Around the trial the actor notes
how late this host woke for the barrier (its scheduling, not the workers') and the CPU its
client processes used, against what the host has (``cpus``: its CPU limit, or the processors
this process may run on).

Nothing here reads the runner's files: commands are run as given, so every worker binary must
already be built on the host (``missing`` says which are not).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ..worker_process import WorkerFailed, WorkerProcess, worker_environment

CPUS_ENV = "ACCESSBENCH_HOST_CPUS"  # a host's CPU limit, where one was set (a local cluster's hosts)


def host_cpus() -> float:
    """The CPUs a host's clients may use: its limit, else the processors this process may use."""
    limit = os.environ.get(CPUS_ENV)
    return float(limit) if limit else float(len(os.sched_getaffinity(0)))


def _cpu_ns(pid: int) -> int | None:
    """A live process's user + system CPU so far, and its children's that it waited for."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


class ClientHost:
    """One host's worker processes, by the runner's key for each."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        os.makedirs(workdir, exist_ok=True)
        self.workers: dict[str, WorkerProcess] = {}

    def facts(self) -> dict:
        """Who this host is: its name, the address it reaches the scheduler from, its CPUs."""
        return {"hostname": socket.gethostname(), "cpus": host_cpus(), "pid": os.getpid(),
                "limited": CPUS_ENV in os.environ}

    def clock(self) -> int:
        return time.time_ns()

    def missing(self, files: list[str]) -> list[str]:
        """Of the files a method's command names, those this host does not have."""
        return [path for path in files if not os.path.exists(path)]

    def start(self, key: str, command: list[str], hello: dict, opened: dict, timeout: float) -> dict:
        """A worker process for ``key``, in this host's own worker environment: started,
        greeted and opened (answers as the worker gave them; ``failed`` when it could not start)."""
        self.stop(key)
        log = os.path.join(self.workdir, f"worker-{key.replace('/', '_')}.log")
        worker = WorkerProcess(command, log, worker_environment(self.workdir))
        try:
            greeting = worker.request(hello, timeout)
            answer = worker.request(opened, timeout) if greeting.get("ok") else None
        except WorkerFailed as e:
            worker.kill()
            return {"failed": e.kind, "message": str(e)}
        self.workers[key] = worker
        return {"hello": greeting, "open": answer}

    def alive(self, key: str) -> bool:
        worker = self.workers.get(key)
        return worker is not None and worker.alive

    def request(self, key: str, message: dict, timeout: float) -> dict:
        try:
            return self.workers[key].request(message, timeout)
        except WorkerFailed as e:
            self.workers.pop(key, None)
            return {"failed": e.kind, "message": str(e)}

    def trial(self, messages: dict[str, dict], start_at: int, timeout: float) -> dict:
        """Every local process's message sent at once; their answers by key, this host's
        lateness at the barrier and its client processes' CPU over the trial."""
        for message in messages.values():  # raw latencies (on request) in this host's own directory
            if message.get("latency_file"):
                message["latency_file"] = os.path.join(self.workdir, os.path.basename(message["latency_file"]))
        pids = [self.workers[key].proc.pid for key in messages if key in self.workers]
        woke: list[int] = []

        def barrier() -> None:
            time.sleep(max(0.0, (start_at - time.time_ns()) / 1e9))
            woke.append(time.time_ns())

        watcher = threading.Thread(target=barrier, daemon=True)
        watcher.start()
        before = {pid: _cpu_ns(pid) for pid in pids}
        with ThreadPoolExecutor(max_workers=max(1, len(messages))) as pool:
            futures = {key: pool.submit(self.request, key, message, timeout) for key, message in messages.items()}
            answers = {key: future.result() for key, future in futures.items()}
        ended = time.time_ns()
        for key, message in messages.items():
            if message.get("latency_file") and answers[key].get("ok"):
                try:
                    with open(message["latency_file"], "rb") as f:
                        answers[key]["raw"] = f.read()
                    os.remove(message["latency_file"])
                except OSError:
                    pass
        watcher.join(timeout=1)
        after = {pid: _cpu_ns(pid) for pid in pids}
        used = sum(after[p] - before[p] for p in pids if before[p] is not None and after[p] is not None)
        started = woke[0] if woke else None
        return {"answers": answers, "barrier_late_ns": started - start_at if started else None,
                "cpu_ns": used, "wall_ns": ended - (started or start_at), "cpus": host_cpus()}

    def stop(self, key: str) -> None:
        worker = self.workers.pop(key, None)
        if worker is not None:
            worker.close(timeout=5)

    def kill(self, keys: list[str]) -> None:
        for key in keys:
            worker = self.workers.pop(key, None)
            if worker is not None:
                worker.kill()

    def stop_all(self) -> int:
        """Every worker process ended (a step's end); how many there were."""
        count = len(self.workers)
        for key in list(self.workers):
            self.stop(key)
        return count

    def close(self) -> int:
        """Every worker process ended and this host's work directory removed (the run's end)."""
        count = self.stop_all()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return count
