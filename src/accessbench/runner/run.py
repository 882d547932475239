"""One run, as a recipe: start targets → per variant: load data → per step: verify every
cell, compare checksums, then warmup and interleaved trials → stop everything.

The runner never prints; it tells a ``Progress`` what it is doing, and the CLI decides how
that looks.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from .. import formatting as fmt
from ..data.generate import table_rows
from ..env import IDLE_MAY_HALT, environment
from ..errors import Fault, first_line, InputError
from ..methods import Method
from .. import paths as path_kinds
from ..paths import Path, PathRun
from ..paths.floor import NoFloor, name_of as floor_name, write_csv
from ..protocol.capabilities import PROCESSES
from ..protocol.checksum import Checksum
from ..protocol.histogram import Histogram
from ..protocol.prng import derive_seed
from ..stats.cells import UNITS
from ..store import Store
from ..suite.model import Suite
from ..suite.shape import of_step
from ..targets import Target, TargetUnavailable
from . import memory
from .awake import KeepAwake
from .cleanup import Cleanup, claim, left_by_killed_runs
from .cputime import total_cpu_ns, tree_cpu_ns
from .diagnosis import DUMP_ROWS, explain
from .precision import Precision
from .plan import Cell, paths_of, trial_order, variant_plan
from .resume import Done
from .remote import RemoteClients, RemoteFailed
from .steadiness import Steadiness
from .worker import WorkerFailed, WorkerProcess, worker_environment


@dataclass
class RunOptions:
    trials: int = 5
    warmup: int = 1
    max_warmup: int = 10     # JIT runtimes warm until stable, up to this many warmups
    stable_within: float = 0.05
    timeout: float = 300.0
    quick: bool = False
    workdir: str | None = None
    unconfined_sql: bool = False  # a user's suite may reach beyond the run's own schema on external servers
    label: str | None = None      # the user's name for the run: shown by `runs` and in its reports
    precision: float = 0.0        # add trials until each cell's CI is within ± this (0: fixed trials only)
    budget: float = 480.0         # seconds the run may spend on those extra trials
    max_trials: int = 80          # timed trials a cell may reach for precision
    cluster: Any = None           # cluster.ClusterSpec: loaded steps' clients on a cluster's hosts
    raw_latencies: bool = False   # loaded trials also keep every latency, where the worker can write them
    allow_idle_halt: bool = False  # measure without holding idle CPUs awake (runner/awake.py)


class Progress:
    """What the runner reports while it works; the default says nothing. ``begin`` gives the
    total of worker executions once and it never changes: a JIT runtime's extra warmups (how
    many is known only as they settle) are shown in flight but advance nothing."""

    def begin(self, total: int) -> None: ...
    def advance(self, description: str, amount: int = 1) -> None: ...
    def note(self, message: str) -> None: ...
    def end(self) -> None: ...


@dataclass
class CellState:
    id: int
    status: str = "planned"
    message: str | None = None
    key: tuple | None = None  # what verification found: (rows, checksum, check checksum)
    warmups: list[float] = field(default_factory=list)  # ns per op of each warmup trial
    planned: int = 0          # executions still counted in the progress total
    done: int = 0
    kind: str = ""            # its step's kind: what one unit of its figure is
    last: str = ""            # the figure of its last timed trial, shown while the next runs
    rates: list[float] = field(default_factory=list)  # units/s of each timed trial of this session
    extra: int = 0            # timed trials added for precision

    @property
    def measurable(self) -> bool:
        return self.status in ("ok", "mismatch")

    def settled(self, within: float) -> bool:
        """The last two warmups agree within ``within``: a JIT runtime is warm."""
        if len(self.warmups) < 2:
            return False
        a, b = self.warmups[-2:]
        return abs(a - b) <= within * min(a, b)


class CellFailed(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def new_run_id() -> str:
    return dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def make_workdir(parent: str | None) -> str:
    """The run's own work directory (removed at the end), under ``parent`` or the temp dir,
    marked as this process's (runner/cleanup.py: what a killed run left is removed by the next)."""
    if parent is not None and not os.path.isdir(parent):
        raise InputError(f"--workdir {parent}: no such directory")
    workdir = None
    try:
        workdir = tempfile.mkdtemp(prefix="accessbench-", dir=parent)
        claim(workdir)
        return workdir
    except OSError as e:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        raise InputError(f"--workdir {parent or tempfile.gettempdir()}: cannot make the run's directory there "
                         f"({e.strerror or e})") from None


def _timed_out(error: Exception) -> bool:
    """A statement on the runner's own connection stopped by its time bound (PostgreSQL
    57014, MariaDB 1969, SQLite interrupted)."""
    code = getattr(error, "sqlstate", None) or (error.args[0] if getattr(error, "args", None) else None)
    return code in ("57014", 1969) or "interrupted" in str(error)


class Runner:
    def __init__(self, suite: Suite, targets: list[Target], paths: list[str] | None, methods: list[Method],
                 store: Store, options: RunOptions, progress: Progress | None = None, done: Done | None = None) -> None:
        self.suite, self.targets, self.paths, self.methods = suite, targets, paths, methods
        self.store, self.options = store, options
        self.progress = progress or Progress()
        self.by_name = {t.name: t for t in targets}
        self.method_by_name = {m.name: m for m in methods}
        self.workers: dict[tuple, WorkerProcess] = {}
        self.broken: dict[tuple, CellFailed] = {}
        self.hello_stored: set[str] = set()
        self.capabilities: dict[str, dict] = {}  # method → capabilities from its hello
        self.settings: dict[str, dict] = {}      # method → pinned settings from its hello
        self.server_pids: dict[tuple, set[int]] = {}  # worker → every backend it has reported
        self.routes: dict[tuple[str, str], Path] = {}  # (target, path name) → the path, started
        self.done = done or Done()  # what a resumed run already stored; nothing for a new one
        self.precision = Precision(options.precision, options.budget, options.max_trials)
        self.steadiness = Steadiness()  # the host's own speed, timed between steps
        self.run_id = self.done.run_id or new_run_id()
        self.remote: RemoteClients | None = None  # a loaded step's clients on --cluster's hosts

    # the recipe
    def run(self) -> str:
        o = self.options
        for line in left_by_killed_runs(o.workdir or tempfile.gettempdir()):
            self.progress.note(line)
        self.workdir = make_workdir(o.workdir)
        cleanup = Cleanup()
        cleanup.push(lambda: f"the run's work directory {self.workdir}", lambda: shutil.rmtree(self.workdir))
        try:
            self.worker_env = worker_environment(self.workdir)
            settings = {
                "trials": o.trials, "warmup": o.warmup, "max_warmup_jit": o.max_warmup, "timeout_s": o.timeout,
                "quick": o.quick, "unconfined_sql": o.unconfined_sql, "label": o.label,
                "targets": [t.name for t in self.targets], "paths": self.paths,
                "methods": [m.name for m in self.methods], "seed": self.suite.seed,
                "precision": o.precision, "budget_s": o.budget, "max_trials": o.max_trials,
                "allow_idle_halt": o.allow_idle_halt,
                **({"cluster": o.cluster.text} if o.cluster is not None else {}),
            }
            if self.done.resumed:
                self.store.resume_run(self.run_id, settings)
            else:
                self.store.begin_run(self.run_id, self.suite, settings=settings, environment=environment(),
                                     version=__version__)
        except BaseException:
            cleanup.run()
            raise
        status, message = "failed", None
        try:
            self._hold_cpus_awake(cleanup)
            self._start_targets(cleanup)
            if o.cluster is not None:
                self._start_cluster(cleanup)
            # data is loaded only where a cell is still to be measured (everywhere, in a new run)
            plan = [(v, self.done.to_measure(ts, groups, o.trials), groups)
                    for v, ts, groups in variant_plan(self.suite, self.targets, self.paths, self.methods)]
            self.progress.begin(sum(self.done.executions(groups, o.warmup, o.trials) + len(v.tables) * len(ts)
                                    for v, ts, groups in plan))
            self.precision.steps_left = sum(len(groups) for _, _, groups in plan)
            self.steadiness.probe()
            for variant, targets, groups in plan:
                unloaded = self._load(variant, targets)
                for group in groups:
                    self._measure_step(group, unloaded)
                    self.steadiness.probe()
                self._close_workers()
            if self.store.measured(self.run_id):
                status = "complete"
            else:
                message = "nothing was measured: every cell failed or is unsupported (accessbench show " \
                          f"{self.run_id} lists why)"
        except KeyboardInterrupt:
            status, message = "interrupted", "interrupted by the user"
            raise
        except TargetUnavailable as e:
            message = str(e)
            raise InputError(message) from None
        except Exception as e:
            message = str(e) if isinstance(e, Fault) else f"{type(e).__name__}: {e}"
            raise
        finally:
            cleanup.push(self._worker_pids, self._close_workers)
            if status != "complete":  # stop what the servers still run for us before the workers go
                cleanup.push(self._worker_pids, self._cancel_everything)
            cleanup.push(lambda: None, self.progress.end)
            self.left_behind = cleanup.run()
            if self.left_behind:
                message = f"{message + '; ' if message else ''}left behind: {'; '.join(self.left_behind)}"
            try:
                if (steadiness := self.steadiness.summary()) is not None:
                    self.store.note_environment(self.run_id, "steadiness", steadiness)
                self.store.end_run(self.run_id, status, message)
            except Fault:
                pass  # the store cannot be written: the caller says so
        return self.run_id

    def _hold_cpus_awake(self, cleanup: Cleanup) -> None:
        """Idle CPUs are held awake for the whole run unless --allow-idle-halt: a VM's wake-up
        from halt would otherwise be measured with every round trip, at a cost that changes
        with what the host did just before (runner/awake.py). The run stores which it was."""
        if self.options.allow_idle_halt:
            how = f"{IDLE_MAY_HALT} (--allow-idle-halt)"
        else:
            awake = KeepAwake()
            cleanup.push(lambda: None, awake.close)  # the kernel drops the request with the process anyway
            how = awake.how
            self.progress.note(f"idle CPUs {how} while the run measures (--allow-idle-halt: not)" if awake.awake else
                               f"idle CPUs {how}: round-trip-bound steps then also measure how fast this host's "
                               "idle CPUs wake, which varies (docs/methodology.md)")
        self.store.note_environment(self.run_id, "idle_cpus", how)

    def _start_targets(self, cleanup: Cleanup) -> None:
        """Each target started (its stop pushed first: stop is safe after a failed start), bounded
        by --timeout on the runner's own connection, its paths started and its description stored."""
        confine = not self.suite.source.startswith("builtin:") and not self.options.unconfined_sql
        path_run = PathRun(self.workdir, self.progress)
        for target in self.targets:
            self.progress.note(f"starting {target.name}")
            target.server_settings = self.suite.server.get(target.dbms, {})
            target.run_id, target.confine = self.run_id, confine and not target.managed
            if target.server_settings and not target.managed:  # never reconfigure a server we do not own
                self.progress.note(f"{target.name}: the suite's [server.{target.dbms}] settings apply to managed "
                                   "servers only; this one is measured as it is (its settings are recorded)")
            cleanup.push(target.holds, target.stop)
            target.start(self.workdir)
            target.bound(self.options.timeout)
            description = target.describe()
            routes = [path_kinds.parse(name) for name in paths_of(target, self.paths)]
            self.routes.update(((target.name, path.name), path) for path in routes)
            # whatever its paths start (also if starting them fails half-way) stops before the target
            cleanup.push(lambda routes=routes: "; ".join(filter(None, (p.holds() for p in routes))) or None,
                         lambda routes=routes: [path.stop() for path in routes])
            for kind in path_kinds.KINDS:  # each kind's paths together: some share a start-up cost
                group = [path for path in routes if type(path) is kind]
                if group:
                    description["settings"].update(kind.start_all(group, target, path_run))
            self.store.add_target(self.run_id, target, description)

    def _start_cluster(self, cleanup: Cleanup) -> None:
        """--cluster's hosts ready: a local cluster's network made and every managed target
        listening on it; the scheduler reached, an actor on each host, every method's files
        found on each, the clocks compared; what the cluster is, stored with the run."""
        from ..cluster.dask import Cluster
        from ..cluster.local import LocalCluster

        spec = self.options.cluster
        self.progress.note(f"starting cluster {spec.text}")
        scheduler, address, network, expect = spec.scheduler, None, None, None
        if spec.local:
            local = LocalCluster(spec.local_hosts, spec.cpus, self.workdir)
            cleanup.push(local.holds, local.stop)
            local.make_network()
            scheduler, address, network, expect = local.start_dask(), local.address, str(local.network), spec.local_hosts
        cluster = Cluster(scheduler, os.path.join(self.workdir, "hosts"), timeout=max(30.0, self.options.timeout / 10))
        cleanup.push(lambda: f"the cluster's client hosts at {scheduler}" if cluster.hosts else None, cluster.close)
        cluster.connect(expect)
        if address is None:  # a cluster elsewhere: managed servers listen where this host meets the scheduler
            address, network = cluster.local_address(), "samenet"
        endpoints = {}
        for target in self.targets:
            if target.managed and address == target.endpoint("tcp")["host"]:  # a scheduler on this host's loopback
                endpoints[target.name] = target.endpoint("tcp")
            elif target.managed:
                try:
                    target.listen_on(address, network)
                except (KeyboardInterrupt, Fault):
                    raise
                except Exception as e:
                    raise Fault(f"--cluster: {target.name} could not listen on the cluster's network "
                                f"({address}): {first_line(e)}") from None
                endpoints[target.name] = {**target.endpoint("tcp"), "host": address}
            else:
                endpoints[target.name] = target.endpoint("tcp")
        cluster.check_built({m.name: m.files() for m in self.methods})
        self.remote = RemoteClients(cluster, endpoints, self.options.timeout)
        self.store.note_environment(self.run_id, "cluster", {"spec": spec.text, **cluster.describe()})

    def _alive(self, target: Target) -> None:
        """A target that can no longer serve stops the run at once: every later cell would fail."""
        why = target.alive()
        if why:
            raise Fault(why)

    def _load(self, variant, targets: list[Target]) -> dict[str, str]:
        """Tables created and loaded, then the suite's setup SQL, per target. A failure there
        fails this variant on that target (its cells say why), not the run."""
        unloaded: dict[str, str] = {}
        for target in targets:
            what = "creating the tables"
            try:
                target.create(variant.tables)
                for table in variant.tables:
                    self.progress.advance(f"loading {table.name} ({table.rows:,} rows) into {target.name}")
                    what = f"loading {table.name}"
                    target.load(table, table_rows(table, self.suite.seed))
                for sql in self.suite.setup.get(target.dbms, []):  # e.g. a server-side loop to call
                    what = f"setup `{sql}`"
                    target.execute(sql)
            except (KeyboardInterrupt, Fault):
                raise
            except Exception as e:
                self._alive(target)
                unloaded[target.name] = f"{what} failed: {first_line(e)}"
                self.progress.note(f"ERROR {target.name}{f' [{variant.label}]' if variant.label else ''}: "
                                   f"{unloaded[target.name]}")
        return unloaded

    def _measure_step(self, cells: list[Cell], unloaded: dict[str, str]) -> None:
        o = self.options
        # A resumed run's complete and unsupported cells stay as stored; the others carry on in their rows.
        kept = {cell: CellState(s.id, s.status, key=s.key) for cell in cells if (s := self.done.kept(cell, o.trials))}
        cells = [cell for cell in cells if cell not in kept]
        states = {cell: CellState(self.store.add_cell(self.run_id, cell, self.done.row(cell)),
                                  planned=o.warmup + len(self.done.missing(cell, o.trials)), kind=cell.step.kind)
                  for cell in cells}
        for cell in cells:
            self.progress.advance(f"{cell.label} · verify")
            if cell.target in unloaded:
                self._fail(cell, states[cell], CellFailed("error", unloaded[cell.target]), quiet=True)
                continue
            self._verify(cell, states[cell])
        self._compare([*kept, *cells], {**kept, **states})  # the kept cells' first verification votes too
        for state in states.values():
            if not state.measurable:
                self.progress.advance("", state.planned)  # nothing to measure
        self._rounds(trial_order(cells, o.warmup, 0), states)
        # JIT runtimes: more warmup rounds, still interleaved, until each cell is stable.
        for seq in range(o.warmup, max(o.max_warmup, o.warmup)):
            unsettled = [c for c in cells if states[c].measurable and self._jit(c)
                         and not states[c].settled(o.stable_within)]
            if not unsettled:
                break
            self._rounds(((c, "warmup", seq) for c in unsettled), states, counted=False)
        self._rounds(self.done.unmeasured(trial_order(cells, 0, o.trials)), states)
        # Then more rounds for the cells whose figure is not yet within the precision asked for.
        for wide in self.precision.rounds({c: states[c].rates for c in cells}, lambda c: states[c].measurable):
            self._rounds([(c, "trial", o.trials + states[c].extra) for c in wide], states, counted=False)
        for state in states.values():
            if state.warmups:
                self.store.update_cell(state.id, warmups=len(state.warmups))

    def _server_cpu_known(self, cell: Cell) -> bool:
        """The serving backends' CPU can be read: a server on this machine, reached directly
        (behind PgBouncer the backend pid a client is told is PgBouncer's own)."""
        return self.by_name[cell.target].local_server and self.routes[(cell.target, cell.path)].server_cpu_known

    def _jit(self, cell: Cell) -> bool:
        return bool(self.capabilities.get(cell.method, {}).get("jit"))

    def _rounds(self, order, states: dict[Cell, "CellState"], counted: bool = True) -> None:
        """Each (cell, phase, seq) in turn; ``counted`` False for executions outside the
        progress total (a JIT runtime's extra warmups)."""
        for cell, phase, seq in order:
            state = states[cell]
            if not state.measurable:
                continue
            last = f" · last {state.last}" if state.last else ""
            self.progress.advance(f"{cell.label} · {self._what(phase, seq, counted)}{last}", 1 if counted else 0)
            state.done += counted
            state.extra += phase == "trial" and seq >= self.options.trials
            try:
                self._trial(cell, state, phase, seq)
            except CellFailed as e:
                self._fail(cell, state, e)
                self.progress.advance(cell.label, state.planned - state.done)  # what it will not run

    def _what(self, phase: str, seq: int, counted: bool) -> str:
        """The execution in flight, for the progress line."""
        if phase == "warmup":
            return f"warmup {seq + 1}{'' if counted else ' (JIT)'}"
        if seq >= self.options.trials:
            return f"trial {seq + 1} for ±{fmt.share(self.options.precision)}"
        return f"trial {seq + 1}/{self.options.trials}"

    # one cell
    def _message(self, cell: Cell) -> dict:
        step, dbms = cell.step, self.by_name[cell.target].dbms
        params = [
            g.wire(derive_seed(self.suite.seed, "params", step.sql or "", str(i)))
            for i, g in enumerate(step.params)
        ]
        message = {
            "op": "step", "kind": step.kind, "iterations": step.iterations, "fetch": step.reads_rows,
            "params": params, "commit_every": step.commit_every,
        }
        if step.kind == "page":
            message["page"] = step.page
        elif step.kind != "connect":
            message["sql"] = step.sql_on(dbms)
            if self.method_by_name[cell.method].over:  # a layer: what the statement does, for its own API
                message["shape"] = of_step(message["sql"], self._tables(cell))
        if step.mode:
            message["mode"] = step.mode
        if step.mode == "record":
            message["record"] = step.record.model_dump(exclude_none=True)
        if step.batch:
            message["batch"] = step.batch
        if step.policy != "persistent":
            message["policy"] = step.policy
        if step.policy == "pooled":
            message["pool_size"] = step.pool_size or step.clients
        return message

    def _tables(self, cell: Cell) -> list:
        """The suite's tables as the cell's variant defines them."""
        return next((v.tables for v in self.suite.variants if v.label == cell.variant), self.suite.variants[0].tables)

    def _load_message(self, cell: Cell, share: int, before: int, start_at: int, process: int) -> dict:
        """A loaded trial's step for one worker process: its ``share`` of the clients (``before``
        of them driven by the processes ahead of it) and so of the rate and pool, its own arrival
        stream, and the wall-clock instant every process starts at."""
        step = cell.step
        message = {**self._message(cell), "histogram": True, "clients": share, "start_at_unix_ns": start_at}
        if self.options.raw_latencies and self.capabilities.get(cell.method, {}).get("load", {}).get("latencies"):
            message["latency_file"] = os.path.join(self.workdir, f"latencies-{process}.bin")
        if step.policy == "pooled" and share < step.clients:  # each process its own share of the pool
            message["pool_size"] = max(1, -(-(step.pool_size or step.clients) * share // step.clients))
        if step.duration:
            message["duration_ms"] = step.duration * 1000
        if step.rate:
            message.update(rate=step.rate * share / step.clients, arrival=step.arrival,
                           schedule_seed=derive_seed(self.suite.seed, "schedule", step.name, str(process)))
            if step.arrival == "uniform" and before:  # the processes' arrivals interleave
                message["phase_ns"] = round(before * 1e9 / step.rate)
        return message

    def _load_capabilities(self, cell: Cell) -> dict:
        """The method's capabilities, when its worker can run this loaded step."""
        caps = self.capabilities.get(cell.method, {})
        if not caps.get("load"):
            raise CellFailed("unsupported", f"{cell.method}'s worker does not run steps under load yet "
                                            "(clients, duration, rate, connection policy)")
        policies = caps["load"].get("policies", [])
        if cell.step.policy not in policies:
            raise CellFailed("unsupported", f"{cell.method}'s worker has no {cell.step.policy} connection policy "
                                            f"(it has {', '.join(policies) or 'none'})")
        return caps

    def _cluster_trial(self, cell: Cell, state: CellState, phase: str, seq: int) -> None:
        """C clients on the cluster's hosts, dealt to them in turn, started at one barrier (in
        each host's clock); the answers merge as a local trial's, and each host's part is kept.
        The server's CPU is the whole managed server's (the clients' backends are not known here)."""
        caps = self._load_capabilities(cell)
        remotes = self.remote.place(cell, caps.get("concurrency") == PROCESSES)
        command = self.method_by_name[cell.method].command()
        try:
            for remote in remotes:  # all up before the barrier
                self.remote.start(remote, command, cell.target)
        except RemoteFailed as e:
            raise e.cell_failed() from None
        self._reset(cell)
        started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        before = [sum(r.placed.clients for r in remotes[:i]) for i in range(len(remotes))]
        # Far enough ahead for every host to get its messages through Dask and settle.
        start_at = time.time_ns() + 300_000_000 + 10_000_000 * len(remotes)
        messages = [self._load_message(cell, r.placed.clients, b, start_at, i)
                    for i, (r, b) in enumerate(zip(remotes, before))]
        whole = self.by_name[cell.target].server_process()
        parts: list[dict] = []

        def ask() -> list[dict]:
            answers, found = self.remote.trial(remotes, messages, start_at)
            parts.extend(found)
            return answers

        try:
            answers, server_ns, wire = self._around(cell, [], ask, whole)
        except BaseException as e:  # Ctrl-C, or a client failed: the others must not run on
            self._cancel(self.by_name[cell.target], [])
            self.remote.kill(remotes)
            if isinstance(e, RemoteFailed):
                raise e.cell_failed() from None
            raise
        raws = [a.pop("raw", None) for a in answers] if "latency_file" in messages[0] else []
        answer = merge_answers(answers)
        answer.update(processes=len(remotes), per_host=parts)
        raw = self._raw_latencies(answer, raws)
        self._record(state, phase, seq, started_at, answer, raw, server_ns, wire, "server" if whole else "backends")

    def _loaded_trial(self, cell: Cell, state: CellState, phase: str, seq: int) -> None:
        """C clients at once. A worker whose runtime drives one client per process (Python's
        under the GIL) gets C processes, started together at a barrier; the answers merge.
        Under --cluster, on the cluster's hosts instead."""
        from concurrent.futures import ThreadPoolExecutor

        if self.remote is not None:
            return self._cluster_trial(cell, state, phase, seq)
        caps = self._load_capabilities(cell)
        clients = cell.step.clients
        processes = clients if caps.get("concurrency") == PROCESSES else 1
        workers = [self._worker(cell, i) for i in range(processes)]  # all up before the barrier
        self._reset(cell)
        started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        keys = [self._worker_key(cell, i) for i in range(processes)]
        # Server CPU only where every serving backend is known before the trial: one client per
        # process on a persistent connection. Several clients in one process open their other
        # connections inside the request, so their backends are unknown until it ends.
        known = self._server_cpu_known(cell) and cell.step.policy == "persistent" and processes == clients
        pids = sorted(set().union(*(self.server_pids.get(k, set()) for k in keys))) if known else []
        # Otherwise, on a server the run started (and is the only user of), the whole server's
        # CPU: every backend of the trial's connections, those that came and went included.
        whole = None if known else self.by_name[cell.target].server_process()
        # Far enough ahead for every process to get its message and settle before the start.
        start_at = time.time_ns() + 100_000_000 + 10_000_000 * processes

        share = clients // processes

        def ask(i: int) -> dict:
            return self._request(cell, workers[i], keys[i], self._load_message(cell, share, i * share, start_at, i))

        pool = ThreadPoolExecutor(max_workers=processes)
        try:
            answers, server_ns, wire = self._around(cell, pids, lambda: list(pool.map(ask, range(processes))), whole)
        except BaseException:  # Ctrl-C, or a client failed: the others must not run on for the trial's length
            self._cancel(self.by_name[cell.target], keys)
            for worker in workers:
                worker.kill()
            raise
        finally:
            pool.shutdown(wait=True)
        answer = merge_answers(answers)
        answer["processes"] = processes
        raw = None
        if self.options.raw_latencies and caps["load"].get("latencies"):
            raw = self._raw_latencies(answer, [_read_and_remove(os.path.join(self.workdir, f"latencies-{i}.bin"))
                                               for i in range(processes)])
        self._record(state, phase, seq, started_at, answer, raw, server_ns, wire, "server" if whole else "backends")
        if processes == clients:  # the backends of connections that outlive the trial
            for key, a in zip(keys, answers):
                self.server_pids.setdefault(key, set()).update(a.get("server_pids") or [])

    @staticmethod
    def _raw_latencies(answer: dict, parts: list[bytes | None]) -> bytes | None:
        """A loaded trial's raw latencies, every process's together, when each wrote them all."""
        if not parts or any(p is None for p in parts):
            return None
        raw = b"".join(parts)
        if len(raw) != 8 * answer["n"]:
            raise CellFailed("error", f"the latency files hold {len(raw) // 8} latencies for {answer['n']} operations")
        return raw

    def _reset(self, cell: Cell) -> None:
        for sql in cell.step.reset:
            self._own(cell, "reset", sql, lambda t, q=sql: t.execute(q))

    def _own(self, cell: Cell, what: str, sql: str, do):
        """A statement of the suite's on the runner's own connection (reset, check): bounded by
        --timeout; a failure fails the cell with the statement and the error."""
        target = self.by_name[cell.target]
        try:
            return do(target)
        except (KeyboardInterrupt, Fault):
            raise
        except Exception as e:
            self._alive(target)
            raise CellFailed("timeout" if _timed_out(e) else "error", f"{what} `{sql}`: {first_line(e)}") from None

    def _ask(self, cell: Cell, message: dict) -> dict:
        return self._request(cell, self._worker(cell), cell.worker_key, message)

    def _request(self, cell: Cell, worker: WorkerProcess, key: tuple, message: dict) -> dict:
        try:
            answer = worker.request(message, self.options.timeout,
                                    before_kill=lambda: self._cancel(self.by_name[cell.target], [key]))
        except WorkerFailed as e:
            self.workers.pop(key, None)
            raise CellFailed("timeout" if e.kind == "timeout" else "error", str(e)) from None
        if not answer.get("ok"):
            error = answer.get("error", {})
            status = "unsupported" if error.get("kind") == "unsupported" else "error"
            sqlstate = f" [{error['sqlstate']}]" if error.get("sqlstate") else ""
            raise CellFailed(status, f"{error.get('message', 'no message')}{sqlstate}")
        return answer

    def _verify(self, cell: Cell, state: CellState) -> None:
        try:
            self._worker(cell)  # its hello says what it does
            caps = self.capabilities.get(cell.method, {})
            if why := self.by_name[cell.target].refuses_step(cell.step):
                raise CellFailed("unsupported", why)
            if cell.step.kind not in caps.get("kinds", [cell.step.kind]):
                raise CellFailed("unsupported", f"{cell.method} has no {cell.step.kind} steps (it has "
                                                f"{', '.join(caps['kinds'])})")
            modes, mode = caps.get("modes"), cell.step.mode
            if mode and modes is not None and mode not in modes:
                # never run some other way: a worker may not know a mode it does not list.
                # Its own reason, where its settings give one ("extended": "unsupported: …").
                why = str(self.settings.get(cell.method, {}).get(mode, ""))
                why = why.removeprefix("unsupported: ") if why.startswith("unsupported") else f"it has {', '.join(modes)}"
                raise CellFailed("unsupported", f"{cell.method} has no {mode} mode: {why}")
            self._reset(cell)
            if self.method_by_name[cell.method].reads == "floor":
                self._floor_file(cell)
            answer = self._ask(cell, {**self._message(cell), "verify": True})
        except CellFailed as e:
            self._fail(cell, state, e)
            return
        check = None
        if cell.step.check:
            checksum = Checksum()
            try:
                checksum.add_rows(self._own(cell, "check", cell.step.check, lambda t: t.query(cell.step.check)))
            except CellFailed as e:
                self._fail(cell, state, e)
                return
            check = f"{checksum.hexdigest()}/{checksum.rows}"
        state.status, state.key = "ok", (answer["rows"], answer.get("checksum"), check)
        first = self.done.verified(cell)
        if first is not None and first != state.key:  # a resumed cell must read what it read before
            state.status = "mismatch"
            state.message = (f"the resumed verification differs from the first attempt's: read {state.key[0]} rows "
                             f"with checksum {state.key[1]}{f', table check {check}' if check else ''}; first "
                             f"{first[0]} rows, {first[1]}{f', table check {first[2]}' if first[2] else ''}")
            self.store.update_cell(state.id, status="mismatch", message=state.message)
            self.progress.note(f"MISMATCH {cell.label}: {state.message}")
            return
        self.store.update_cell(
            state.id, status="ok", checksum=answer.get("checksum"), check_checksum=check,
            verify_rows=answer["rows"], verify_values=answer.get("values"),
            cold_first_op_ns=answer.get("first_op_ns"),
        )

    # the wire's floor (paths/floor.py): the step's result as CSV, moved raw along each path
    def _floor_directory(self, target: str) -> str:
        return os.path.join(self.workdir, f"floor-{[t.name for t in self.targets].index(target)}")

    def _floor_sender(self, cell: Cell) -> dict:
        """Where the floor worker of ``cell`` reads from: its path's sender, started on first use."""
        try:
            return self.routes[(cell.target, cell.path)].floor(self._floor_directory(cell.target),
                                                               PathRun(self.workdir, self.progress))
        except NoFloor as e:
            raise CellFailed("unsupported", str(e)) from None

    def _floor_file(self, cell: Cell) -> None:
        """The step's result as CSV, read once per target on the runner's own connection."""
        sql = cell.step.sql_on(self.by_name[cell.target].dbms)
        path = os.path.join(self._floor_directory(cell.target), floor_name(sql))
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.progress.note(f"writing {cell.step.name}'s result on {cell.target} as CSV, the wire's floor")
            rows, size = self._own(cell, "the floor's CSV of", sql, lambda t: write_csv(path, t.query(sql)))
            self.progress.note(f"  {rows:,} rows, {fmt.size(size)} of CSV")

    def _compare(self, cells: list[Cell], states: dict[Cell, CellState]) -> None:
        """Every method on the same target must have read and written the same data. The
        plurality is taken as right; without a clear one, every cell is suspect. The wire's
        floor reads no values: its lines must be as many as the rows the plurality read."""
        floors = [c for c in cells if self.method_by_name[c.method].reads == "floor"]
        self._compare_floors(floors, [c for c in cells if c not in floors], states)
        cells = [c for c in cells if c not in floors]
        for target in self.targets:
            verified = [c for c in cells if c.target == target.name and states[c].status == "ok"]
            counts = Counter(states[c].key for c in verified).most_common()
            if len(counts) < 2:
                continue
            clear = counts[0][1] > counts[1][1]
            reference = next((c for c in verified if states[c].key == counts[0][0]), None) if clear else None
            dumps: dict[Cell, list | None] = {}
            for cell in verified:
                state = states[cell]
                if clear and state.key == counts[0][0]:
                    continue
                rows, checksum, check = state.key
                state.status = "mismatch"
                state.message = (
                    f"read {rows} rows with checksum {checksum}"
                    + (f", table check {check}" if check else "")
                    + (f"; most methods: {counts[0][0][0]} rows, {counts[0][0][1]}" if clear else "; no majority")
                )
                agreeing = len({c.method for c in verified if states[c].key == counts[0][0]})
                if reference is not None and (why := self._explain(cell, reference, agreeing, dumps)):
                    state.message += f"; {why}"
                self.store.update_cell(state.id, status="mismatch", message=state.message)
                self.progress.note(f"MISMATCH {cell.label}: {state.message}")

    def _compare_floors(self, floors: list[Cell], cells: list[Cell], states: dict[Cell, CellState]) -> None:
        for floor in floors:
            if states[floor].status != "ok":
                continue
            rows = Counter(states[c].key[0] for c in cells if c.target == floor.target and states[c].status == "ok")
            if rows and (read := rows.most_common(1)[0][0]) != states[floor].key[0]:
                state = states[floor]
                state.status = "mismatch"
                state.message = f"moved {state.key[0]:,} lines of CSV; most methods read {read:,} rows"
                self.store.update_cell(state.id, status="mismatch", message=state.message)
                self.progress.note(f"MISMATCH {floor.label}: {state.message}")

    def _explain(self, cell: Cell, reference: Cell, agreeing: int, dumps: dict) -> str | None:
        """Where ``cell`` read otherwise than the plurality (``reference`` one of it), from both
        sides' rows read again, untimed, and dumped (diagnosis.py); ``dumps`` keeps what was read
        so the reference is read once per target. None when the step reads no rows, or either
        worker cannot dump."""
        if not cell.step.reads_rows:
            return None
        for one in (reference, cell):
            if one not in dumps:
                try:
                    self._reset(one)
                    dumps[one] = self._ask(one, {**self._message(one), "verify": True, "dump": DUMP_ROWS}).get("dump")
                except CellFailed:
                    dumps[one] = None
            if not isinstance(dumps[one], list):
                return None
        return explain(dumps[cell], dumps[reference], cell.method, agreeing, cell.step.sql)

    def _trial(self, cell: Cell, state: CellState, phase: str, seq: int) -> None:
        if cell.step.loaded:
            return self._loaded_trial(cell, state, phase, seq)
        self._reset(cell)
        latency_file = os.path.join(self.workdir, "latencies.bin")
        started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        # A worker may use several connections (one per mode): every backend it has reported.
        # A connect step's backends are new per operation and gone before they could be read.
        known = self._server_cpu_known(cell) and cell.step.kind != "connect"
        pids = sorted(self.server_pids.get(cell.worker_key, set())) if known else []
        worker = self._worker(cell).proc.pid
        rss = memory.start(worker)  # the worker's peak during the trial: reset now, read after
        answer, server_ns, wire = self._around(
            cell, pids, lambda: self._ask(cell, {**self._message(cell), "latency_file": latency_file}))
        if rss is not None and (high := memory.peak(worker)) is not None:
            answer = {**answer, "start_rss_bytes": rss, "peak_rss_bytes": high}
        latencies = _read_and_remove(latency_file) or b""
        if len(latencies) != 8 * answer["n"]:
            raise CellFailed("error", f"latency file has {len(latencies)} bytes for {answer['n']} operations")
        self._record(state, phase, seq, started_at, answer, latencies, server_ns, wire)
        self.server_pids.setdefault(cell.worker_key, set()).update(answer.get("server_pids") or [])

    def _around(self, cell: Cell, pids: list[int], ask, whole: int | None = None) -> tuple[dict, int | None, dict | None]:
        """Run ``ask`` and measure around it what the worker cannot: the serving backends' CPU
        (managed servers run on this machine), or with ``whole`` the whole server's (the pid
        of its first process), and what crossed the latency proxy (only this cell's workers
        talk through it meanwhile)."""
        path = self.routes[(cell.target, cell.path)]
        floor = self.method_by_name[cell.method].reads == "floor"
        wire_before = path.counters(floor)
        threads = self.by_name[cell.target].serves_by_thread
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

    def _record(self, state: CellState, phase: str, seq: int, started_at: str, answer: dict,
                latencies: bytes | None, server_ns: int | None, wire: dict | None, scope: str = "backends") -> None:
        if wire is not None and answer["n"] and state.kind != "page" and not (wire["c2s_bytes"] or wire["s2c_bytes"]):
            # a driver that moves a TCP connection onto the server's unix socket by itself (a
            # page that runs no statement is the only operation that sends the server nothing)
            raise CellFailed("error", "nothing crossed the latency proxy during the trial: the method reached the "
                                      "target another way (its own unix socket?), so its figure is not this path's")
        self.store.add_trial(state.id, phase, seq, started_at, answer, latencies, server_ns, wire, scope)
        if phase == "warmup" and answer["n"]:
            state.warmups.append(answer["elapsed_ns"] / answer["n"])
        elif answer["n"] and answer["elapsed_ns"] > 0:
            unit, units = UNITS[state.kind]
            rate = units(answer) / (answer["elapsed_ns"] / 1e9)
            state.rates.append(rate)              # what the precision target weighs
            state.last = f"{fmt.rate(rate)} {unit}/s"  # an interim figure, for the progress line only

    def _fail(self, cell: Cell, state: CellState, error: CellFailed, quiet: bool = False) -> None:
        state.status, state.message = error.status, error.message
        self.store.update_cell(state.id, status=error.status, message=error.message)
        if error.status in ("error", "timeout"):
            self._alive(self.by_name[cell.target])
        if error.status != "unsupported" and not quiet:
            self.progress.note(f"{error.status.upper()} {cell.label}: {error.message}")

    def _cancel(self, target: Target, keys: list[tuple]) -> None:
        """Workers that will be killed: first cancel what their sessions execute on the server."""
        try:
            target.cancel(set().union(*(self.server_pids.get(k, set()) for k in keys)))
        except Exception as e:  # the kill goes ahead; say what may still run
            self.progress.note(f"could not cancel a statement on {target.name}: {first_line(e)}")

    def _cancel_everything(self) -> None:
        """On the way out of a stopped run: cancel the statements of every worker still there."""
        for target in self.targets:
            keys = [k for k in self.workers if k[1] == target.name]
            if keys:
                self._cancel(target, keys)
            for key in keys:
                self.workers[key].kill()

    def _worker_pids(self) -> str | None:
        alive = [str(w.proc.pid) for w in self.workers.values() if w.alive]
        return f"worker processes {', '.join(alive)}" if alive else None

    # workers
    @staticmethod
    def _worker_key(cell: Cell, process: int = 0) -> tuple:
        """Process 0 is the cell's usual worker; more are started for clients under load."""
        return cell.worker_key if process == 0 else (*cell.worker_key, f"client{process}")

    def _worker(self, cell: Cell, process: int = 0) -> WorkerProcess:
        key = self._worker_key(cell, process)
        if key in self.broken:
            raise self.broken[key]
        worker = self.workers.get(key)
        if worker is not None and worker.alive:
            return worker
        method, target = self.method_by_name[cell.method], self.by_name[cell.target]
        log = os.path.join(self.workdir, f"worker-{'-'.join(key).replace('/', '_')}.log")
        command = self.routes[(cell.target, cell.path)].command(method.command())
        worker = WorkerProcess(command, log, self.worker_env)
        try:
            hello = worker.request({"op": "hello"}, self.options.timeout)
            if not hello.get("ok"):
                raise CellFailed("error", f"hello: {hello.get('error', {}).get('message')}")
            if method.name not in self.hello_stored:
                self.store.add_method(self.run_id, hello)
                self.hello_stored.add(method.name)
                self.capabilities[method.name] = hello.get("capabilities", {})
                self.settings[method.name] = hello.get("settings", {})
            endpoint = self.routes[(target.name, cell.path)].endpoint(target)
            if method.reads == "floor":  # not a method: the raw bytes' sender along this path
                endpoint = {**endpoint, "floor": self._floor_sender(cell)}
            opened = worker.request(
                {"op": "open", "endpoint": endpoint, "options": {}, "clients": 1},
                self.options.timeout,
            )
            if not opened.get("ok"):
                raise CellFailed("error", f"open: {opened.get('error', {}).get('message')}")
            self.server_pids[key] = {opened["server_pid"]} if opened.get("server_pid") else set()
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

    def _close_workers(self) -> None:
        if self.remote is not None:
            self.remote.stop_all()
        for worker in self.workers.values():
            worker.close(timeout=5)
        self.workers.clear()
        self.broken.clear()


def _read_and_remove(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    os.remove(path)
    return data


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
