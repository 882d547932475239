"""What a report of a run shows, built once from the store: the header, the verdict per step and
target, each step's rows (figures, spread, × behind the best, percentiles, CPU, the time
breakdown, flags), the seconds-per-1,000 matrix, the study's rows, the cells not measured and
the warnings. Every renderer (terminal, HTML) arranges this model and computes no figure of
its own, so two renderings of one run cannot disagree. A figure carries its value (what charts
and sorting use) and its text (what is shown, at the precision measured)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np

from ..paths import SETTINGS as PATH_SETTINGS
from ..stats import hosts, model as rt_model
from ..stats.cells import CellResult, analyse, by_step
from ..stats.compare import ALPHA, NOISE, compare
from ..stats.layers import LayerCost, layer_costs, through
from .associations import association_tables
from ..stats.sizes import SizeSweep, size_sweeps
from ..stats.stability import Flag, flags
from ..stats.views import VIEWS, View
from ..store import StoredRun
from .. import formatting as fmt
from .figures import Figure, step_title
from .pairs import PairTable, study_pairs
from .requests import request_tables
from .study import StudyTable, study_table
from .transfer import transfer_tables
from .twins import TwinTable, twin_tables

PERCENTILES = ((50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"), (100.0, "max"))


def _figure(value: float | None, form=fmt.duration, note: str | None = None) -> Figure:
    return Figure(None if value is None else float(value), form(value), note or "")


def _round_trips(value: float | None) -> Figure:
    return Figure(value, f"{value:.3g}" if value is not None else "—")


@dataclass(frozen=True)
class Share:
    """One part of an operation's time: client · server · wait · rest (wait and server, not
    split, when the server's CPU is unknown)."""

    kind: str
    share: float                    # of the operation's time, 0..1
    text: str


def time_shares(r: CellResult) -> tuple[Share, ...]:
    """Each operation's time as shares: the client's CPU, the server's CPU, and the wait
    neither accounts for (network, scheduling). CPU clocks tick coarser than short
    operations, so CPU can exceed elapsed: each share is clamped to what is left."""
    if not r.per_op_ns or r.cpu_per_op_ns is None:
        return ()
    client = min(1.0, r.cpu_per_op_ns / r.per_op_ns)
    parts = [Share("client", client, fmt.duration(r.cpu_per_op_ns))]
    if r.server_cpu_per_op_ns is None:
        parts.append(Share("rest", 1.0 - client, fmt.duration(r.wait_per_op_ns)))
        return tuple(parts)
    server = min(1.0 - client, r.server_cpu_per_op_ns / r.per_op_ns)
    parts.append(Share("server", server, fmt.duration(r.server_cpu_per_op_ns)))
    parts.append(Share("wait", max(0.0, 1.0 - client - server), fmt.duration(r.wait_per_op_ns)))
    return tuple(parts)


@dataclass
class CellRow:
    """One measured cell of a step, as every report shows it."""

    result: CellResult
    rank: int | None                 # among the step's verified cells; None when not ranked
    figure: Figure                   # the view's figure
    spread: tuple[Figure, Figure] | None
    behind: Figure | None            # how many times behind the best verified cell
    alike: bool                      # no significant difference from the best
    percentiles: dict[float, Figure]
    client_cpu: Figure
    server_cpu: Figure
    round_trips: Figure
    bytes_per_row: Figure            # to the client, per row read, where the latency proxy counted
    memory: Figure                   # the worker's peak resident set in a trial
    growth: Figure                   # that peak over the trial's start: what reading the result added
    cv: Figure
    half_width: Figure               # the median's CI half-width, relative: how precisely it is known
    shares: tuple[Share, ...]
    flags: list[Flag]
    per_client: str = ""             # under load: the clients' median rate [slowest–fastest]
    late: str = ""                   # open loop: the share of operations started late
    through: str = ""                # a layer's cell run through its raw-SQL API says so (stats/layers.py)

    @property
    def method_text(self) -> str:
        """The method as every report names the row: with "through X's raw-SQL API" where so."""
        return f"{self.cell.method} ({self.through})" if self.through else self.cell.method

    @property
    def cell(self) -> dict:
        return self.result.cell

    @property
    def status(self) -> str:
        return self.cell.status

    @property
    def spread_text(self) -> str:
        return f"{self.spread[0].text}–{self.spread[1].text}" if self.spread else ""

    @property
    def trials(self) -> int:
        return self.result.rate.n


@dataclass
class StepReport:
    variant: str
    step: str
    title: str                       # "step [variant]"
    heading: str                     # "kind, mode: description"
    kind: str
    unit: str                        # the view's unit for this step ("rows/s", "time per op")
    rows: list[CellRow]              # measured cells, ranked ones first in the view's order
    not_measured: list[CellResult]
    loaded: bool                     # some cell ran under load (per-client figures exist)
    layer_costs: list["LayerCost"] = field(default_factory=list)


LAYER_COST = "layer cost (time per operation over its own driver, 95% CI)"


@dataclass
class Verdict:
    """Per step and target: the best verified cell and how it stands against the next method."""

    step: StepReport
    target: str
    best: CellRow | None
    against: str
    reason: str = ""
    significant: bool = False

    @property
    def with_unit(self) -> str:
        """'41,230 ops/s [40,100–42,000]', '12.3 µs per op [12.1 µs–12.9 µs]'."""
        row, unit = self.best, self.step.unit
        text = row.figure.text + (f" {unit}" if not unit.startswith("time per") else f" per {unit.split()[-1]}")
        return f"{text} [{row.spread_text}]" if row.spread else text


@dataclass
class MatrixCell:
    text: str
    ranked: bool
    measured: bool


@dataclass
class Matrix:
    """Methods × steps in seconds per 1,000 units: study S2's form."""

    steps: list[str]                                       # step titles
    rows: list[tuple[str, str, list[MatrixCell | None]]]   # (method, target/path, a cell per step)
    legend: list[str]


@dataclass
class NotMeasured:
    where: str
    status: str
    message: str
    steps: list[str]


@dataclass
class WarningGroup:
    kind: str
    title: str
    cells: list[tuple[CellResult, Flag]]
    summary: str = ""                 # for "few": how many trials half of them need


@dataclass
class ColdStart:
    result: CellResult
    cold: Figure
    warm: Figure
    ratio: str
    warmups: str


@dataclass
class Header:
    run_id: str
    lines: list[tuple[str, str]]     # (label, text)
    note: str | None


@dataclass
class Report:
    stored: StoredRun
    view: View
    results: list[CellResult]
    header: Header
    steps: list[StepReport]
    verdicts: list[Verdict]
    matrix: Matrix
    study: StudyTable | None
    sizes: list[SizeSweep] = field(default_factory=list)  # result-size sweeps, their crossovers named
    pairs: list[PairTable] = field(default_factory=list)  # a study's pairs (S3's table), with its tallies
    transfers: list = field(default_factory=list)     # transfer.TransferTable: scans beside the wire's floor
    twins: list[TwinTable] = field(default_factory=list)  # TLS and compression cells beside their plain twins
    associations: list = field(default_factory=list)  # associations.AssociationTable: load steps by strategy
    requests: list = field(default_factory=list)      # requests.RequestTable: where a page's requests spent their time
    predictions: list = field(default_factory=list)   # stats.model.Prediction
    cold_starts: list[ColdStart] = field(default_factory=list)
    not_measured: list[NotMeasured] = field(default_factory=list)
    warnings: list[WarningGroup] = field(default_factory=list)
    alpha: float = ALPHA
    noise: float = NOISE

    @property
    def titled(self) -> list:
        """The tables that carry their own title, columns, cells and caption, in the order every
        renderer shows them: transfers, twins, associations, requests."""
        return [*self.transfers, *self.twins, *self.associations, *self.requests]


def build(stored: StoredRun, view: str = "median") -> Report:
    """The report of a stored run by one of the views' rules."""

    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}: choose from {', '.join(VIEWS)}")
    v = VIEWS[view]
    results = analyse(stored)
    steps = [_step(v, variant, step, rs) for variant, step, rs in by_step(results)]
    return Report(
        stored=stored, view=v, results=results, header=header(stored, v), steps=steps,
        verdicts=[verdict for s in steps for verdict in _verdicts(s)], matrix=_matrix(results),
        study=study_table(stored.suite, results), sizes=size_sweeps(results), pairs=study_pairs(stored, results),
        predictions=rt_model.checks(results),
        cold_starts=_cold_starts(stored, results), not_measured=_not_measured(results),
        warnings=warnings(results), transfers=transfer_tables(results), twins=twin_tables(results),
        associations=association_tables(results, stored), requests=request_tables(results))


# --- header ----------------------------------------------------------------------------------

def header(stored: StoredRun, view: View) -> Header:
    run, settings, env = stored.run, stored.run.settings, stored.run.environment
    resumed = settings.get("resumed") or []
    raised = "".join(f" · trials {r['from']} → {r['to']} at {r['at']}" for r in settings.get("trials_raised") or [])
    lines = [("suite", f"{run.suite} ({run.suite_source})"),
             ("status", run.status + (f" · resumed {', '.join(resumed)}" if resumed else "") + raised),
             *([("label", settings["label"])] if settings.get("label") else []),
             ("date", _when(run.started_at, run.finished_at))]
    lines.append(("targets", ", ".join(
        " ".join(filter(None, [t.target, t.server_version,
                               f"({'managed' if t.managed else 'external'})"])) for t in stored.targets)))
    for t in stored.targets:  # what each path kind says of itself (the proxy's cost, the pooler)
        for key in PATH_SETTINGS:
            if key in t.settings:
                lines.append((f"{key} ({t.target})", str(t.settings[key])))
    power = env.get("power", {})
    idle = f" · cpuidle {power['cpuidle_driver']}" if isinstance(power, dict) and power.get("cpuidle_driver") else ""
    host = " · ".join(filter(None, [env.get("hostname"), str(env.get("cpu")), f"{env.get('cores')} cores",
                                    f"{env.get('memory_gib')} GiB", str(env.get("os")), f"kernel {env.get('kernel')}"]))
    lines.append(("host", host + idle))
    if env.get("idle_cpus"):
        lines.append(("idle CPUs", str(env["idle_cpus"])))
    if env.get("page_cache"):  # env.page_cache: a file unread that long is read from the disk
        lines.append(("page cache", str(env["page_cache"])))
    if isinstance(env.get("steadiness"), dict):
        lines.append(("host speed", host_speed(env["steadiness"])))
    if isinstance(env.get("cluster"), dict):  # loaded steps' clients ran on other hosts
        per_trial = [p for ts in stored.trials.values() for p in hosts.parts(ts)]
        lines.append(("clients on", hosts.cluster_line(env["cluster"], per_trial)))
    precision = (f", more (up to {settings.get('max_trials')}) where the median's CI was wider than "
                 f"±{fmt.share(settings['precision'])}" if settings.get("precision") else "")
    few = (" · too few for any significance verdict (a Mann-Whitney test needs 4 against 4)"
           if settings["trials"] < 4 and not settings.get("precision") else "")
    split = env.get("batches") or {}  # steps whose cells could not all be open at once (runner/plan.py)
    batched = (f" (in batches, each interleaved within itself: {', '.join(f'{s} {n}' for s, n in split.items())};"
               " the servers, poolers and this host held no more open at once)" if split else "")
    sizes = (" · --quick sizes" if settings.get("quick") else "") + (f" · --rows {settings['rows']:,}"
                                                                      if settings.get("rows") else "")
    lines.append(("trials", f"{settings['trials']} per cell after {settings['warmup']} warmup{precision}, interleaved "
                            f"across methods{batched}{sizes}{few}"))
    lines.append(("figure", view.rule))
    return Header(run.id, lines, run.message or None)


UNSTEADY = 1.25  # the host's p90 this many times its quickest: the host, not the methods, widens the CIs


def host_speed(summary: dict) -> str:
    """How steady the host was (runner/steadiness.py), with a plain warning when it was not."""
    quickest = summary["quickest_ms"]

    def over(key: str) -> str:
        return f"{summary[key] / quickest - 1:+.0%}"

    text = (f"a fixed piece of work took {quickest:.2f} ms at best; median {over('median_ms')}, p90 {over('p90_ms')}, "
            f"slowest {over('slowest_ms')} ({summary['timings']} timings, before and after each step)")
    if summary["p90_ms"] > UNSTEADY * quickest:
        text += (" · UNSTEADY: this machine's speed varied during the run (other processes, or a busy host under a "
                 "virtual machine), and every trial moved with it: the CIs are wider than the methods alone would make them")
    return text


def _when(started: str | None, finished: str | None) -> str:
    if not started:
        return ""
    try:
        a = dt.datetime.fromisoformat(started)
        text = a.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
        if finished:
            took = int((dt.datetime.fromisoformat(finished) - a).total_seconds())
            text += f" · took {took // 60} min {took % 60} s" if took >= 60 else f" · took {took} s"
        return text
    except ValueError:  # a hand-edited store: show what is there
        return f"{started} – {finished or ''}"


# --- one step ------------------------------------------------------------------------------------

def _step(view: View, variant: str, step: str, rs: list[CellResult]) -> StepReport:
    measured = view.rank([r for r in rs if r.measured])
    first = rs[0].cell
    mode = f", {first.mode}" if first.mode else ""
    best = next((r for r in measured if r.ranked), None)
    rows, rank = [], 0
    for r in measured:
        rank += r.ranked
        rows.append(_row(view, r, rank if r.ranked else None, best))
    return StepReport(
        variant=variant, step=step, title=step_title(variant, step),
        heading=f"{first.kind}{mode}: {first.description}", kind=first.kind,
        unit=view.unit(measured[0] if measured else rs[0]), rows=rows,
        not_measured=[r for r in rs if not r.measured],
        loaded=any(r.per_client_rates is not None and len(r.per_client_rates) > 0 for r in rs),
        layer_costs=layer_costs(rs))


def _row(view: View, r: CellResult, rank: int | None, best: CellResult | None) -> CellRow:
    spread = view.spread(r)
    behind = view.times_behind(r, best) if rank is not None and best is not None else None
    p = r.percentiles or {}
    per_client, late = _per_client(r)
    return CellRow(
        result=r, rank=rank, figure=Figure(view.value(r), view.text(view.value(r))),
        spread=(Figure(spread[0], view.text(spread[0])), Figure(spread[1], view.text(spread[1]))) if spread else None,
        behind=Figure(behind, fmt.ratio(behind)) if behind is not None else None,
        # Each ranked cell against the best, once: the ≈ of the tables.
        alike=rank is not None and r is not best and not compare(best, r).significant,
        percentiles={q: _figure(p.get(q)) for q, _ in PERCENTILES},
        client_cpu=_figure(r.cpu_per_op_ns, note=r.cpu_note), server_cpu=_figure(r.server_cpu_per_op_ns, note=r.server_cpu_note),
        round_trips=_round_trips(r.round_trips_per_op),
        bytes_per_row=Figure(r.bytes_per_row, f"{r.bytes_per_row:,.0f}" if r.bytes_per_row is not None else "—"),
        memory=_figure(r.peak_rss_bytes, fmt.size), growth=_figure(r.rss_growth_bytes, fmt.size), cv=Figure(r.rate.cv, f"{r.rate.cv:.1%}"),
        half_width=Figure(r.half_width, f"±{r.half_width:.1%}" if r.half_width is not None else "—"),
        shares=time_shares(r), flags=flags(r), per_client=per_client, late=late, through=through(r.cell))


def _per_client(r: CellResult) -> tuple[str, str]:
    """A loaded cell's clients: their median rate with the slowest and fastest, and the share
    of open-loop operations that started late."""
    rates = r.per_client_rates
    spread = (f"{fmt.rate(float(np.median(rates)))} [{fmt.rate(float(rates.min()))}–{fmt.rate(float(rates.max()))}]"
              if rates is not None and len(rates) else "")
    late = f"{r.late_share:.1%}" + (f" +{r.skipped} skipped" if r.skipped else "") if r.late_share is not None else ""
    return spread, late


# --- verdict -----------------------------------------------------------------------------------

def _verdicts(step: StepReport) -> list[Verdict]:
    """Per target, the best verified cell and whether it beats the runner-up there
    significantly. Per target, because which SQLite driver beats which PostgreSQL driver is
    rarely the question a step asks."""
    targets = dict.fromkeys(r.cell.target for r in [*(row.result for row in step.rows), *step.not_measured])
    return [refused(step, target) or verdict(step, target, [row for row in step.rows if row.cell.target == target])
            for target in targets]


def refused(step: StepReport, target: str) -> Verdict | None:
    """A step the target refuses by design (DuckDB's writes: its workers open the file
    read-only): every cell of it there unsupported for one reason, said once, not as a
    failure to verify."""
    if any(row.cell.target == target for row in step.rows):
        return None
    reasons = {(r.cell.status, r.cell.message) for r in step.not_measured if r.cell.target == target}
    if len(reasons) != 1 or next(iter(reasons))[0] != "unsupported":
        return None
    return Verdict(step, target, None, next(iter(reasons))[1], reason="refused")


def verdict(step: StepReport, target: str, rows: list[CellRow], among: str = "") -> Verdict:
    """The verdict of ``rows`` (one target's, in rank order): the best verified cell against
    the runner-up, the next *method* (the same driver on another path is not a rival).
    ``among`` qualifies the texts when the rows are a selection ("among those shown")."""
    ranked = [row for row in rows if row.rank is not None]
    if not ranked:
        return Verdict(step, target, None, f"no verified cell{among}")
    best = ranked[0]
    second = next((row for row in ranked if row.cell.method != best.cell.method), None)
    if second is None:
        return Verdict(step, target, best, f"the only verified method{among}")
    return Verdict(step, target, best, *against(best, second))


def against(best: CellRow, second: CellRow) -> tuple[str, str, bool]:
    """How ``best`` stands against ``second``: the text, the test's reason, significant or not."""
    c = compare(best.result, second.result)
    runner_up = f"{second.cell.method} @ {second.cell.path}"
    text = f"{c.verdict} than {runner_up}" if c.significant else f"no significant difference from {runner_up}"
    return text, c.reason, c.significant


# --- the run at a glance ---------------------------------------------------------------------------

@dataclass
class Standing:
    """A method on one path to a target, across the steps it was ranked in there: how far behind
    the target's best cell of each step it stood (the geometric mean of those ratios), and in
    how many it was that best."""

    target: str
    label: str            # "c-libpq @ unix"
    steps: int
    behind: float
    first: int


def standings(report: Report) -> list[Standing]:
    """Per target, every method on each path, the nearest to the target's best first: the
    compact ranking a run ends with. Against the best on the same target, as the verdicts are
    (an in-process engine beside a server is rarely the question); only those ranked in at
    least half the steps any was ranked in on that target, so that one quick win does not top
    the list."""
    found: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for step in report.steps:
        best: dict[str, CellRow] = {}
        for row in step.rows:  # in rank order: a target's first ranked row is its best
            if row.rank is None:
                continue
            top = best.setdefault(row.cell.target, row)
            behind = report.view.times_behind(row.result, top.result)
            found.setdefault((row.cell.target, f"{row.cell.method} @ {row.cell.path}"), []).append(
                (behind, row is top))
    kept = []
    for target in dict.fromkeys(t for t, _ in found):
        mine = {label: seen for (t, label), seen in found.items() if t == target}
        most = max(len(seen) for seen in mine.values())
        kept += sorted((Standing(target, label, len(seen), float(np.exp(np.mean([np.log(b) for b, _ in seen]))),
                                 sum(first for _, first in seen))
                        for label, seen in mine.items() if 2 * len(seen) >= most), key=lambda s: (s.behind, -s.steps))
    return kept


# --- seconds per 1,000 units ----------------------------------------------------------------------

# A figure whose cell is not ranked says why: its verification disagreed, or the cell stopped
# (an error or a timeout) after the trials shown.
MARKS = {"mismatch": "!", "error": "†", "timeout": "†"}
MARK_LEGEND = {"!": "! = verification mismatch: shown, not ranked",
               "†": "† = stopped by an error or timeout after the trials shown: not ranked"}


def _matrix(results: list[CellResult]) -> Matrix:
    steps = sorted(dict.fromkeys((r.cell.variant, r.cell.step_index, r.cell.step) for r in results),
                   key=lambda s: s[:2])
    rows: dict[tuple, dict] = {}
    for r in results:
        rows.setdefault((r.cell.method, r.where), {})[(r.cell.variant, r.cell.step_index, r.cell.step)] = r
    marks: set[str] = set()
    out = []
    for (method, where), cells in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        values: list[MatrixCell | None] = []
        for key in steps:
            r = cells.get(key)
            if r is None:
                values.append(None)
            elif r.measured:
                mark = MARKS.get(r.cell.status, "")
                marks.add(mark)
                values.append(MatrixCell(fmt.seconds(r.seconds_per_1000) + mark, r.ranked, True))
            else:
                values.append(MatrixCell("n/a" if r.cell.status == "unsupported" else r.cell.status, False, False))
        out.append((method, where, values))
    return Matrix([step_title(variant, step) for variant, _, step in steps], out,
                  [text for mark, text in MARK_LEGEND.items() if mark in marks])


# --- what was not measured, and what to read with care ------------------------------------------

def _not_measured(results: list[CellResult]) -> list[NotMeasured]:
    seen: dict[tuple, list[str]] = {}
    for r in results:
        if not r.measured and r.cell.status != "ok":
            seen.setdefault((r.label, r.cell.status, r.cell.message), []).append(r.cell.step)
    return [NotMeasured(where, status, message, list(dict.fromkeys(steps)))
            for (where, status, message), steps in seen.items()]


FLAG_TITLES = {
    "wide": "not ranked with confidence (the median's CI stayed wider than the run's precision target)",
    "unstable": "unstable (standard deviation above 10% of the mean)",
    "short": "too short (a trial under 3 ms is at the mercy of one preemption)",
    "few": f"too few trials for their spread (to resolve {NOISE:.0%} differences)",
    "outlier": "outliers (modified z-score above 14; kept, never removed)",
    "client": f"client host near saturation (its client processes used {hosts.SATURATED:.0%} or more of its CPUs)",
}


def warnings(results: list[CellResult]) -> list[WarningGroup]:
    """pyperf-style warnings, grouped by kind in a fixed order."""
    by_kind: dict[str, list[tuple[CellResult, Flag]]] = {}
    for r in results:
        for f in flags(r):
            by_kind.setdefault(f.kind, []).append((r, f))
    groups = []
    for kind, title in FLAG_TITLES.items():
        found = by_kind.get(kind, [])
        if not found:
            continue
        summary = ""
        if kind == "few":
            needs = sorted(f.trials_needed for _, f in found)
            summary = (f"half of them need {needs[len(needs) // 2]}+ trials, the worst {needs[-1]}; "
                       "rerun with --trials N, or accept a coarser resolution")
        groups.append(WarningGroup(kind, title, found, summary))
    return groups


def _cold_starts(stored: StoredRun, results: list[CellResult]) -> list[ColdStart]:
    """JIT runtimes: the first operation before any warm-up, against the warm median."""
    jit = {m.method for m in stored.methods if m.capabilities.get("jit")}
    out = []
    for r in results:
        if r.cell.method in jit and r.measured and r.cell.cold_first_op_ns:
            cold, warm = r.cell.cold_first_op_ns, (r.percentiles or {}).get(50.0)
            out.append(ColdStart(r, _figure(cold), _figure(warm), f"{cold / warm:.1f}×" if warm else "",
                                 str(r.cell.warmups or "")))
    return out
