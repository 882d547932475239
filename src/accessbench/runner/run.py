"""One run, as a recipe: start targets → per variant: load data → per step: verify every
cell, compare checksums, then warmup and interleaved trials → stop everything.

The recipe decides what is measured when; an ``Executor`` (executor.py) runs each trial and
``Verification`` (verify.py) checks what each cell read. The runner never prints; it tells a
``Progress`` what it is doing, and the CLI decides how that looks.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Callable

from .. import __version__
from .. import formatting as fmt
from .. import paths as path_kinds
from ..data.generate import table_rows
from ..env import IDLE_MAY_HALT, environment
from ..errors import Fault, InputError, first_line
from ..methods import Method
from ..paths import PathRun
from ..paths.tls import Authority
from ..protocol.capabilities import PROCESSES
from ..stats.cells import UNITS
from ..store import Store
from ..protocol.generators import rows as generated_rows
from ..suite.adhoc import origin
from ..suite.message import step_message
from ..suite.model import Suite
from ..suite.readonly import plannable
from ..targets import Target, TargetUnavailable
from ..worker_process import worker_environment
from .awake import KeepAwake
from .cleanup import Cleanup, claim, left_by_killed_runs
from .context import RunContext
from .executor import Executor, Trial, WorkerExecutor
from .memory import worker_room
from .plan import Cell, Room, batches, paths_of, trial_order, variant_plan
from .profiling import Profiler, node_options
from .precision import Precision
from .remote import RemoteClients
from .resume import Done
from .state import CellFailed, CellState
from .steadiness import Steadiness
from .verify import Verification

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
    steps: list[str] | None = None  # --step: the suite's steps measured (None: all)
    profile: float = 0.0          # seconds of each cell's profile, in trials of its own (0: none; runner/profiling.py)
    rows: int | None = None       # --rows: the size of each table whose size is the reader's (None: the suite's)




SPARE_CONNECTIONS = 3  # a server's connections left for the runner's own (checks, cancels, round trips)


class Progress:
    """What the runner reports while it works; the default says nothing. ``begin`` gives the
    total of worker executions once and it never changes: a JIT runtime's extra warmups (how
    many is known only as they settle) are shown in flight but advance nothing."""
    def begin(self, total: int, fixed: tuple[int, float] = (0, 0.0),
              cells: dict[Cell, tuple[int, float | None, tuple]] | None = None) -> None:
        """``fixed``: how many of the executions last as long as the suite says (a loaded step's
        warmups and trials, its duration each), and their seconds together. ``cells``: each
        cell's other warmups and trials (they last as long as they take), how many, the seconds
        one took in an earlier sitting of a resumed run (None: not known), and its kin (the
        cells of the same step on the same target and path, whose reads take alike)."""

    def advance(self, description: str, amount: int = 1, lasts_s: float = 0.0, cell: Cell | None = None,
                verifies: Cell | None = None) -> None:
        """``amount`` executions begin (usually one); ``lasts_s``: the seconds the suite fixes
        for them (0: as long as they take); ``cell``: whose warmup or trial it is;
        ``verifies``: whose verification it is, where it reads the step (None: a load, or a
        resumed cell's kept verification)."""

    def skip(self, amount: int, lasts_s: float = 0.0, cell: Cell | None = None) -> None:
        """``amount`` of ``cell``'s executions will not run (it failed, or cannot be measured)."""

    def note(self, message: str) -> None: ...
    def end(self) -> None: ...


def lasts(cell: Cell) -> float:
    """The seconds the suite fixes for each of a cell's warmups and trials (a loaded step's
    duration), or 0 where a trial lasts as long as its iterations take."""
    return float(cell.step.duration or 0.0) if cell.step.loaded else 0.0


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


class Runner:
    def __init__(self, suite: Suite, targets: list[Target], paths: list[str] | None, methods: list[Method],
                 store: Store, options: RunOptions, progress: Progress | None = None, done: Done | None = None,
                 executor: Callable[[RunContext], Executor] = WorkerExecutor) -> None:
        self.suite, self.targets, self.paths, self.methods = suite, targets, paths, methods
        self.store, self.options = store, options
        self.done = done or Done()  # what a resumed run already stored; nothing for a new one
        self.precision = Precision(options.precision, options.budget, options.max_trials)
        self.steadiness = Steadiness()  # the host's own speed, timed between steps
        self.run_id = self.done.run_id or new_run_id()
        self.ctx = RunContext(suite, options, store, progress or Progress(), self.run_id, targets, methods)
        self.executor = executor(self.ctx)
        self.verification = Verification(self.ctx, self.executor, self.done)
        self.profiler = Profiler(self.ctx, self.executor, options.profile) if options.profile else None
        self.room = Room()  # what may be open at once: set as the targets start
        self.split: dict[str, int] = {}  # the steps measured in batches, and how many
        self.left_behind: list[str] = []

    def report_to(self, progress: Progress) -> None:
        """Where the run says what it does (set before it runs)."""
        self.ctx.progress = progress

    @property
    def progress(self) -> Progress:
        return self.ctx.progress

    @property
    def workdir(self) -> str:
        """The run's own work directory (made when the run begins)."""
        return self.ctx.workdir

    # the recipe
    def run(self) -> str:
        cleanup = self._begin()
        o = self.options
        status, message = "failed", None
        try:
            self._hold_cpus_awake(cleanup)
            self._start_targets(cleanup)
            if self.suite.existing:
                self._plan_statements()
            if o.cluster is not None:
                self._start_cluster(cleanup)
            self._size_room()
            # data is loaded only where a cell is still to be measured (everywhere, in a new run)
            plan = [(v, self.done.to_measure(ts, groups, o.trials), groups)
                    for v, ts, groups in variant_plan(self.suite, self.targets, self.paths, self.methods)]
            left = [(c, o.warmup + len(self.done.missing(c, o.trials))) for _, _, groups in plan
                    for g in groups for c in g if not self.done.kept(c, o.trials)]
            timed = [(c, n) for c, n in left if lasts(c)]
            self.progress.begin(sum(self.done.executions(groups, o.warmup, o.trials) + len(v.tables) * len(ts)
                                    for v, ts, groups in plan),
                                (sum(n for _, n in timed), sum(n * lasts(c) for c, n in timed)),
                                {c: (n, self.done.took(c), (c.variant, c.step.name, c.target, c.path))
                                 for c, n in left if not lasts(c)})
            self.precision.steps_left = sum(len(groups) for _, _, groups in plan)
            self.steadiness.probe()
            for variant, targets, groups in plan:
                unloaded = self._load(variant, targets)
                for group in groups:
                    self._measure_step(group, unloaded)
                    self.steadiness.probe()
                self.executor.close()
            if self.store.measured(self.run_id):
                status = "complete"
            else:
                message = "nothing was measured: every cell failed or is unsupported (accessbench show " \
                          f"{self.run_id} lists why)"
        except KeyboardInterrupt:
            status, message = "interrupted", "interrupted by the user"
            raise
        except (TargetUnavailable, InputError) as e:  # the user's to fix (a statement the server refuses)
            message = str(e)
            raise InputError(message) from None
        except Exception as e:
            message = str(e) if isinstance(e, Fault) else f"{type(e).__name__}: {e}"
            raise
        finally:
            self._end(cleanup, status, message)
        return self.run_id

    def _begin(self) -> Cleanup:
        """What killed runs left here removed, the run's work directory made and the run stored
        as begun (or, resumed, carried on): what to undo from here on, on every way out."""
        o = self.options
        for line in left_by_killed_runs(o.workdir or tempfile.gettempdir()):
            self.progress.note(line)
        self.ctx.workdir = make_workdir(o.workdir)
        cleanup = Cleanup()
        cleanup.push(lambda: f"the run's work directory {self.workdir}", lambda: shutil.rmtree(self.workdir))
        try:
            self.ctx.worker_env = worker_environment(self.workdir)
            if self.profiler is not None:
                self.ctx.worker_env = node_options(self.ctx.worker_env)
                cleanup.push(lambda: "the JIT maps of profiled Node workers in /tmp", self.profiler.close)
            settings = {
                "trials": o.trials, "warmup": o.warmup, "max_warmup_jit": o.max_warmup, "timeout_s": o.timeout,
                "quick": o.quick, "unconfined_sql": o.unconfined_sql, "label": o.label,
                "targets": [t.name for t in self.targets], "paths": self.paths,
                "methods": [m.name for m in self.methods], "seed": self.suite.seed,
                "precision": o.precision, "budget_s": o.budget, "max_trials": o.max_trials,
                "allow_idle_halt": o.allow_idle_halt,
                **({"steps": o.steps} if o.steps else {}),
                **({"profile_s": o.profile} if o.profile else {}),
                **({"rows": o.rows} if o.rows is not None else {}),
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
        return cleanup

    def _end(self, cleanup: Cleanup, status: str, message: str | None) -> None:
        """Everything the run started undone, newest first, and the run stored as ended, with
        what could not be undone named where it stays."""
        cleanup.push(self.executor.holds, self.executor.close)
        if status != "complete":  # stop what the servers still run for us before the workers go
            cleanup.push(self.executor.holds, self.executor.cancel)
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
        routes_of = self.ctx.routes
        for target in self.targets:
            self.progress.note(f"starting {target.name}")
            target.server_settings = self.suite.server.get(target.dbms, {})
            target.run_id, target.confine = self.run_id, confine and not target.managed
            target.existing = self.suite.existing
            if target.server_settings and not target.managed:  # never reconfigure a server we do not own
                self.progress.note(f"{target.name}: the suite's [server.{target.dbms}] settings apply to managed "
                                   "servers only; this one is measured as it is (its settings are recorded)")
            routes = [path_kinds.parse(name) for name in paths_of(target, self.paths)]
            if any(path.tls for path in routes):  # the server serves TLS with a key made for this run
                target.authority = Authority(os.path.join(self.workdir, f"tls-{target.file_name}"))
            cleanup.push(target.holds, target.stop)
            target.start(self.workdir)
            if target.data_file:  # over existing data, a managed target holds the user's dump or file
                self.progress.note(f"loading {target.data_file} into {target.name}")
                target.load_data(target.data_file)
            target.bound(self.options.timeout)
            description = target.describe()
            routes_of.update(((target.name, path.name), path) for path in routes)
            # whatever its paths start (also if starting them fails half-way) stops before the target
            cleanup.push(lambda routes=routes: "; ".join(filter(None, (p.holds() for p in routes))) or None,
                         lambda routes=routes: [path.stop() for path in routes])
            for kind in path_kinds.KINDS:  # each kind's paths together: some share a start-up cost
                group = [path for path in routes if type(path) is kind]
                if group:
                    description["settings"].update(kind.start_all(group, target, path_run))
            self.store.add_target(self.run_id, target, description)
            self._bound_connections(target, routes)

    def _plan_statements(self) -> None:
        """Over existing data, every statement is planned on each target first (EXPLAIN, on the
        runner's read-only connection, with its first parameters): one the server would refuse —
        a syntax error, a table that is not there — is the user's to fix, told in one line with
        the server's words before a worker starts."""
        steps = dict((s.name, s) for v in self.suite.variants for s in v.steps).values()
        for target in self.targets:
            for step in steps:
                sql = step.sql_on(target.dbms)
                if not sql or not plannable(sql):
                    continue
                params = generated_rows(step_message(step, target.dbms, self.suite.seed, [])["params"], 1)[0]
                if why := target.refuses_statement(sql, params):
                    raise InputError(f"{origin(step, self.suite)}: {target.name} refuses {' '.join(sql.split())!r}: {why}")

    def _bound_connections(self, target: Target, routes: list) -> None:
        """The target's lanes in the run's room: the connections its server still accepts, less
        those its poolers may hold and a few for the runner's own (on a server the run did not
        start, a tenth of what is free is left to its other users); a session pooler's pool."""
        free = target.connection_room()
        if free is not None:
            spare = SPARE_CONNECTIONS if target.managed else max(SPARE_CONNECTIONS, free // 10)
            self.room.lanes[("server", target.name)] = max(
                1, free - sum(path.server_connections for path in routes) - spare)
        for path in routes:
            if path.capacity is not None:
                self.room.lanes[(target.name, path.name)] = path.capacity
                self.room.lane_of[(target.name, path.name)] = (target.name, path.name)
            elif not path.server_connections and free is not None:  # straight to the server
                self.room.lane_of[(target.name, path.name)] = ("server", target.name)

    def _size_room(self) -> None:
        """Workers on this machine at once, by the memory left once the targets run; the room
        stored with the run (how its steps were split into batches follows from it)."""
        self.room.workers = worker_room()
        self.room.connections = {m.name: m.connections for m in self.methods if m.connections != 1}
        self.room.app_servers = {m.name: m.app_server for m in self.methods if m.app_server}
        self.store.note_environment(self.run_id, "room", {
            "workers": self.room.workers,
            "connections": {"/".join(lane): n for lane, n in self.room.lanes.items()}})

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
        self.executor.use_cluster(RemoteClients(cluster, endpoints, self.options.timeout))
        self.store.note_environment(self.run_id, "cluster", {"spec": spec.text, **cluster.describe()})

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
                self.ctx.alive(target)
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
        # The step's cells in batches that the servers, poolers and this machine can hold open at
        # once (usually one); each batch is verified, then, once all agree, measured whole.
        self.room.threaded = {m for m, caps in self.ctx.capabilities.items() if caps.get("concurrency") != PROCESSES}
        parts = batches(cells, self.room)
        if len(parts) > 1:
            self.split[f"{cells[0].step.name}{f' [{cells[0].variant}]' if cells[0].variant else ''}"] = len(parts)
            self.store.note_environment(self.run_id, "batches", self.split)
            self.progress.note(f"{cells[0].step.name}: {len(cells)} cells in {len(parts)} batches of at most "
                               f"{max(map(len, parts))}, what {self._room_words()} hold open at once; trials are "
                               "interleaved within each batch")
        again = self.done.again(cells)
        for part in parts:
            self.executor.keep(part)
            for cell in part:
                self.progress.advance(f"{cell.label} · verify", verifies=cell if cell in again else None)
                if cell.target in unloaded:
                    self.ctx.fail(cell, states[cell], CellFailed("error", unloaded[cell.target]), quiet=True)
                    continue
                self.verification.verify(cell, states[cell], again=cell in again)
        self.verification.compare([*kept, *cells], {**kept, **states})  # the kept cells' first verification votes too
        for cell, state in states.items():
            if not state.measurable:
                self.progress.skip(state.planned, state.planned * lasts(cell), cell)  # nothing to measure
        # the batch verified last first: its workers are still open
        for left, part in zip(range(len(parts), 0, -1), reversed(parts)):
            self.executor.keep(part)
            self._measure_batch(part, states, left)
        for state in states.values():
            if state.warmups:
                self.store.update_cell(state.id, warmups=len(state.warmups))

    def _measure_batch(self, cells: list[Cell], states: dict[Cell, CellState], left: int) -> None:
        """Warmups, the trials, and the rounds for precision, interleaved across the cells;
        ``left`` counts this batch among the step's batches still to measure (they share the
        step's time for precision)."""
        o = self.options
        self._rounds(trial_order(cells, o.warmup, 0), states)
        # JIT runtimes: more warmup rounds, still interleaved, until each cell is stable.
        for seq in range(o.warmup, max(o.max_warmup, o.warmup)):
            unsettled = [c for c in cells if states[c].measurable and self.ctx.jit(c)
                         and not states[c].settled(o.stable_within)]
            if not unsettled:
                break
            self._rounds(((c, "warmup", seq) for c in unsettled), states, counted=False)
        self._rounds(self.done.unmeasured(trial_order(cells, 0, o.trials)), states)
        # Then more rounds for the cells whose figure is not yet within the precision asked for.
        for wide in self.precision.rounds({c: states[c].rates for c in cells}, lambda c: states[c].measurable,
                                          parts_left=left):
            self._rounds([(c, "trial", o.trials + states[c].extra) for c in wide], states, counted=False)
        if self.profiler is not None:  # after the timed trials, in trials of its own
            for cell in cells:
                if states[cell].measurable:
                    self.progress.advance(f"{cell.label} · profile ({fmt.seconds(o.profile)})", 0)
                    self.profiler.take(cell, states[cell])

    def _room_words(self) -> str:
        """What bounds the run's batches, for the line that says a step is split."""
        words = [f"{self.room.workers} workers (this machine's memory)"] if self.room.workers else []
        words += [f"{n} connections {'to ' + lane[1] if lane[0] == 'server' else 'through ' + '/'.join(lane)}"
                  for lane, n in self.room.lanes.items()]
        return ", ".join(words)

    def _rounds(self, order, states: dict[Cell, "CellState"], counted: bool = True) -> None:
        """Each (cell, phase, seq) in turn; ``counted`` False for executions outside the
        progress total (a JIT runtime's extra warmups)."""
        for cell, phase, seq in order:
            state = states[cell]
            if not state.measurable:
                continue
            last = f" · last {state.last}" if state.last else ""
            self.progress.advance(f"{cell.label} · {self._what(phase, seq, counted)}{last}", 1 if counted else 0,
                                  lasts(cell), cell)
            state.done += counted
            state.extra += phase == "trial" and seq >= self.options.trials
            try:
                self._record(state, phase, seq, self.executor.trial(cell))
            except CellFailed as e:
                self.ctx.fail(cell, state, e)
                skipped = state.planned - state.done  # what it will not run
                self.progress.skip(skipped, skipped * lasts(cell), cell)

    def _what(self, phase: str, seq: int, counted: bool) -> str:
        """The execution in flight, for the progress line."""
        if phase == "warmup":
            return f"warmup {seq + 1}{'' if counted else ' (JIT)'}"
        if seq >= self.options.trials:
            return f"trial {seq + 1} for ±{fmt.share(self.options.precision)}"
        return f"trial {seq + 1}/{self.options.trials}"

    def _record(self, state: CellState, phase: str, seq: int, trial: Trial) -> None:
        """A trial committed as it finishes; what the recipe decides next (JIT warmups settled,
        precision reached) is read from it."""
        answer, wire = trial.answer, trial.wire
        if wire is not None and answer["n"] and state.kind != "page" and not (wire["c2s_bytes"] or wire["s2c_bytes"]):
            # a driver that moves a TCP connection onto the server's unix socket by itself (a
            # page that runs no statement is the only operation that sends the server nothing)
            raise CellFailed("error", "nothing crossed the latency proxy during the trial: the method reached the "
                                      "target another way (its own unix socket?), so its figure is not this path's")
        self.store.add_trial(state.id, phase, seq, trial.started_at, answer, trial.latencies, trial.server_ns, wire,
                             trial.scope)
        if phase == "warmup" and answer["n"]:
            state.warmups.append(answer["elapsed_ns"] / answer["n"])
        elif answer["n"] and answer["elapsed_ns"] > 0:
            unit, count = UNITS[state.kind]
            rate = answer[count] / (answer["elapsed_ns"] / 1e9)
            state.rates.append(rate)              # what the precision target weighs
            state.last = f"{fmt.rate(rate)} {unit}/s"  # an interim figure, for the progress line only
