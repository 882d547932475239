"""The self-contained HTML report of a run: one file with its CSS, script and charts inline,
so it opens anywhere, offline, years later. Every figure comes from the report model
(report/model.py), as in the terminal report; this module only arranges them for the template."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import partial

from markupsafe import Markup

from ..stats.cells import CellResult
from ..stats.views import View
from ..store import StoredRun
from . import charts
from .. import formatting as fmt
from ..stats.sizes import is_size_sweep
from ..profile.folded import flame_graph
from .assets import asset, template
from .figures import step_title
from .history import anchor as history_anchor
from .profiles import Profile
from .model import PERCENTILES, CellRow, Report, StepReport, Verdict, against, build, verdict

# Layout constants (px): the bar chart shares a row with the time breakdown when there is one.
PAGE_W = 980
BARS_W_PAIRED = 600
BREAKDOWN_W = 370


@dataclass(frozen=True)
class TableCell:
    """One table cell: its text, the raw value the script sorts on, a tooltip, a class."""

    text: str = ""
    sort: str | None = None
    title: str | None = None
    cls: str = ""
    href: str | None = None
    pill: bool = False                        # text drawn as a coloured label (cls styles it)
    badges: tuple[tuple[str, str], ...] = ()  # (label, tooltip)


@dataclass(frozen=True)
class Column:
    name: str
    numeric: bool = False
    title: str | None = None


@dataclass
class Row:
    cells: list[TableCell]
    data: dict[str, str] = field(default_factory=dict)  # data-method/target/path for the filters
    cls: str = ""


@dataclass
class Table:
    columns: list[Column]
    rows: list[Row]
    data: dict[str, str] = field(default_factory=dict)   # data-* on the <table>


@dataclass
class StepSection:
    anchor: str
    step: str
    variant: str
    title: str
    description: str
    bars: Markup
    breakdown: Markup
    percentiles: list[Markup]     # small multiples: one panel per target and path
    more: int                      # lines beyond the panels' top N, drawn grey until asked for
    table: Table
    not_measured: list[str]
    layer_costs: list[str]
    layer_stack: Markup = Markup("")  # each driver with the layers above it
    profiles: list[ProfileFigure] = field(default_factory=list)  # run --profile: a flame graph per cell and side


@dataclass
class ProfileFigure:
    heading: str
    image: str | None   # a data: URL of the SVG flame graph, or None and
    note: str | None    # why there is none


@dataclass
class SweepSection:
    """Steps that vary clients or rate, drawn as curves across those steps."""

    anchor: str
    title: str
    description: str
    throughput: list[Markup]      # one panel per target
    latency: list[Markup]
    more: int                     # lines beyond the panels' top N
    steps: list[tuple[str, str]]  # (step title, its anchor)
    sizes: list[Markup] = field(default_factory=list)  # a result-size sweep: rows/s vs rows, per target
    verdicts: list[str] = field(default_factory=list)  # its crossovers, named


def render_html(stored: StoredRun, view: str = "median", history: str | None = None) -> str:
    """The whole report as one HTML document; with ``history`` (the history page's file name,
    `report --history`) each cell's method links to its section there."""
    return render_report(build(stored, view), history)


def render_report(report: Report, history: str | None = None) -> str:
    stored, results = report.stored, report.results
    anchors = {(s.variant, s.step): f"step-{i + 1}" for i, s in enumerate(report.steps)}
    versions = _target_versions(stored)
    return template("report.html.j2").render(
        run=stored.run,
        view=report.view,
        top_n=charts.TOP_N,
        alpha=f"{report.alpha:g}",
        noise=f"{report.noise:.0%}",
        header=report.header.lines,
        note=report.header.note,
        verdicts=_verdicts(report.verdicts, anchors),
        verdict_data=_json(_verdict_data(report.verdicts)),
        sweeps=_sweeps(results, anchors) + _size_sections(report, anchors),
        study=_study(report),
        study_pairs=_pair_sections(report),
        transfers=_transfer_sections(report),
        steps=[_step_section(s, report.view, anchors[(s.variant, s.step)], history, stored.profiles)
               for s in report.steps],
        filters=_filters(results, versions),
        target_versions=_json(versions),
        methods=_methods(stored),
        verification=_verification(report.steps),
        problems=_problems(results),
        environment=_pairs(_flatten(stored.run.environment)),
        settings=_pairs(_flatten(stored.run.settings)),
        targets=_targets(stored),
        css=Markup(asset("report.css")),
        script=Markup(asset("report.js")),
    )


def _filter_data(r: CellResult) -> dict[str, str]:
    return {"method": r.cell.method, "target": r.cell.target, "path": r.cell.path}


# --- verdict -----------------------------------------------------------------------------------

def _verdicts(verdicts: list[Verdict], anchors) -> Table:
    """Per step and target, the best verified cell and whether it beats the runner-up there
    significantly (report.model decides; this lays it out). Row k is verdict k of the data
    _verdict_data gives the page's script."""
    rows = []
    for k, v in enumerate(verdicts):
        link = TableCell(v.step.title, href=f"#{anchors[(v.step.variant, v.step.step)]}")
        data = {"target": v.target, "verdict": str(k)}
        if v.best is None:
            said = f"refused by design: {v.against}" if v.reason == "refused" else v.against  # not a failure to verify
            rows.append(Row([link, TableCell(v.target), TableCell(said), TableCell(""), TableCell("")], data))
            continue
        against = TableCell(v.against, title=v.reason or None, cls="" if v.significant else "muted")
        rows.append(Row([link, TableCell(v.target), TableCell(f"{v.best.cell.method} @ {v.best.cell.path}"),
                         TableCell(v.with_unit, sort=v.best.figure.sort), against], data))
    return Table([Column("step"), Column("target"), Column("fastest verified cell"), Column("figure", numeric=True),
                  Column("against the next method")], rows)


def _verdict_data(verdicts: list[Verdict]) -> dict:
    """What the page's script needs to redo each verdict for the cells a filter leaves: the
    target's verified cells in rank order, and every pair's comparison (best first, runner-up
    of another method), made here by report.model so that the texts and the statistics are
    the report's own. Compact: a pair is [text, reason, significant]."""
    out = []
    for v in verdicts:
        ranked = [row for row in v.step.rows if row.rank is not None and row.cell.target == v.target]
        cells = [[row.cell.method, row.cell.path, f"{row.cell.method} @ {row.cell.path}",
                  Verdict(v.step, v.target, row, "").with_unit, row.figure.sort] for row in ranked]
        pairs = {}
        for i, a in enumerate(ranked):
            for j, b in enumerate(ranked[i + 1:], i + 1):
                if a.cell.method != b.cell.method:
                    text, reason, significant = against(a, b)
                    pairs[f"{i},{j}"] = [text, reason, int(significant)]
        out.append({"cells": cells, "pairs": pairs})
    some = next((v for v in verdicts if v.best is not None), None)
    texts = {"none": verdict(some.step, some.target, []).against,
             "alone": verdict(some.step, some.target, [some.best]).against} if some else {}
    # A filtered selection's verdict says so: "no verified cell among those shown".
    return {"verdicts": out, "texts": texts, "among": " among those shown"}


def _json(value) -> Markup:
    """JSON safe inside <script>: no "</" can close the element early."""
    return Markup(json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/"))


# --- a built-in study's figures beside today's ---------------------------------------------------

@dataclass
class StudySection:
    title: str
    table: Table
    sources: str
    note: str


def _study(report: Report) -> StudySection | None:
    study = report.study
    if study is None:
        return None
    columns = [Column("")] + [Column(label, numeric=True) for label in study.columns]
    rows = [Row([TableCell(label, cls="published")] + [TableCell(text) for text in texts], cls="published")
            for label, texts in study.published]
    rows += [Row([TableCell(label)] + [TableCell(text, sort=text) for text in texts],
                 {"method": label.split(" ", 1)[0]}) for label, texts in study.today]
    return StudySection(study.title, Table(columns, rows), study.sources, study.note)


@dataclass
class PairSection:
    title: str
    table: Table
    tallies: list[str]


def _transfer_sections(report: Report) -> list[tuple[str, Table, str]]:
    """Each table that carries its own title (Report.titled): transfers, twins, associations, requests."""
    return titled_sections(report.titled)


def titled_sections(titled: list) -> list[tuple[str, Table, str]]:
    """Tables that carry their own title, columns, cells, notes and caption (a transfer, twin or
    association table): title, table (a figure's CI as its cell's tooltip), caption."""
    return [(t.title, Table([Column(name, numeric=i >= t.numeric_from) for i, name in enumerate(t.columns)],
                            [Row([TableCell(text, title=note) for text, note in zip(t.cells(row), t.notes(row))])
                             for row in t.rows]), t.caption)
            for t in titled]


def _pair_sections(report: Report) -> list[PairSection]:
    """Study S3's table per pair (report/pairs.py)."""
    sections = []
    for pair in report.pairs:
        candidate, reference = pair.names
        columns = [Column("type"), Column(reference, numeric=True), Column(candidate, numeric=True),
                   Column("Diff", numeric=True), Column("R%", numeric=True), Column("Diff%", numeric=True),
                   Column(f"{candidate} vs {reference}"), Column("study R%", numeric=True)]
        rows = [Row([TableCell(r.label), TableCell(" · ".join(r.reference)), TableCell(" · ".join(r.candidate)),
                     TableCell(r.diff), TableCell(f"{r.r_percent:.1f}%", sort=f"{r.r_percent:.3f}"),
                     TableCell(f"{r.r_percent - 100:+.1f}%", sort=f"{r.r_percent:.3f}"), TableCell(r.verdict), TableCell(r.published_r)])
                for r in pair.rows]
        sections.append(PairSection(pair.title, Table(columns, rows), [t for t in (pair.tally, pair.published_tally) if t]))
    return sections


# --- sweeps: a [[steps]] entry that varies clients or rate, across its steps ----------------------

def _sweeps(results: list[CellResult], anchors) -> list[SweepSection]:
    """One section per sweep with at least two points on some curve: throughput vs clients
    (when clients vary) and p99 latency vs throughput, one panel per target. A curve is one
    method on one path with the sweep's other varied values (say policy=pooled) fixed."""
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for r in results:
        if r.cell.sweep and r.ranked:
            groups.setdefault((r.cell.variant, r.cell.sweep), []).append(r)
    sections = []
    for i, ((variant, sweep), rs) in enumerate(groups.items()):
        if is_size_sweep(rs):
            continue  # drawn by _size_sections
        curves: dict[tuple, list[CellResult]] = {}
        for r in rs:
            curves.setdefault((r.cell.method, r.where, r.cell.sweep_series or ""), []).append(r)
        for points in curves.values():
            points.sort(key=lambda r: (r.cell.clients or 1, r.cell.rate or 0))
        if max(len(points) for points in curves.values()) < 2:
            continue
        unit = rs[0].unit + "/s"
        clients = sorted({r.cell.clients or 1 for r in rs})

        def panel_list(x, y, x_text, y_text, keep=lambda r: True):
            """Per target, its curves fastest first (by their best median throughput)."""
            out = []
            for target in dict.fromkeys(r.cell.target for r in rs):
                mine = [(k, [r for r in pts if keep(r)]) for k, pts in curves.items() if pts[0].cell.target == target]
                mine = sorted(((k, pts) for k, pts in mine if pts), key=lambda kp: -max(r.rate.median for r in kp[1]))
                series = tuple(charts.Series(" · ".join(filter(None, [f"{k[0]} @ {k[1].split('/', 1)[1]}", k[2]])),
                                             tuple(charts.Point(x(r), y(r), x_text(r), y_text(r)) for r in pts),
                                             data=_filter_data(pts[0])) for k, pts in mine)
                out.append(charts.Panel(target, series, {"target": target}))
            return out

        by_clients = panel_list(lambda r: r.cell.clients or 1, lambda r: r.rate.median, _sweep_point,
                                lambda r: f"{fmt.rate(r.rate.median)} {unit}")
        by_rate = panel_list(lambda r: r.rate.median, lambda r: r.percentiles[99.0],
                             lambda r: f"{_sweep_point(r)}: {fmt.rate(r.rate.median)} {unit}",
                             lambda r: f"p99 {fmt.duration(r.percentiles[99.0])}",
                             keep=lambda r: (r.percentiles or {}).get(99.0))
        throughput = charts.panels(by_clients, lambda p, series, legend: charts.throughput_chart(
            sweep, series, legend, clients, unit, PAGE_W, variant, p.title))
        latency = charts.panels(by_rate, lambda p, series, legend: charts.latency_throughput_chart(
            sweep, series, legend, PAGE_W, variant, unit, p.title))
        steps = list(dict.fromkeys(r.cell.step for r in rs))
        sections.append(SweepSection(
            anchor=f"sweep-{i + 1}", title=step_title(variant, sweep),
            description=f"{len(steps)} steps of one [[steps]] entry, varying "
                        f"{' and '.join(k for k in ('clients', 'rate') if len({getattr(r.cell, k) for r in rs}) > 1)}.",
            throughput=[Markup(c) for c in throughput], latency=[Markup(c) for c in latency],
            more=_beyond_top(by_clients),
            steps=[(s, anchors[(variant, s)]) for s in steps]))
    return sections


def _size_sections(report: Report, anchors) -> list[SweepSection]:
    """One section per result-size sweep: rows/s against rows per read, a panel per target,
    and the crossovers named under it."""
    groups: dict[tuple[str, str], list] = {}
    for sweep in report.sizes:
        groups.setdefault((sweep.variant, sweep.sweep), []).append(sweep)
    sections = []
    for i, ((variant, name), sweeps) in enumerate(groups.items()):
        panels, verdicts, steps = [], [], []
        for sweep in sweeps:
            series = tuple(charts.Series(c.label, tuple(
                charts.Point(x, pt.row_rate.median, f"{x:,.0f} rows", f"{fmt.rate(pt.row_rate.median)} rows/s")
                for x, pt in c.points), data=_filter_data(c.points[0][1])) for c in sweep.curves)
            panels.append((charts.Panel(sweep.target, series, {"target": sweep.target}),
                           sorted({round(x) for c in sweep.curves for x, _ in c.points})))
            verdicts += [f"{sweep.target}: {v}" for v in sweep.verdicts]
            steps += [pt.cell.step for c in sweep.curves for _, pt in c.points]
        drawn = [chart for panel, sizes in panels for chart in charts.panels(
            [panel], lambda p, series, legend, sizes=sizes: charts.size_chart(name, series, legend, sizes, PAGE_W,
                                                                              variant, p.title))]
        steps = list(dict.fromkeys(steps))
        sections.append(SweepSection(
            anchor=f"sizes-{i + 1}", title=step_title(variant, name),
            description=f"{len(steps)} steps of one [[steps]] entry, varying the result size: rows per second "
                        "against the rows one read returns.",
            throughput=[], latency=[], more=_beyond_top([p for p, _ in panels]),
            steps=[(s, anchors[(variant, s)]) for s in steps if (variant, s) in anchors],
            sizes=[Markup(c) for c in drawn], verdicts=verdicts))
    return sections


def _sweep_point(r: CellResult) -> str:
    clients = r.cell.clients or 1
    rate = f" at {fmt.rate(r.cell.rate)}/s" if r.cell.rate else ""
    return f"{clients} client{'s' if clients != 1 else ''}{rate}"


# --- one step ------------------------------------------------------------------------------------

def _step_section(step: StepReport, view: View, anchor: str, history: str | None = None,
                  profiles: list[dict] | None = None) -> StepSection:
    breakdown = _breakdown_chart(step)
    bars = charts.bar_chart(step.step, [_bar(row) for row in step.rows], _axis_title(view, step),
                            view.form, BARS_W_PAIRED if breakdown else PAGE_W, step.variant)
    panels = _percentile_panels(step)
    return StepSection(
        anchor=anchor, step=step.step, variant=step.variant, title=step.title, description=step.heading,
        bars=Markup(bars), breakdown=Markup(breakdown),
        percentiles=[Markup(c) for c in charts.panels(panels, partial(_percentile_chart, step))],
        more=_beyond_top(panels),
        table=_step_table(step, view, history),
        not_measured=[f"{r.label} ({r.cell.status})" for r in step.not_measured],
        layer_costs=[c.text for c in step.layer_costs],
        layer_stack=Markup(_layer_stack_chart(step)),
        profiles=[_profile_figure(Profile(r)) for r in profiles or []
                  if (r["step"], r["variant"]) == (step.step, step.variant)],
    )


def _profile_figure(profile: Profile) -> ProfileFigure:
    """A profile's flame graph as an image inside the page (inferno's SVG, which fetches
    nothing: the report stays one offline file), or why there is none."""
    if not profile.row["folded"]:
        return ProfileFigure(f"{profile.label} · {profile.row['side']}", None, profile.row["note"])
    try:
        svg = flame_graph(profile.stacks, f"{profile.label} · {profile.row['side']}", profile.heading())
    except RuntimeError as e:
        return ProfileFigure(profile.heading(), None, f"no flame graph: {e}; `accessbench show --profile` lists its "
                                                      "frames")
    return ProfileFigure(profile.heading(), "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode(),
                         None)


def _axis_title(view: View, step: StepReport) -> str:
    if not step.rows:
        return ""
    what = {"median": "median", "best": "best trial", "mean": "mean", "per1000": "median"}.get(view.name, view.name)
    spread = f" · whiskers: {view.spread_name}" if view.spread_name else ""
    better = "" if view.higher_is_better else " · shorter is better"
    return f"{step.unit} · {what}{spread}{better}"


def _bar(row: CellRow) -> charts.Bar:
    return charts.Bar(label=row.result.label, value=row.figure.value, text=row.figure.text,
                      low=row.spread[0].value if row.spread else None, high=row.spread[1].value if row.spread else None,
                      spread_text=row.spread_text, verified=row.rank is not None,
                      data=_filter_data(row.result) | {"status": row.status})


def _breakdown_chart(step: StepReport) -> str:
    """Only when the client's CPU per op is known for some cell of the step."""
    if not any(row.result.cpu_per_op_ns is not None for row in step.rows):
        return ""
    rows = [charts.Breakdown(row.result.label, fmt.duration(row.result.per_op_ns), row.shares,
                             _filter_data(row.result), row.result.cpu_note or "") for row in step.rows]
    return charts.breakdown_chart(step.step, rows, BREAKDOWN_W, step.variant)


def _layer_stack_chart(step: StepReport) -> str:
    """Per driver on this step, the driver's time per op and each layer above it stacked on it."""
    stacks: dict[str, list] = {}
    for cost in step.layer_costs:
        stacks.setdefault(cost.driver.label, [cost.driver, []])[1].append(cost)
    return charts.layer_stack_chart(step.step, [
        charts.Stack(label, driver.per_op_ns, fmt.duration(driver.per_op_ns),
                     tuple((c.layer.cell.method, c.layer.per_op_ns,
                            f"{fmt.duration(c.layer.per_op_ns)} · {c.percent_text}") for c in costs),
                     _filter_data(driver))
        for label, (driver, costs) in stacks.items()], PAGE_W, step.variant)


def _beyond_top(panels: list[charts.Panel]) -> int:
    """How many of the panels' lines are drawn grey (beyond each panel's TOP_N)."""
    return sum(max(0, len(p.series) - charts.TOP_N) for p in panels)


def _percentile_panels(step: StepReport) -> list[charts.Panel]:
    """One panel per target and path, its cells in the step's rank order (fastest first)."""
    series: dict[str, list[charts.Series]] = {}
    for row in step.rows:
        points = tuple(charts.Point(i, row.percentiles[q].value, name, row.percentiles[q].text)
                       for i, (q, name) in enumerate(PERCENTILES) if row.percentiles[q].value)
        if points:
            series.setdefault(row.result.where, []).append(
                charts.Series(row.cell.method, points, data=_filter_data(row.result)))
    return [charts.Panel(where, tuple(ss), {"target": ss[0].data["target"], "path": ss[0].data["path"]})
            for where, ss in sorted(series.items())]


def _percentile_chart(step: StepReport, panel: charts.Panel, series, legend) -> str:
    return charts.percentile_chart(step.step, series, legend, [name for _, name in PERCENTILES], charts.PANEL_W,
                                   step.variant, panel.title)


def _step_table(step: StepReport, view: View, history: str | None = None) -> Table:
    columns = [Column("#", True, "rank among verified cells"), Column("method"), Column("target"), Column("path")]
    columns += [Column(step.unit, True, view.rule)]
    columns += [Column(view.spread_name, True)] if view.spread_name else []
    columns += [Column("×\u00a0behind", True, "how many times behind the best verified cell (1.00× for the best)"),
                Column("p50", True), Column("p99", True), Column("p99.9", True), Column("max", True),
                Column("client CPU", True, "the client's CPU time (user + system) per operation"),
                Column("server CPU", True, "the serving backend's CPU time per operation"),
                Column("RT/op", True, "round trips per operation, counted by the latency proxy"),
                Column("B/row", True, "bytes to the client per row read, counted by the latency proxy"),
                Column("peak memory", True, "the worker's largest resident set during a trial (its whole process), "
                                            "median over trials"),
                Column("growth", True, "that peak over the resident set at the trial's start: what the trial's "
                                       "reading added"),
                Column("trials", True),
                Column("±CI", True, "how precisely the median is known: its 95% CI's half-width, relative to it"),
                Column("CV", True, "coefficient of variation of the trials' figures"),
                Column("verified"), Column("flags")]
    rows = []
    for row in step.rows:
        rank = str(row.rank) if row.rank is not None else None
        method = TableCell(row.method_text, title="its figure over every stored run" if history else None,
                           href=f"{history}#{history_anchor(row.cell)}" if history and row.rank is not None else None)
        cells = [TableCell(rank or "–", rank, cls="rank"), method, TableCell(row.cell.target), TableCell(row.cell.path),
                 _figure_cell(row.figure)]
        cells += [TableCell(row.spread_text, row.spread[0].sort if row.spread else None)] if view.spread_name else []
        cells += [TableCell(row.behind.text, row.behind.sort, cls="behind") if row.behind else TableCell("", cls="behind")]
        cells += [_figure_cell(row.percentiles[q]) for q in (50.0, 99.0, 99.9, 100.0)]
        cells += [_figure_cell(row.client_cpu), _figure_cell(row.server_cpu), _figure_cell(row.round_trips),
                  _figure_cell(row.bytes_per_row), _figure_cell(row.memory), _figure_cell(row.growth),
                  TableCell(str(row.trials), str(row.trials)), _figure_cell(row.half_width), _figure_cell(row.cv),
                  TableCell(row.status, row.status, row.cell.message or None, f"status status-{row.status}", pill=True),
                  _flags_cell(row)]
        # The script re-ranks the rows a filter leaves by their figure (data-figure).
        ranked = {"figure": row.figure.sort, "ranked": ""} if row.rank is not None else {}
        rows.append(Row(cells, _filter_data(row.result) | ranked, "" if row.rank is not None else "unverified"))
    return Table(columns, rows, {"higher": "1" if view.higher_is_better else "0"})


def _figure_cell(f) -> TableCell:
    return TableCell(f.text, f.sort, title=f.note or None)


def _flags_cell(row: CellRow) -> TableCell:
    kinds = " ".join(f.kind for f in row.flags)
    return TableCell(kinds, kinds, cls="flags", badges=tuple((f.kind, f.text) for f in row.flags))


# --- methods, verification, environment ------------------------------------------------------------

@dataclass(frozen=True)
class MethodInfo:
    name: str
    summary: list[tuple[str, str]]
    settings: list[tuple[str, str]]
    capabilities: list[tuple[str, str]]


def _methods(stored: StoredRun) -> list[MethodInfo]:
    return [MethodInfo(m.method,
                       [("language", m.language or ""), ("runtime", m.runtime or ""),
                        ("driver", m.driver or ""), ("driver version", m.driver_version or "")],
                       _pairs(_flatten(m.settings)), _pairs(_flatten(m.capabilities)))
            for m in stored.methods]


def _verification(steps: list[StepReport]) -> Table:
    """Methods × steps, each cell coloured by its verification status."""
    columns = [Column("method"), Column("target/path")] + [Column(s.title) for s in steps]
    grid: dict[tuple, dict] = {}
    for s in steps:
        for r in [*(row.result for row in s.rows), *s.not_measured]:
            key = (r.cell.method, r.cell.target, r.cell.path)
            grid.setdefault(key, {})[s.title] = r
    rows = []
    for (method, target, path), cells in sorted(grid.items()):
        row = [TableCell(method), TableCell(f"{target}/{path}")]
        for s in steps:
            r = cells.get(s.title)
            if r is None:
                row.append(TableCell("", cls="status"))
                continue
            status = r.cell.status
            title = f"{s.title} · {r.label}: {status}" + (
                f" — {r.cell.message}" if r.cell.message else "")
            row.append(TableCell(STATUS_MARK.get(status, status), status, title, f"status status-{status}"))
        rows.append(Row(row, {"method": method, "target": target, "path": path}))
    return Table(columns, rows)


STATUS_MARK = {"ok": "✓", "mismatch": "≠", "unsupported": "n/a", "error": "error", "timeout": "timeout"}


def _problems(results: list[CellResult]) -> Table:
    rows = [Row([TableCell(r.cell.method), TableCell(r.where), TableCell(step_title(r.cell.variant, r.cell.step)),
                 TableCell(r.cell.status, cls=f"status status-{r.cell.status}", pill=True),
                 TableCell(r.cell.message or "", cls="message")], _filter_data(r))
            for r in results if r.cell.status != "ok"]
    return Table([Column("method"), Column("target/path"), Column("step"), Column("status"), Column("message")], rows)


def _flatten(value, prefix: str = "") -> dict[str, object]:
    """Nested dicts as dotted keys: power.haltpoll.guest_halt_poll_ns."""
    out: dict[str, object] = {}
    for key, v in value.items():
        name = f"{prefix}{key}"
        if isinstance(v, dict) and v:
            out |= _flatten(v, f"{name}.")
        else:
            out[name] = v
    return out


def _text(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value) or "—"
    if isinstance(value, dict):
        return "{}" if not value else ", ".join(f"{k}: {_text(v)}" for k, v in value.items())
    return str(value)


def _pairs(flat: dict[str, object]) -> list[tuple[str, str]]:
    return [(k, _text(v)) for k, v in flat.items()]


@dataclass(frozen=True)
class TargetInfo:
    name: str
    settings: list[tuple[str, str]]     # what the target is, then its server settings


def _targets(stored: StoredRun) -> list[TargetInfo]:
    return [TargetInfo(t.target,
                       [("DBMS", t.dbms or ""), ("server version", t.server_version or "—"),
                        ("server", "managed by accessbench" if t.managed else "external")]
                       + _pairs(_flatten(t.settings)))
            for t in stored.targets]


@dataclass(frozen=True)
class FilterGroup:
    key: str          # the data-* attribute it filters on
    title: str
    values: list[str]


def _filters(results: list[CellResult], versions: dict[str, str]) -> list[FilterGroup]:
    def values(key):
        return sorted({getattr(r.cell, key) for r in results})
    groups = [FilterGroup("target", "Targets", values("target")), FilterGroup("path", "Paths", values("path")),
              FilterGroup("method", "Methods", values("method"))]
    if len(set(versions.values())) > 1:  # the server's version as an axis of its own (postgresql@13 … @18 in one run)
        groups.insert(1, FilterGroup("version", "Server versions", sorted(set(versions.values()))))
    return groups


def _target_versions(stored: StoredRun) -> dict[str, str]:
    """Each target's server as the version filter names it: the DBMS and the version's first
    word (PostgreSQL's "15.14 (Debian …)" → "postgresql 15.14"). The page's script finds a
    cell's version through its target."""
    return {t.target: f"{t.dbms} {t.server_version.split()[0].split('-')[0]}"
            for t in stored.targets if t.server_version and t.dbms}
