"""The self-contained HTML report of a run: one file with its CSS, script and charts inline,
so it opens anywhere, offline, years later. The figures come from the same analysis and the
same formatting as the terminal report; this module only arranges them for the template."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path

import jinja2
from markupsafe import Markup

from ..stats.cells import CellResult, analyse, by_step
from ..stats.compare import compare
from ..stats.stability import flags
from ..stats.views import VIEWS, View
from ..store import StoredRun
from . import charts
from .. import formatting as fmt
from .study import study_table

TEMPLATES = Path(__file__).parent / "templates"

# Layout constants (px): the bar chart shares a row with the time breakdown when there is one.
PAGE_W = 980
BARS_W_PAIRED = 600
BREAKDOWN_W = 370
PERCENTILES = ((50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"), (100.0, "max"))
PATH_LEGEND_COLOR = "#555"


@dataclass(frozen=True)
class Cell:
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
    cells: list[Cell]
    data: dict[str, str] = field(default_factory=dict)  # data-method/target/path for the filters
    cls: str = ""


@dataclass
class Table:
    columns: list[Column]
    rows: list[Row]


@dataclass
class StepSection:
    anchor: str
    step: str
    variant: str
    title: str
    description: str
    bars: Markup
    breakdown: Markup
    percentiles: Markup
    table: Table
    not_measured: list[str]


@dataclass
class SweepSection:
    """Steps that vary clients or rate, drawn as curves across those steps."""

    anchor: str
    title: str
    description: str
    throughput: Markup
    latency: Markup
    steps: list[tuple[str, str]]  # (step title, its anchor)


def render_html(stored: StoredRun, view: str = "median") -> str:
    """The whole report as one HTML document."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}: choose from {', '.join(VIEWS)}")
    v = VIEWS[view]
    results = analyse(stored)
    steps = by_step(results)
    methods = sorted({r.cell["method"] for r in results} | {m["method"] for m in stored.methods})
    colors = {m: charts.PALETTE[i % len(charts.PALETTE)] for i, m in enumerate(methods)}
    wheres = list(dict.fromkeys(r.where for r in results))
    dashes = {w: charts.DASHES[i % len(charts.DASHES)] for i, w in enumerate(wheres)}
    anchors = {(variant, step): f"step-{i + 1}" for i, (variant, step, _) in enumerate(steps)}
    return _template().render(
        run=stored.run,
        view=v,
        header=_header(stored, v),
        verdicts=_verdicts(steps, v, anchors),
        sweeps=_sweeps(results, anchors, colors, dashes),
        study=_study(stored, results),
        steps=[_step_section(variant, step, rs, v, anchors[(variant, step)], colors, dashes)
               for variant, step, rs in steps],
        filters=_filters(results),
        methods=_methods(stored),
        verification=_verification(steps),
        problems=_problems(results),
        environment=_pairs(_flatten(stored.run["environment"])),
        settings=_pairs(_flatten(stored.run["settings"])),
        targets=_targets(stored),
        css=Markup(_asset("report.css")),
        script=Markup(_asset("report.js")),
    )


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2")


@cache
def _asset(name: str) -> str:
    """CSS and script live beside the template and are inlined verbatim (ours, trusted)."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


# --- figures as the view states them ---------------------------------------------------------

def figure(view: View, value: float | None) -> str:
    """A view's figure in the terminal report's format: units/s, a duration, or seconds."""
    if value is None:
        return "—"
    if view.kind == "rate":
        return fmt.rate(value)
    return fmt.seconds(value) if view.name == "per1000" else fmt.duration(value)


def tick(view: View, value: float) -> str:
    """An axis label: the figure's format, and a bare 0 at the origin ("0 ns" reads oddly)."""
    return "0" if value == 0 else figure(view, value)


def spread_text(view: View, r: CellResult) -> str:
    spread = view.spread(r)
    return f"{figure(view, spread[0])}–{figure(view, spread[1])}" if spread else ""


def with_unit(view: View, r: CellResult) -> str:
    """'41,230 ops/s [40,100–42,000]', '12.3 µs per op [12.1 µs–12.9 µs]'."""
    text = figure(view, view.value(r))
    unit = view.unit(r)
    text += f" {unit}" if view.kind == "rate" or view.name == "per1000" else f" per {unit.split()[-1]}"
    spread = spread_text(view, r)
    return f"{text} [{spread}]" if spread else text


def _filter_data(r: CellResult) -> dict[str, str]:
    return {"method": r.cell["method"], "target": r.cell["target"], "path": r.cell["path"]}


def _step_title(variant: str, step: str) -> str:
    return f"{step} [{variant}]" if variant else step


# --- header ----------------------------------------------------------------------------------

def _header(stored: StoredRun, view: View) -> list[tuple[str, str]]:
    """(label, text) lines, as the terminal report's header says them."""
    run, settings, env = stored.run, stored.run["settings"], stored.run["environment"]
    lines = [("suite", f"{run['suite']} ({run['suite_source']})"),
             ("status", run["status"]),
             ("date", _when(run.get("started_at"), run.get("finished_at")))]
    lines.append(("targets", ", ".join(
        " ".join(filter(None, [t["target"], t["server_version"],
                               f"({'managed' if t['managed'] else 'external'})"])) for t in stored.targets)))
    for t in stored.targets:
        for key in ("latency proxy", "netem"):
            if key in t["settings"]:
                lines.append((f"{key} ({t['target']})", str(t["settings"][key])))
    power = env.get("power", {})
    idle = f" · cpuidle {power['cpuidle_driver']}" if isinstance(power, dict) and power.get("cpuidle_driver") else ""
    lines.append(("host", f"{env.get('hostname', '')} · {env.get('cpu')} · {env.get('cores')} cores · "
                          f"{env.get('memory_gib')} GiB · {env.get('os')} · kernel {env.get('kernel')}{idle}"))
    lines.append(("trials", f"{settings['trials']} per cell after {settings['warmup']} warmup, interleaved across "
                            f"methods{' · --quick sizes' if settings.get('quick') else ''}"))
    lines.append(("figure", view.rule))
    return lines


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


# --- verdict -----------------------------------------------------------------------------------

def _verdicts(steps, view: View, anchors) -> Table:
    """Per step and target, the best verified cell and whether it beats the runner-up there
    significantly. Per target, because which SQLite driver beats which PostgreSQL driver is
    rarely the question a step asks."""
    rows = []
    for variant, step, rs in steps:
        link = Cell(_step_title(variant, step), href=f"#{anchors[(variant, step)]}")
        targets = list(dict.fromkeys(r.cell["target"] for r in rs))
        for target in targets:
            ranked = [r for r in view.rank([r for r in rs if r.cell["target"] == target]) if r.ranked]
            data = {"target": target}
            if not ranked:
                rows.append(Row([link, Cell(target), Cell("no verified cell"), Cell(""), Cell("")], data))
                continue
            best = ranked[0]
            # The runner-up is the next *method*: the same driver on another path is not a rival.
            second = next((r for r in ranked if r.cell["method"] != best.cell["method"]), None)
            if second is not None:
                c = compare(best, second)
                runner_up = f"{second.cell['method']} @ {second.cell['path']}"
                verdict = (f"no significant difference from {runner_up}" if not c.significant
                           else f"{c.verdict} than {runner_up}")
                against = Cell(verdict, title=c.reason, cls="" if c.significant else "muted")
            else:
                against = Cell("the only verified method", cls="muted")
            rows.append(Row([link, Cell(target), Cell(f"{best.cell['method']} @ {best.cell['path']}"),
                             Cell(with_unit(view, best), sort=repr(view.value(best))), against], data))
    return Table([Column("step"), Column("target"), Column("fastest verified cell"), Column("figure", numeric=True),
                  Column("against the next method")], rows)


# --- a built-in study's figures beside today's ---------------------------------------------------

@dataclass
class StudySection:
    title: str
    table: Table
    sources: str
    note: str


def _study(stored: StoredRun, results: list[CellResult]) -> StudySection | None:
    study = study_table(stored, results)
    if study is None:
        return None
    columns = [Column("")] + [Column(label, numeric=True) for label in study.columns]
    rows = [Row([Cell(label, cls="published")] + [Cell(text) for text in texts], cls="published")
            for label, texts in study.published]
    rows += [Row([Cell(label)] + [Cell(text, sort=text) for text in texts],
                 {"method": label.split(" ", 1)[0]}) for label, texts in study.today]
    return StudySection(study.title, Table(columns, rows), study.sources, study.note)


# --- sweeps: a [[steps]] entry that varies clients or rate, across its steps ----------------------

def _sweeps(results: list[CellResult], anchors, colors, dashes) -> list[SweepSection]:
    """One section per sweep with at least two points on some curve: throughput vs clients
    (when clients vary) and p99 latency vs throughput. A curve is one method on one
    target/path with the sweep's other varied values (say policy=pooled) fixed."""
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for r in results:
        if r.cell.get("sweep") and r.ranked:
            groups.setdefault((r.cell["variant"], r.cell["sweep"]), []).append(r)
    sections = []
    for i, ((variant, sweep), rs) in enumerate(groups.items()):
        curves: dict[tuple, list[CellResult]] = {}
        for r in rs:
            curves.setdefault((r.cell["method"], r.where, r.cell.get("sweep_series") or ""), []).append(r)
        for points in curves.values():
            points.sort(key=lambda r: (r.cell["clients"] or 1, r.cell["rate"] or 0))
        if max(len(points) for points in curves.values()) < 2:
            continue
        kinds = {(k[1], k[2]) for k in curves}
        curve_dash = {k: charts.DASHES[j % len(charts.DASHES)] for j, k in enumerate(sorted(kinds))}

        def series(key, points, x, y, x_text, y_text):
            method, where, extra = key
            label = " · ".join(filter(None, [f"{method} @ {where}", extra]))
            return charts.Series(label, tuple(charts.Point(x(r), y(r), x_text(r), y_text(r)) for r in points),
                                 colors[method], curve_dash[(where, extra)], _filter_data(points[0]))

        legend = [charts.LegendItem(m, colors[m], "", {"method": m}) for m in sorted({k[0] for k in curves})]
        if len(kinds) > 1:
            legend += [charts.LegendItem(" · ".join(filter(None, k)), PATH_LEGEND_COLOR, curve_dash[k]) for k in sorted(kinds)]
        unit = rs[0].unit + "/s"
        clients = sorted({r.cell["clients"] or 1 for r in rs})
        throughput = charts.throughput_chart(
            sweep, [series(k, pts, lambda r: r.cell["clients"] or 1, lambda r: r.rate.median,
                           _sweep_point, lambda r: f"{fmt.rate(r.rate.median)} {unit}")
                    for k, pts in curves.items()], legend, clients, unit, PAGE_W, variant)
        with_p99 = {k: [r for r in pts if (r.percentiles or {}).get(99.0)] for k, pts in curves.items()}
        latency = charts.latency_throughput_chart(
            sweep, [series(k, pts, lambda r: r.rate.median, lambda r: r.percentiles[99.0],
                           lambda r: f"{_sweep_point(r)}: {fmt.rate(r.rate.median)} {unit}",
                           lambda r: f"p99 {fmt.duration(r.percentiles[99.0])}")
                    for k, pts in with_p99.items() if pts], legend, PAGE_W, variant, unit)
        steps = list(dict.fromkeys(r.cell["step"] for r in rs))
        sections.append(SweepSection(
            anchor=f"sweep-{i + 1}", title=_step_title(variant, sweep),
            description=f"{len(steps)} steps of one [[steps]] entry, varying "
                        f"{' and '.join(k for k in ('clients', 'rate') if len({r.cell[k] for r in rs}) > 1)}.",
            throughput=Markup(throughput), latency=Markup(latency),
            steps=[(s, anchors[(variant, s)]) for s in steps]))
    return sections


def _sweep_point(r: CellResult) -> str:
    clients = r.cell["clients"] or 1
    rate = f" at {fmt.rate(r.cell['rate'])}/s" if r.cell.get("rate") else ""
    return f"{clients} client{'s' if clients != 1 else ''}{rate}"


# --- one step ------------------------------------------------------------------------------------

def _step_section(variant: str, step: str, rs: list[CellResult], view: View, anchor: str,
                  colors: dict[str, str], dashes: dict[str, str]) -> StepSection:
    measured = view.rank([r for r in rs if r.measured])
    first = rs[0].cell
    mode = f", {first['mode']}" if first["mode"] else ""
    breakdown = _breakdown_chart(step, variant, measured)
    bars = charts.bar_chart(step, [_bar(r, view) for r in measured], _axis_title(view, measured),
                            partial(tick, view), BARS_W_PAIRED if breakdown else PAGE_W, variant)
    return StepSection(
        anchor=anchor, step=step, variant=variant, title=_step_title(variant, step),
        description=f"{first['kind']}{mode}: {first['description']}",
        bars=Markup(bars), breakdown=Markup(breakdown),
        percentiles=Markup(_percentile_chart(step, variant, measured, colors, dashes)),
        table=_step_table(measured, view),
        not_measured=[f"{r.label} ({r.cell['status']})" for r in rs if not r.measured],
    )


def _axis_title(view: View, measured: list[CellResult]) -> str:
    if not measured:
        return ""
    what = {"median": "median", "best": "best trial", "mean": "mean", "per1000": "median"}.get(view.name, view.name)
    spread = f" · whiskers: {view.spread_name}" if view.spread_name else ""
    better = "" if view.higher_is_better else " · shorter is better"
    return f"{view.unit(measured[0])} · {what}{spread}{better}"


def _bar(r: CellResult, view: View) -> charts.Bar:
    spread = view.spread(r)
    return charts.Bar(label=r.label, value=view.value(r), text=figure(view, view.value(r)),
                      low=spread[0] if spread else None, high=spread[1] if spread else None,
                      spread_text=spread_text(view, r), verified=r.ranked,
                      data=_filter_data(r) | {"status": r.cell["status"]})


def _breakdown_chart(step: str, variant: str, measured: list[CellResult]) -> str:
    """Only when the client's CPU per op is known for some cell of the step."""
    if not any(r.cpu_per_op_ns is not None for r in measured):
        return ""
    rows = [charts.Breakdown(r.label, fmt.duration(r.per_op_ns), tuple(time_parts(r)), _filter_data(r))
            for r in measured]
    return charts.breakdown_chart(step, rows, BREAKDOWN_W, variant)


def time_parts(r: CellResult) -> list[charts.Part]:
    """Shares of an operation's time, clamped as the terminal's breakdown bar clamps them
    (CPU clocks tick coarser than short operations, so CPU can exceed elapsed)."""
    if not r.per_op_ns or r.cpu_per_op_ns is None:
        return []
    client = min(1.0, r.cpu_per_op_ns / r.per_op_ns)
    parts = [charts.Part("client", client, fmt.duration(r.cpu_per_op_ns))]
    if r.server_cpu_per_op_ns is None:
        parts.append(charts.Part("rest", 1.0 - client, fmt.duration(r.wait_per_op_ns)))
        return parts
    server = min(1.0 - client, r.server_cpu_per_op_ns / r.per_op_ns)
    parts.append(charts.Part("server", server, fmt.duration(r.server_cpu_per_op_ns)))
    parts.append(charts.Part("wait", max(0.0, 1.0 - client - server), fmt.duration(r.wait_per_op_ns)))
    return parts


def _legend(measured: list[CellResult], colors, dashes) -> list[charts.LegendItem]:
    methods = sorted({r.cell["method"] for r in measured})
    items = [charts.LegendItem(m, colors[m], "", {"method": m}) for m in methods]
    wheres = list(dict.fromkeys(r.where for r in measured))
    if len(wheres) > 1:
        items += [charts.LegendItem(w, PATH_LEGEND_COLOR, dashes[w],
                                    {"target": w.split("/")[0], "path": w.split("/", 1)[1]}) for w in wheres]
    return items


def _percentile_chart(step: str, variant: str, measured: list[CellResult], colors, dashes) -> str:
    series = []
    for r in measured:
        p = r.percentiles or {}
        points = tuple(charts.Point(i, p[q], name, fmt.duration(p[q]))
                       for i, (q, name) in enumerate(PERCENTILES) if p.get(q))
        if points:
            series.append(charts.Series(r.label, points, colors[r.cell["method"]], dashes[r.where],
                                        _filter_data(r)))
    if not series:
        return ""
    return charts.percentile_chart(step, series, _legend(measured, colors, dashes),
                                   [name for _, name in PERCENTILES], PAGE_W, variant)


def _raw(value: float | None) -> str | None:
    """The unrounded number the table's script sorts on."""
    return None if value is None else repr(float(value))


def _step_table(measured: list[CellResult], view: View) -> Table:
    unit = view.unit(measured[0]) if measured else ""
    columns = [Column("#", True, "rank among verified cells"), Column("method"), Column("target"), Column("path")]
    columns += [Column(unit, True, view.rule)]
    columns += [Column(view.spread_name, True)] if view.spread_name else []
    columns += [Column("×\u00a0behind", True, "how many times behind the best verified cell (1.00× for the best)"),
                Column("p50", True), Column("p99", True), Column("p99.9", True), Column("max", True),
                Column("client CPU", True, "the client's CPU time (user + system) per operation"),
                Column("server CPU", True, "the serving backend's CPU time per operation"),
                Column("RT/op", True, "round trips per operation, counted by the latency proxy"),
                Column("trials", True), Column("CV", True, "coefficient of variation of the trials' figures"),
                Column("verified"), Column("flags")]
    best = next((r for r in measured if r.ranked), None)
    rows, rank = [], 0
    for r in measured:
        rank += r.ranked
        p = r.percentiles or {}
        spread = view.spread(r)
        behind = view.times_behind(r, best) if r.ranked and best else None
        status = r.cell["status"]
        cells = [Cell(str(rank) if r.ranked else "–", str(rank) if r.ranked else None),
                 Cell(r.cell["method"]), Cell(r.cell["target"]), Cell(r.cell["path"])]
        cells += [Cell(figure(view, view.value(r)), _raw(view.value(r)))]
        cells += [Cell(spread_text(view, r), _raw(spread[0]) if spread else None)] if view.spread_name else []
        cells += [Cell(fmt.ratio(behind) if behind is not None else "", _raw(behind))]
        cells += [Cell(fmt.duration(p.get(q)), _raw(p.get(q))) for q in (50.0, 99.0, 99.9, 100.0)]
        cells += [Cell(fmt.duration(r.cpu_per_op_ns), _raw(r.cpu_per_op_ns)),
                  Cell(fmt.duration(r.server_cpu_per_op_ns), _raw(r.server_cpu_per_op_ns)),
                  Cell(f"{r.round_trips_per_op:.3g}" if r.round_trips_per_op is not None else "—",
                       _raw(r.round_trips_per_op)),
                  Cell(str(r.rate.n), str(r.rate.n)),
                  Cell(f"{r.rate.cv:.1%}", _raw(r.rate.cv)),
                  Cell(status, status, r.cell.get("message") or None, f"status status-{status}", pill=True),
                  _flags_cell(r)]
        rows.append(Row(cells, _filter_data(r), "" if r.ranked else "unverified"))
    return Table(columns, rows)


def _flags_cell(r: CellResult) -> Cell:
    found = flags(r)
    kinds = " ".join(f.kind for f in found)
    return Cell(kinds, kinds, cls="flags", badges=tuple((f.kind, f.text) for f in found))


# --- methods, verification, environment ------------------------------------------------------------

@dataclass(frozen=True)
class MethodInfo:
    name: str
    summary: list[tuple[str, str]]
    settings: list[tuple[str, str]]
    capabilities: list[tuple[str, str]]


def _methods(stored: StoredRun) -> list[MethodInfo]:
    return [MethodInfo(m["method"],
                       [("language", m.get("language") or ""), ("runtime", m.get("runtime") or ""),
                        ("driver", m.get("driver") or ""), ("driver version", m.get("driver_version") or "")],
                       _pairs(_flatten(m.get("settings") or {})), _pairs(_flatten(m.get("capabilities") or {})))
            for m in stored.methods]


def _verification(steps) -> Table:
    """Methods × steps, each cell coloured by its verification status."""
    columns = [Column("method"), Column("target/path")] + [
        Column(_step_title(variant, step)) for variant, step, _ in steps]
    grid: dict[tuple, dict] = {}
    for variant, step, rs in steps:
        for r in rs:
            key = (r.cell["method"], r.cell["target"], r.cell["path"])
            grid.setdefault(key, {})[(variant, step)] = r
    rows = []
    for (method, target, path), cells in sorted(grid.items()):
        row = [Cell(method), Cell(f"{target}/{path}")]
        for variant, step, _ in steps:
            r = cells.get((variant, step))
            if r is None:
                row.append(Cell("", cls="status"))
                continue
            status = r.cell["status"]
            title = f"{_step_title(variant, step)} · {r.label}: {status}" + (
                f" — {r.cell['message']}" if r.cell.get("message") else "")
            row.append(Cell(STATUS_MARK.get(status, status), status, title, f"status status-{status}"))
        rows.append(Row(row, {"method": method, "target": target, "path": path}))
    return Table(columns, rows)


STATUS_MARK = {"ok": "✓", "mismatch": "≠", "unsupported": "n/a", "error": "error", "timeout": "timeout"}


def _problems(results: list[CellResult]) -> Table:
    rows = [Row([Cell(r.cell["method"]), Cell(r.where), Cell(_step_title(r.cell["variant"], r.cell["step"])),
                 Cell(r.cell["status"], cls=f"status status-{r.cell['status']}", pill=True),
                 Cell(r.cell.get("message") or "", cls="message")], _filter_data(r))
            for r in results if r.cell["status"] != "ok"]
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
    return [TargetInfo(t["target"],
                       [("DBMS", t.get("dbms") or ""), ("server version", t.get("server_version") or "—"),
                        ("server", "managed by accessbench" if t.get("managed") else "external")]
                       + _pairs(_flatten(t.get("settings") or {})))
            for t in stored.targets]


@dataclass(frozen=True)
class FilterGroup:
    key: str          # the data-* attribute it filters on
    title: str
    values: list[str]


def _filters(results: list[CellResult]) -> list[FilterGroup]:
    def values(key):
        return sorted({r.cell[key] for r in results})
    return [FilterGroup("target", "Targets", values("target")), FilterGroup("path", "Paths", values("path")),
            FilterGroup("method", "Methods", values("method"))]
