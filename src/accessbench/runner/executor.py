"""How a cell's trials are executed: the one interface between the run's recipe and the
processes that measure, as hyperfine's ``Executor`` is between its benchmark and the shell.

``WorkerExecutor`` is the real one. It keeps a pool of worker processes, one per (method,
target, path) — more for a loaded step whose runtime drives one client per process — greets
and opens each, and runs a trial in one of three ways: a plain trial (one worker, one timed
loop, every latency written to a file), a loaded trial (C clients at once in one or C
processes, started together at a barrier, their answers merged) or, under ``--cluster``, a
loaded trial on the cluster's hosts. Around each it measures what a worker cannot: the serving
backends' CPU and what crossed the path. A worker that times out has its statements cancelled
on the server before it is killed.

Tests stand a fake in for it (tests/fakes.py) and so test the recipe without processes.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import first_line
from ..paths import PathRun
from ..paths.tls import transport_differs
from ..paths.floor import NoFloor
from ..protocol.capabilities import PROCESSES
from ..protocol.histogram import Histogram
from ..protocol.prng import derive_seed
from ..targets import Target
from ..worker_process import WorkerFailed, WorkerProcess
from . import memory
from .context import RunContext
from ..cputime import total_cpu_ns, tree_cpu_ns
from .plan import Cell
from .remote import RemoteClients, RemoteFailed
from .state import CellFailed


@dataclass
class Trial:
    """One timed trial as the store keeps it: the worker's answer (merged, under load), its
    latencies where they were written, the server's CPU (of the serving backends, or of the
    whole ``server`` where those are not known: ``scope``) and what crossed the path."""

    started_at: str
    answer: dict
    latencies: bytes | None
    server_ns: int | None
    wire: dict | None
    scope: str = "backends"


class Executor:
    """What the recipe asks of whatever runs its cells. Every method raises ``CellFailed``
    when the cell cannot go on."""

    def open(self, cell: Cell) -> None:
        """The cell's worker ready (greeted and opened): its method's hello is in the context."""
        raise NotImplementedError

    def ask(self, cell: Cell, message: dict) -> dict:
        """One untimed request to the cell's worker (a verification pass, a dump), answered ok."""
        raise NotImplementedError

    def trial(self, cell: Cell, iterations: int | None = None) -> Trial:
        """One timed trial of the cell, its step's reset done first; ``iterations``: other than
        the step's (a profile's one long trial), for a plain trial only."""
        raise NotImplementedError

    def use_cluster(self, remote: RemoteClients) -> None:
        """Loaded steps' clients on the cluster's hosts from now on."""
        raise NotImplementedError

    def keep(self, cells: list[Cell]) -> None:
        """The cells measured next: the workers of any other cell are closed, so that what is
        open at once is what the run's room allows (runner/plan.py ``batches``)."""

    def close(self) -> None:
        """Every worker closed (the end of a variant: its tables go)."""

    def cancel(self) -> None:
        """On the way out of a stopped run: what every worker still runs on a server cancelled,
        the workers killed."""

    def holds(self) -> str | None:
        """What is still running, for the line about what was left where."""
        return None

    def processes(self, cell: Cell) -> tuple[int, list[int]] | None:
        """The pid of the cell's worker on this machine and the server backends it has said
        serve it (thread ids on a server that serves by thread), for a profile; None when its
        workers are not this machine's processes."""
        return None


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class WorkerExecutor(Executor):
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.workers: dict[tuple, WorkerProcess] = {}
        self.broken: dict[tuple, CellFailed] = {}
        self.server_pids: dict[tuple, set[int]] = {}  # worker → every backend it has reported
        self.remote: RemoteClients | None = None  # a loaded step's clients on --cluster's hosts

    # the Executor interface
    def open(self, cell: Cell) -> None:
        self._worker(cell)

    def ask(self, cell: Cell, message: dict) -> dict:
        return self._request(cell, self._worker(cell), cell.worker_key, message)

    def trial(self, cell: Cell, iterations: int | None = None) -> Trial:
        if cell.step.loaded:
            return self._cluster_trial(cell) if self.remote is not None else self._loaded_trial(cell)
        return self._plain_trial(cell, iterations)

    def use_cluster(self, remote: RemoteClients) -> None:
        self.remote = remote

    def keep(self, cells: list[Cell]) -> None:
        wanted = {cell.worker_key for cell in cells}
        for key in [k for k in self.workers if k[:3] not in wanted]:  # a cell's client processes too
            self.workers.pop(key).close(timeout=5)
            self.server_pids.pop(key, None)

    def close(self) -> None:
        if self.remote is not None:
            self.remote.stop_all()
        for worker in self.workers.values():
            worker.close(timeout=5)
        self.workers.clear()
        self.broken.clear()

    def cancel(self) -> None:
        for target in self.ctx.targets:
            keys = [k for k in self.workers if k[1] == target.name]
            if keys:
                self._cancel(target, keys)
            for key in keys:
                self.workers[key].kill()

    def processes(self, cell: Cell) -> tuple[int, list[int]] | None:
        backends = sorted(self.server_pids.get(cell.worker_key, set()))
        return self._worker(cell).proc.pid, backends

    def holds(self) -> str | None:
        alive = [str(w.proc.pid) for w in self.workers.values() if w.alive]
        return f"worker processes {', '.join(alive)}" if alive else None

    # the three kinds of trial
    def _plain_trial(self, cell: Cell, iterations: int | None = None) -> Trial:
        ctx = self.ctx
        ctx.reset(cell)
        latency_file = os.path.join(ctx.workdir, "latencies.bin")
        started_at = now()
        # A worker may use several connections (one per mode): every backend it has reported.
        # A connect step's backends are new per operation and gone before they could be read.
        known = ctx.server_cpu_known(cell) and cell.step.kind != "connect"
        pids = sorted(self.server_pids.get(cell.worker_key, set())) if known else []
        worker = self._worker(cell).proc.pid
        rss = memory.start(worker)  # the worker's peak during the trial: reset now, read after
        message = {**ctx.message(cell), "latency_file": latency_file, **({"iterations": iterations} if iterations else {})}
        answer, server_ns, wire = self._around(cell, pids, lambda: self.ask(cell, message))
        if rss is not None and (high := memory.peak(worker, rss)) is not None:
            answer = {**answer, "start_rss_bytes": rss, "peak_rss_bytes": high}
        latencies = read_and_remove(latency_file) or b""
        if len(latencies) != 8 * answer["n"]:
            raise CellFailed("error", f"latency file has {len(latencies)} bytes for {answer['n']} operations")
        self.server_pids.setdefault(cell.worker_key, set()).update(answer.get("server_pids") or [])
        return Trial(started_at, answer, latencies, server_ns, wire)

    def _loaded_trial(self, cell: Cell) -> Trial:
        """C clients at once. A worker whose runtime drives one client per process (Python's
        under the GIL) gets C processes, started together at a barrier; the answers merge."""
        ctx = self.ctx
        caps = self._load_capabilities(cell)
        clients = cell.step.clients
        processes = clients if caps.get("concurrency") == PROCESSES else 1
        workers = [self._worker(cell, i) for i in range(processes)]  # all up before the barrier
        ctx.reset(cell)
        started_at = now()
        keys = [_worker_key(cell, i) for i in range(processes)]
        # Server CPU only where every serving backend is known before the trial: one client per
        # process on a persistent connection. Several clients in one process open their other
        # connections inside the request, so their backends are unknown until it ends.
        known = ctx.server_cpu_known(cell) and cell.step.policy == "persistent" and processes == clients
        pids = sorted(set().union(*(self.server_pids.get(k, set()) for k in keys))) if known else []
        # Otherwise, on a server the run started (and is the only user of), the whole server's
        # CPU: every backend of the trial's connections, those that came and went included.
        whole = None if known else ctx.target(cell).server_process()
        # Far enough ahead for every process to get its message and settle before the start.
        start_at = time.time_ns() + 100_000_000 + 10_000_000 * processes

        share = clients // processes

        def ask(i: int) -> dict:
            return self._request(cell, workers[i], keys[i], self._load_message(cell, share, i * share, start_at, i))

        pool = ThreadPoolExecutor(max_workers=processes)
        try:
            answers, server_ns, wire = self._around(cell, pids, lambda: list(pool.map(ask, range(processes))), whole)
        except BaseException:  # Ctrl-C, or a client failed: the others must not run on for the trial's length
            self._cancel(ctx.target(cell), keys)
            for worker in workers:
                worker.kill()
            raise
        finally:
            pool.shutdown(wait=True)
        answer = merge_answers(answers)
        answer["processes"] = processes
        raw = None
        if ctx.options.raw_latencies and caps["load"].get("latencies"):
            raw = raw_latencies(answer, [read_and_remove(os.path.join(ctx.workdir, f"latencies-{i}.bin"))
                                         for i in range(processes)])
        if processes == clients:  # the backends of connections that outlive the trial
            for key, a in zip(keys, answers):
                self.server_pids.setdefault(key, set()).update(a.get("server_pids") or [])
        return Trial(started_at, answer, raw, server_ns, wire, "server" if whole else "backends")

    def _cluster_trial(self, cell: Cell) -> Trial:
        """C clients on the cluster's hosts, dealt to them in turn, started at one barrier (in
        each host's clock); the answers merge as a local trial's, and each host's part is kept.
        The server's CPU is the whole managed server's (the clients' backends are not known here)."""
        ctx, remote = self.ctx, self.remote
        caps = self._load_capabilities(cell)
        remotes = remote.place(cell, caps.get("concurrency") == PROCESSES)
        command = ctx.method(cell).command()
        try:
            for one in remotes:  # all up before the barrier
                remote.start(one, command, cell.target)
        except RemoteFailed as e:
            raise e.cell_failed() from None
        ctx.reset(cell)
        started_at = now()
        before = [sum(r.placed.clients for r in remotes[:i]) for i in range(len(remotes))]
        # Far enough ahead for every host to get its messages through Dask and settle.
        start_at = time.time_ns() + 300_000_000 + 10_000_000 * len(remotes)
        messages = [self._load_message(cell, r.placed.clients, b, start_at, i)
                    for i, (r, b) in enumerate(zip(remotes, before))]
        whole = ctx.target(cell).server_process()
        parts: list[dict] = []

        def ask() -> list[dict]:
            answers, found = remote.trial(remotes, messages, start_at)
            parts.extend(found)
            return answers

        try:
            answers, server_ns, wire = self._around(cell, [], ask, whole)
        except BaseException as e:  # Ctrl-C, or a client failed: the others must not run on
            self._cancel(ctx.target(cell), [])
            remote.kill(remotes)
            if isinstance(e, RemoteFailed):
                raise e.cell_failed() from None
            raise
        raws = [a.pop("raw", None) for a in answers] if "latency_file" in messages[0] else []
        answer = merge_answers(answers)
        answer.update(processes=len(remotes), per_host=parts)
        return Trial(started_at, answer, raw_latencies(answer, raws), server_ns, wire,
                     "server" if whole else "backends")

    def _around(self, cell: Cell, pids: list[int], ask,
                whole: int | None = None) -> tuple[dict, int | None, dict | None]:
        """Run ``ask`` and measure around it what the worker cannot: the serving backends' CPU
        (managed servers run on this machine), or with ``whole`` the whole server's (the pid
        of its first process), and what crossed the latency proxy (only this cell's workers
        talk through it meanwhile)."""
        path = self.ctx.path(cell)
        floor = self.ctx.method(cell).reads == "floor"
        wire_before = path.counters(floor)
        threads = self.ctx.target(cell).serves_by_thread
        read = (lambda: tree_cpu_ns(whole)) if whole else (lambda: total_cpu_ns(pids, threads))  # noqa: E731
        server_before = read()
        answer = ask()
        server_after = read()
        server_ns = server_after - server_before if server_before is not None and server_after is not None else None
        wire = None
        if wire_before is not None:
            after = path.counters(floor)
            wire = {k: after[k] - wire_before[k] for k in ("round_trips", "c2s_bytes", "s2c_bytes")}
        return answer, server_ns, wire

    # steps under load
    def _load_message(self, cell: Cell, share: int, before: int, start_at: int, process: int) -> dict:
        """A loaded trial's step for one worker process: its ``share`` of the clients (``before``
        of them driven by the processes ahead of it) and so of the rate and pool, its own arrival
        stream, and the wall-clock instant every process starts at."""
        ctx, step = self.ctx, cell.step
        message = {**ctx.message(cell), "histogram": True, "clients": share, "start_at_unix_ns": start_at}
        if ctx.options.raw_latencies and ctx.capabilities.get(cell.method, {}).get("load", {}).get("latencies"):
            message["latency_file"] = os.path.join(ctx.workdir, f"latencies-{process}.bin")
        if step.policy == "pooled" and share < step.clients:  # each process its own share of the pool
            message["pool_size"] = max(1, -(-(step.pool_size or step.clients) * share // step.clients))
        if step.duration:
            message["duration_ms"] = step.duration * 1000
        if step.rate:
            message.update(rate=step.rate * share / step.clients, arrival=step.arrival,
                           schedule_seed=derive_seed(ctx.suite.seed, "schedule", step.name, str(process)))
            if step.arrival == "uniform" and before:  # the processes' arrivals interleave
                message["phase_ns"] = round(before * 1e9 / step.rate)
        return message

    def _load_capabilities(self, cell: Cell) -> dict:
        """The method's capabilities, when its worker can run this loaded step."""
        caps = self.ctx.capabilities.get(cell.method, {})
        if not caps.get("load"):
            raise CellFailed("unsupported", f"{cell.method}'s worker does not run steps under load yet "
                                            "(clients, duration, rate, connection policy)")
        policies = caps["load"].get("policies", [])
        if cell.step.policy not in policies:
            raise CellFailed("unsupported", f"{cell.method}'s worker has no {cell.step.policy} connection policy "
                                            f"(it has {', '.join(policies) or 'none'})")
        return caps

    # the worker pool
    def _worker(self, cell: Cell, process: int = 0) -> WorkerProcess:
        ctx = self.ctx
        key = _worker_key(cell, process)
        if key in self.broken:
            raise self.broken[key]
        worker = self.workers.get(key)
        if worker is not None and worker.alive:
            return worker
        log = os.path.join(ctx.workdir, f"worker-{'-'.join(key).replace('/', '_')}.log")
        worker = WorkerProcess(ctx.path(cell).command(ctx.method(cell).command()), log, ctx.worker_env)
        try:
            with self._path_says(cell):
                self._greet_and_open(cell, key, worker)
        except WorkerFailed as e:
            worker.kill()
            self.broken[key] = CellFailed("error", f"worker start: {e}")
            raise self.broken[key] from None
        except CellFailed as e:
            worker.close()
            self.broken[key] = e
            raise
        self.workers[key] = worker
        return worker

    def _greet_and_open(self, cell: Cell, key: tuple, worker: WorkerProcess) -> None:
        """hello (its answer kept in the run's context), then open on the cell's path: a
        server serving TLS must have seen the connections encrypted as the path asks."""
        ctx = self.ctx
        method, target, path = ctx.method(cell), ctx.target(cell), ctx.path(cell)
        hello = worker.request({"op": "hello"}, ctx.options.timeout)
        if not hello.get("ok"):
            raise CellFailed("error", f"hello: {hello.get('error', {}).get('message')}")
        ctx.greeted(method.name, hello)
        endpoint = path.endpoint(target)
        if method.reads == "floor":  # not a method: the raw bytes' sender along this path
            endpoint = {**endpoint, "floor": self._floor_sender(cell)}
        mark = target.transport_mark() if target.authority else None
        opened = worker.request({"op": "open", "endpoint": endpoint, "options": {}, "clients": 1}, ctx.options.timeout)
        if not opened.get("ok"):
            error = opened.get("error", {})
            raise CellFailed("unsupported" if error.get("kind") == "unsupported" else "error",
                             f"open: {error.get('message')}")
        if target.authority and path.server_cpu_known:  # behind a pooler the server sees the pooler
            wrong = transport_differs(path, target.transport(mark, opened.get("server_pid")))
            if wrong:
                raise CellFailed("error", wrong)
        self.server_pids[key] = {opened["server_pid"]} if opened.get("server_pid") else set()

    def _floor_sender(self, cell: Cell) -> dict:
        """Where the floor worker of ``cell`` reads from: its path's sender, started on first use."""
        try:
            return self.ctx.path(cell).floor(self.ctx.floor_directory(cell.target),
                                             PathRun(self.ctx.workdir, self.ctx.progress))
        except NoFloor as e:
            raise CellFailed("unsupported", str(e)) from None

    def _request(self, cell: Cell, worker: WorkerProcess, key: tuple, message: dict) -> dict:
        with self._path_says(cell):
            try:
                answer = worker.request(message, self.ctx.options.timeout,
                                        before_kill=lambda: self._cancel(self.ctx.target(cell), [key]))
            except WorkerFailed as e:
                self.workers.pop(key, None)
                raise CellFailed("timeout" if e.kind == "timeout" else "error", str(e)) from None
            if not answer.get("ok"):
                error = answer.get("error", {})
                status = "unsupported" if error.get("kind") == "unsupported" else "error"
                sqlstate = f" [{error['sqlstate']}]" if error.get("sqlstate") else ""
                raise CellFailed(status, f"{error.get('message', 'no message')}{sqlstate}")
        return answer

    @contextmanager
    def _path_says(self, cell: Cell):
        """A cell that fails on a path with a log of its own (a pooler) carries what the path
        logged meanwhile: the pooler's own words beside the driver's (a child that died)."""
        path = self.ctx.path(cell)
        mark = path.log_mark()
        try:
            yield
        except CellFailed as e:
            said = path.said_since(mark) if mark is not None else None
            if said and e.status != "unsupported":
                raise CellFailed(e.status, f"{e.message}; {said}") from None
            raise

    def _cancel(self, target: Target, keys: list[tuple]) -> None:
        """Workers that will be killed: first cancel what their sessions execute on the server."""
        try:
            target.cancel(set().union(*(self.server_pids.get(k, set()) for k in keys)))
        except Exception as e:  # the kill goes ahead; say what may still run
            self.ctx.progress.note(f"could not cancel a statement on {target.name}: {first_line(e)}")


def _worker_key(cell: Cell, process: int = 0) -> tuple:
    """Process 0 is the cell's usual worker; more are started for clients under load."""
    return cell.worker_key if process == 0 else (*cell.worker_key, f"client{process}")


def read_and_remove(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    os.remove(path)
    return data


def raw_latencies(answer: dict, parts: list[bytes | None]) -> bytes | None:
    """A loaded trial's raw latencies, every process's together, when each wrote them all."""
    if not parts or any(p is None for p in parts):
        return None
    raw = b"".join(parts)
    if len(raw) != 8 * answer["n"]:
        raise CellFailed("error", f"the latency files hold {len(raw) // 8} latencies for {answer['n']} operations")
    return raw


def merge_answers(answers: list[dict]) -> dict:
    """One trial from the answers of the processes that ran its clients together: counts and
    CPU add up, the trial lasts until the last client ended, histograms merge."""
    if len(answers) == 1:
        return dict(answers[0])
    histogram = Histogram()
    for a in answers:
        histogram.merge(Histogram.from_json(a["histogram"]))
    total = lambda key: sum(a.get(key) or 0 for a in answers)  # noqa: E731
    merged = {key: total(key) for key in ("n", "rows", "user_ns", "sys_ns", "late", "skipped")}
    merged.update(
        elapsed_ns=max(a["elapsed_ns"] for a in answers), first_op_ns=min(a.get("first_op_ns") or 0 for a in answers),
        histogram=histogram.to_json(), clients=total("clients"),
        per_client=[c for a in answers for c in a.get("per_client", [])],
        server_pids=sorted({p for a in answers for p in a.get("server_pids") or []}),
    )
    if all(a.get("values") is not None for a in answers):
        merged["values"] = total("values")
    return merged
