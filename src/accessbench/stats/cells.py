"""From a stored run to per-cell figures: the main figure per trial (units per second),
its summary, latency percentiles, client CPU per operation, and rankings per step."""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from .. import formatting as fmt
from ..store.model import Cell, StoredRun, Trial
from ..targets import EMBEDDED

FLOORS = ("wire-floor",)  # not methods: catalog entries with reads = "floor"
from . import hosts, requests
from .bootstrap import relative_half_width
from .summary import PERCENTILES, Summary, latency_percentiles, summarize

# Per step kind: what one unit is, and which of a trial's counts (n or rows) is its units.
UNITS = {
    "connect": ("connections", "n"),
    "scan": ("rows", "rows"),
    "exec": ("ops", "n"),
    "batch": ("rows", "rows"),
    "page": ("requests", "n"),
    "load": ("loads", "n"),  # one whole load: parents with their children and grandchildren
}


@dataclass
class CellResult:
    cell: Cell
    unit: str
    rate: Summary | None = None          # units per second, one value per trial
    rates: np.ndarray | None = None      # the trials' units per second, in trial order
    unit_ns: Summary | None = None       # time per unit (ns), one value per trial: S3's figure
    shortest_trial_ns: float | None = None
    trial_ns: np.ndarray | None = None   # each timed trial's elapsed time, in trial order (S3's executions)
    percentiles: dict[float, float] | None = None  # per-op latency, ns
    cpu_per_op_ns: float | None = None   # worker user+sys CPU per op, median over trials
    server_cpu_per_op_ns: float | None = None  # serving backend's CPU per op, median over trials
    first_op_ns: float | None = None
    per_op_ns: float | None = None            # elapsed / n, median over trials
    rows_per_op: float | None = None          # rows each operation read (or changed), median over trials
    row_rate: Summary | None = None           # those rows per second, one value per trial
    round_trips_per_op: float | None = None   # through the latency proxy, median over trials
    bytes_per_op: float | None = None         # both directions
    bytes_per_row: float | None = None        # to the client, per row read: what a row costs on the wire
    peak_rss_bytes: float | None = None       # the worker's peak resident set in a trial, median over trials
    rss_growth_bytes: float | None = None     # that peak over its resident set at the trial's start, likewise
    per_client_rates: np.ndarray | None = None  # under load: each client's units/s, every trial
    late_share: float | None = None           # open loop: operations started over 1 ms late
    skipped: int | None = None                # open loop: operations not started
    precision: float | None = None            # the run's precision target (relative CI half-width)
    cpu_note: str | None = None               # why cpu_per_op_ns is None, where it was read
    server_cpu_note: str | None = None        # why server_cpu_per_op_ns is None
    floor: bool = False                       # the wire's floor (wire-floor), not a method: never ranked
    hosts: list | None = None                 # --cluster: each trial's hosts' parts (stats/hosts.py)
    request_parts: "requests.RequestParts | None" = None  # a page's sampled requests: where their time went

    @property
    def wait_per_op_ns(self) -> float | None:
        """What neither side's CPU accounts for: the network and scheduling."""
        if self.per_op_ns is None or self.cpu_per_op_ns is None:
            return None
        return max(0.0, self.per_op_ns - self.cpu_per_op_ns - (self.server_cpu_per_op_ns or 0.0))

    @property
    def measured(self) -> bool:
        return self.rate is not None

    @property
    def half_width(self) -> float | None:
        """How precisely the median is known: its 95% CI's half-width relative to it."""
        if not self.rate or self.rate.ci_low is None:  # one trial: not known at all
            return None
        return relative_half_width(self.rate.median, self.rate.ci_low, self.rate.ci_high)

    @property
    def ranked(self) -> bool:
        """Only verified cells of methods take part in rankings; a mismatch is shown, not
        ranked, and the wire's floor is what the methods are set against (report/transfer.py)."""
        return self.measured and self.cell.status == "ok" and not self.floor

    @property
    def verified(self) -> bool:
        """A figure a comparison may read: a ranked cell's, or the wire's floor's measured and
        verified (never ranked, but what "× the wire" divides by: claims and study tables)."""
        return self.measured and self.cell.status == "ok"

    @property
    def seconds_per_1000(self) -> float | None:
        return 1000.0 / self.rate.median if self.rate and self.rate.median else None

    @property
    def where(self) -> str:
        return f"{self.cell.target}/{self.cell.path}"

    @property
    def one_unit(self) -> str:
        """The unit in the singular: connection, row, op."""
        return self.unit.removesuffix("s")

    @property
    def label(self) -> str:
        return f"{self.cell.method} @ {self.where}"

    @property
    def step_key(self) -> tuple:
        """What makes cells comparable: the same variant and step."""
        return (self.cell.variant, self.cell.step_index, self.cell.step)


# A worker's CPU clock, where its hello does not say (capabilities.cpu_resolution_ns):
# getrusage's microseconds.
CPU_RESOLUTION_NS = 1_000
# A CPU figure is shown only where its clock ticks at least this many times finer than the
# CPU time each trial measured: a 10 ms tick under a trial's 3 ms of CPU reads 0 or 10 ms.
RESOLVED = 10


def _cpu_per_op(trials: list[tuple[int, int]], resolution_ns: int) -> tuple[float | None, str | None]:
    """(median CPU per operation, None), or (None, why not) when some trial's CPU time is
    within RESOLVED ticks of its clock; (None, None) when nothing was read."""
    if not trials:
        return None, None
    if any(total < RESOLVED * resolution_ns for total, _ in trials):
        return None, (f"not shown: a trial's CPU time is under {RESOLVED}× its clock's resolution "
                      f"({fmt.duration(resolution_ns)})")
    return float(np.median([total / n for total, n in trials])), None


def analyse(stored: StoredRun) -> list[CellResult]:
    """Every cell of the run with its figures; a cell without timed trials has none."""
    resolution = {m.method: int(m.capabilities.get("cpu_resolution_ns") or CPU_RESOLUTION_NS)
                  for m in stored.methods}
    served = {t.target: t.dbms not in EMBEDDED for t in stored.targets}  # a server process serves it
    results = []
    for cell in stored.cells:
        result = CellResult(cell, UNITS[cell.kind][0], precision=stored.run.settings.get("precision") or None,
                            floor=cell.method in FLOORS)
        trials = stored.trials.get(cell.id, [])
        if trials:
            _times(result, trials)
            histogram = stored.histogram(cell.id)
            result.percentiles = (latency_percentiles(stored.latencies(cell.id)) if histogram is None
                                  else {p: histogram.percentile(p) for p in (*PERCENTILES, 100.0)})
            _cpu(result, trials, resolution.get(cell.method, CPU_RESOLUTION_NS), bool(served.get(cell.target)))
            _wire(result, trials)
            _memory(result, trials)
            _load(result, trials)
        results.append(result)
    return results


def timed(cell: Cell, trials: list[Trial]) -> CellResult:
    """A cell's timed figures alone, from its trials (what `history` follows over runs)."""
    result = CellResult(cell, UNITS[cell.kind][0], floor=cell.method in FLOORS)
    if trials:
        _times(result, trials)
    return result


def _times(result: CellResult, trials: list[Trial]) -> None:
    """The main figure (units per second) and time per unit, one value per trial; per-op time,
    rows per operation and the first operation's time, each the median over trials."""
    units = operator.attrgetter(UNITS[result.cell.kind][1])
    timed = [t for t in trials if t.elapsed_ns > 0 and units(t)]
    if timed:
        result.rates = np.array([units(t) / (t.elapsed_ns / 1e9) for t in timed])
        result.rate = summarize(result.rates)
        result.unit_ns = summarize([t.elapsed_ns / units(t) for t in timed])
        result.trial_ns = np.array([t.elapsed_ns for t in timed], dtype=float)
        result.shortest_trial_ns = float(result.trial_ns.min())
    result.per_op_ns = float(np.median([t.elapsed_ns / t.n for t in trials if t.n]))
    if result.cell.kind in ("scan", "exec", "load"):  # rows/s whatever the unit: a result-size sweep's figure
        read = [t for t in trials if t.n and t.rows and t.elapsed_ns > 0]
        if read:
            result.rows_per_op = float(np.median([t.rows / t.n for t in read]))
            result.row_rate = summarize([t.rows / (t.elapsed_ns / 1e9) for t in read])
    firsts = [t.first_op_ns for t in trials if t.first_op_ns is not None]  # a load generator times none
    result.first_op_ns = float(np.median(firsts)) if firsts else None


def _cpu(result: CellResult, trials: list[Trial], resolution_ns: int, served: bool) -> None:
    """The worker's and the server's CPU per operation, or why either is not shown."""
    result.cpu_per_op_ns, result.cpu_note = _cpu_per_op(
        [(t.user_ns + t.sys_ns, t.n) for t in trials if t.user_ns is not None and t.n], resolution_ns)
    result.server_cpu_per_op_ns, result.server_cpu_note = _cpu_per_op(
        [(t.server_ns, t.n) for t in trials if t.server_ns is not None and t.n], 1)
    if result.cell.kind == "connect" and served:
        result.server_cpu_note = "not measured: each operation's backend is new and gone before it can be read"
    elif result.server_cpu_per_op_ns is not None and any(t.server_scope == "server" for t in trials):
        # the runner read the whole managed server: these connections' backends are not named
        result.server_cpu_note = "the whole server's CPU during each trial (its backends come and go)"


def _wire(result: CellResult, trials: list[Trial]) -> None:
    """What crossed the latency proxy per operation and per row read (proxied paths only)."""
    wire = [t for t in trials if t.round_trips is not None and t.n]
    if wire:
        result.round_trips_per_op = float(np.median([t.round_trips / t.n for t in wire]))
        result.bytes_per_op = float(np.median([(t.bytes_to_server + t.bytes_to_client) / t.n for t in wire]))
        read = [t for t in wire if t.rows and result.cell.kind in ("scan", "exec")]
        if read:
            result.bytes_per_row = float(np.median([t.bytes_to_client / t.rows for t in read]))


def _memory(result: CellResult, trials: list[Trial]) -> None:
    """The worker's peak resident set in a trial, and what the trial added to it."""
    sized = [t for t in trials if t.peak_rss_bytes is not None]
    if sized:
        result.peak_rss_bytes = float(np.median([t.peak_rss_bytes for t in sized]))
        result.rss_growth_bytes = float(np.median([t.peak_rss_bytes - t.start_rss_bytes for t in sized]))


def _load(result: CellResult, trials: list[Trial]) -> None:
    """Steps under load: each client's rate, the cluster hosts' parts, where a page's sampled
    requests spent their time, and an open loop's late and skipped operations."""
    result.hosts = hosts.parts(trials) or None
    result.request_parts = requests.parts(trials, result.cell.clients)
    clients = [c for t in trials if t.per_client for c in t.per_client]
    if clients:
        result.per_client_rates = np.array([c["n"] / (c["elapsed_ns"] / 1e9) for c in clients if c["elapsed_ns"] > 0])
    if result.cell.rate:
        total = sum(t.n for t in trials)
        result.late_share = sum(t.late or 0 for t in trials) / total if total else None
        result.skipped = sum(t.skipped or 0 for t in trials)


def by_step(results: list[CellResult]) -> list[tuple[str, str, list[CellResult]]]:
    """(variant, step, results) in suite order; within a step, ranked cells first by
    median figure (fastest first), then the rest."""
    groups: dict[tuple, list[CellResult]] = {}
    for r in results:
        groups.setdefault((r.cell.variant, r.cell.step_index, r.cell.step), []).append(r)
    out = []
    for (variant, _, step), rs in sorted(groups.items(), key=lambda kv: kv[0][:2]):
        ranked = sorted((r for r in rs if r.ranked), key=lambda r: -r.rate.median)
        rest = [r for r in rs if not r.ranked]
        out.append((variant, step, ranked + rest))
    return out
