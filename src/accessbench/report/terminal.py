"""The terminal report of a run: per step, methods ranked by median with a 95% CI, and the
methods × steps table in seconds per 1,000 units (study S2's form). It lays out the report
model (report/model.py) and computes no figure of its own. Returns text; rich tables, colour
only when asked (the CLI asks when stdout is a terminal)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..stats import model
from ..stats.cells import analyse
from ..store import StoredRun
from .. import formatting as fmt
from .figures import step_title
from .model import LAYER_COST, CellRow, Report, StepReport, build, standings

_STATUS_STYLE = {"ok": "green", "mismatch": "bold red", "unsupported": "dim", "error": "red", "timeout": "red"}


PIPE_WIDTH = fmt.PIPE_WIDTH
WIDE = 1000
GAP = 2  # between columns: one space of padding and the box's blank divider


def render(stored: StoredRun, color: bool = False, width: int | None = None, view: str = "median",
           wide: bool = False) -> str:
    """The whole report. ``view`` picks the rule for each step's figure: median (default),
    best (S1), mean (S3) or per1000 (S2's table alone). It fits ``width`` columns (a pipe's
    default without one): a step table keeps its essential columns whole and adds the others
    as width allows, or all of them with ``wide``."""
    return render_report(build(stored, view), color, width, wide)


def _text_console(color: bool, width: int) -> tuple[io.StringIO, Console]:
    """A console that writes a report's text (with colour codes or without) ``width`` wide."""
    out = io.StringIO()
    return out, Console(file=out, force_terminal=color, no_color=not color, width=width, highlight=False,
                        soft_wrap=False)


def render_report(report: Report, color: bool = False, width: int | None = None, wide: bool = False) -> str:
    width = width or PIPE_WIDTH
    # --wide: tables as wide as their columns, whatever the terminal (it may scroll or wrap)
    out, console = _text_console(color, WIDE if wide else width)
    view = report.view.name
    _header(console, report)
    for step in report.steps:
        if view == "median":
            console.print(_step_table(report, step, width, wide))
        elif view != "per1000":
            console.print(_view_table(report, step))
    for table in _per_1000_tables(report, width):
        console.print(table)
    if view == "per1000":
        return out.getvalue()
    for table in (_predictions_table(report), *_size_tables(report), *_transfer_tables(report), _study_table(report),
                  *_pair_tables(report), _cold_start_table(report)):
        if table is not None:
            console.print(table)
    _not_measured(console, report)
    console.print(render_flags(report))
    console.print(render_summary(report))
    return out.getvalue()


def _header(console: Console, report: Report) -> None:
    console.print(Text(f"accessbench run {report.header.run_id}", style="bold"))
    for label, text in report.header.lines:
        console.print(f"{label}: {text}", markup=False)
    if report.header.note:
        console.print(Text(f"note: {report.header.note}", style="yellow"))
    console.print()


def _table(title: str, columns: list[tuple[str, str]], **caption) -> Table:
    table = Table(title=escape(title), title_justify="left", box=box.SIMPLE_HEAD, title_style="bold",
                  caption_justify="left", padding=(0, 1, 0, 0), pad_edge=False, **caption)
    for name, justify in columns:  # names may wrap, numbers never (as in a step's table)
        table.add_column(name, justify=justify, no_wrap=justify != "left", overflow="fold")
    return table


@dataclass
class _Column:
    """A column a step table may show: its cells, whether it is always shown, and whether
    its text may wrap (names may; numbers never)."""

    name: str
    justify: str
    cells: list
    essential: bool = False
    names: bool = False

    @property
    def natural(self) -> int:
        return max(len(self.name), *(len(c.plain if isinstance(c, Text) else c) for c in self.cells), 1)


def _fit(columns: list[_Column], width: int, wide: bool) -> Table:
    """The columns that fit: every essential one, then the others in the order given while
    width allows (all with ``wide``); if the essential ones alone are too wide, the names
    wrap, never the numbers. Shown in their canonical order."""
    def span(cols):
        return sum(c.natural for c in cols) + GAP * (len(cols) - 1) + 2
    chosen = [c for c in columns if c.essential]
    for c in columns:
        if not c.essential and (wide or span(chosen + [c]) <= width):
            chosen.append(c)
    chosen.sort(key=columns.index)
    excess = span(chosen) - width
    table = Table(box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", caption_justify="left",
                  padding=(0, 1, 0, 0), pad_edge=False)
    flexible = [c for c in chosen if c.names]
    for c in chosen:
        if c.names and excess > 0 and not wide:  # share the excess among the name columns, each at least 8
            cut = min(excess, max(0, c.natural - 8), -(-excess // len(flexible)))
            excess -= cut
            table.add_column(c.name, justify=c.justify, overflow="fold", width=c.natural - cut)
        else:
            table.add_column(c.name, justify=c.justify, no_wrap=True, min_width=c.natural)
    for i in range(len(columns[0].cells)):
        table.add_row(*(c.cells[i] for c in chosen))
    return table


def _status(row: CellRow) -> Text:
    return Text(row.status, style=_STATUS_STYLE.get(row.status, ""))


def _rank(row: CellRow) -> str:
    return str(row.rank) if row.rank is not None else "-"


# Step units as a narrow column heads them: "connections/s" would widen a column of 5 digits.
_SHORT_UNITS = {"connections/s": "conn/s"}


def short_unit(unit: str) -> str:
    return _SHORT_UNITS.get(unit, unit)


def _step_table(report: Report, step: StepReport, width: int = PIPE_WIDTH, wide: bool = False) -> Table:
    """The default view's table, ranked by median: the essential columns always (rank, names,
    figure, CI, × vs best, p99, verified), the rest as the width allows, in this order of
    priority: p50, the clients' rates and lateness under load, CV, client and server CPU,
    round trips and bytes per row (where counted), the worker's peak memory, the time breakdown."""
    rows = step.rows
    column = lambda name, justify, cells, **kw: _Column(name, justify, list(cells), **kw)  # noqa: E731
    unit = step.unit if wide else short_unit(step.unit)
    columns = [
        column("#", "right", (_rank(r) for r in rows), essential=True),
        column("method", "left", (r.method_text for r in rows), essential=True, names=True),
        column("target/path", "left", (r.result.where for r in rows), essential=True, names=True),
        column(unit, "right", (r.figure.text for r in rows), essential=True),
        column("95% CI", "right", (r.spread_text for r in rows), essential=True),
        column("vs best", "right", ((("≈" if r.alike else "") + r.behind.text) if r.behind else "" for r in rows),
               essential=True),
        column("p50", "right", (r.percentiles[50.0].text for r in rows)),
        column("p99", "right", (r.percentiles[99.0].text for r in rows), essential=True),
        *([column("per client", "right", (r.per_client for r in rows)),
           column("late", "right", (r.late for r in rows))] if step.loaded else []),
        column("±CI", "right", (r.half_width.text for r in rows)),
        column("CV", "right", (r.cv.text for r in rows)),
        column("client CPU/op", "right", (r.client_cpu.text for r in rows)),
        column("server CPU/op", "right", (r.server_cpu.text for r in rows)),
        *([column("RT/op", "right", (r.round_trips.text for r in rows))]
          if wide or any(r.round_trips.value is not None for r in rows) else []),
        *([column("B/row", "right", (r.bytes_per_row.text for r in rows))]
          if wide or any(r.bytes_per_row.value is not None for r in rows) else []),
        column("peak memory", "right", (r.memory.text for r in rows)),
        column("time: client▕server▕wait", "left", (_breakdown(r) for r in rows)),
        column("verified", "left", (_status(r) for r in rows), essential=True),
    ]
    table = _fit(columns, width, wide)
    table.title = escape(f"{step.title} — {step.heading}")
    notes = []
    if any(row.alike for row in step.rows):
        notes.append(f"≈ no significant difference from the best (Mann-Whitney p ≥ {report.alpha:g} "
                     f"or within {report.noise:.0%})")
    if step.not_measured:
        notes.append("not measured: " + ", ".join(f"{r.label} ({r.cell.status})" for r in step.not_measured))
    if step.layer_costs:
        notes.append(f"{LAYER_COST}: " + "; ".join(c.text for c in step.layer_costs))
    table.caption = " · ".join(notes) or None
    return table


def _view_table(report: Report, step: StepReport) -> Table:
    """A step's cells ranked by one of the studies' rules."""
    view = report.view
    table = _table(f"{step.title} — {step.kind}: {step.unit}, {view.rule}", [
        ("#", "right"), ("method", "left"), ("target/path", "left"), (view.name, "right"),
        *([(view.spread_name, "right")] if view.spread_name else []),
        ("vs best", "right"), ("trials", "right"), ("verified", "left")])
    for row in step.rows:
        table.add_row(_rank(row), row.method_text, row.result.where, row.figure.text,
                      *([row.spread_text] if view.spread_name else []), row.behind.text if row.behind else "",
                      str(row.trials), _status(row))
    return table


_BAR = 16
_BAR_CHARS = {"client": ("█", "cyan"), "server": ("▓", "magenta"), "wait": ("░", "dim")}


def _breakdown(row: CellRow) -> Text:
    """The time breakdown as a bar: client CPU, server CPU, and the wait; where the server's
    CPU is unknown, only the client's part is drawn."""
    bar, used = Text(), 0
    for share in row.shares:
        if share.kind not in _BAR_CHARS:
            continue
        char, style = _BAR_CHARS[share.kind]
        n = _BAR - used if share.kind == "wait" else round(share.share * _BAR)
        bar += Text(char * max(0, n), style=style)
        used += n
    return bar


def _predictions_table(report: Report) -> Table | None:
    if not report.predictions:
        return None
    table = _table("Round-trip model: per-op time predicted from tcp vs measured through the latency proxy", [
        ("method", "left"), ("step", "left"), ("path", "left"), ("tcp /op", "right"), ("RT/op", "right"),
        ("predicted /op", "right"), ("measured /op", "right"), ("error", "right")],
        caption="predicted = per-op on tcp + round trips/op × 2 × delay; error = (predicted − measured) / measured")
    for p in report.predictions:
        table.add_row(p.base.cell.method, p.base.cell.step, p.measured.cell.path, fmt.duration(p.base.per_op_ns),
                      f"{p.round_trips_per_op:.3g}", fmt.duration(p.predicted_ns), fmt.duration(p.measured.per_op_ns),
                      f"{p.error:+.1%}")
    return table


def render_predictions(stored: StoredRun, latency_us: float, base_path: str = "tcp", color: bool = False,
                       width: int | None = None) -> str | None:
    """`accessbench predict`: every cell measured on the base path, at another latency; None
    when the run has no cell on the base path whose round trips were counted."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 200, highlight=False)
    rows = model.predict(analyse(stored), latency_us, base_path)
    if not rows:
        return None
    table = Table(title=f"run {stored.run.id}: per-op time predicted at {latency_us:g} µs one way "
                        f"({2 * latency_us:g} µs round trip) from {base_path}",
                  title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for name, justify in [("method", "left"), ("target", "left"), ("step", "left"), (f"{base_path} /op", "right"),
                          ("RT/op", "right"), ("predicted /op", "right"), ("predicted ops/s", "right"),
                          ("measured there", "right"), ("error", "right")]:
        table.add_column(name, justify=justify, no_wrap=True)
    for p in sorted(rows, key=lambda p: (p.base.cell.step_index, p.predicted_ns)):
        table.add_row(p.base.cell.method, p.base.cell.target, p.base.cell.step, fmt.duration(p.base.per_op_ns),
                      f"{p.round_trips_per_op:.3g}", fmt.duration(p.predicted_ns), fmt.rate(1e9 / p.predicted_ns),
                      fmt.duration(p.measured.per_op_ns) if p.measured else "", f"{p.error:+.1%}" if p.error is not None else "")
    console.print(table)
    return out.getvalue()


def _per_1000_tables(report: Report, width: int) -> list[Table]:
    """Methods × steps in seconds per 1,000 units, split into as many tables as the width
    needs: each repeats the method and target/path and takes the next steps that fit."""
    matrix = report.matrix
    names = [_Column("method", "left", [m for m, _, _ in matrix.rows]),
             _Column("target/path", "left", [w for _, w, _ in matrix.rows])]
    steps = [_Column(escape(title), "right", [
        "" if c is None else Text(c.text, style=("" if c.ranked else "red") if c.measured else "dim")
        for _, _, cells in matrix.rows for c in [cells[i]]]) for i, title in enumerate(matrix.steps)]
    used = sum(c.natural for c in names) + GAP + 2
    chunks: list[list[_Column]] = [[]]
    for c in steps:
        if chunks[-1] and used + sum(x.natural + GAP for x in chunks[-1]) + GAP + c.natural > width:
            chunks.append([])
        chunks[-1].append(c)
    tables = []
    for k, chunk in enumerate(chunks):
        part = f" ({k + 1} of {len(chunks)})" if len(chunks) > 1 else ""
        table = _table(f"Seconds per 1,000 units (median; connections, rows or operations as per step){part}",
                       [(c.name, c.justify) for c in names + chunk])
        for i in range(len(matrix.rows)):
            table.add_row(*(c.cells[i] for c in names + chunk))
        tables.append(table)
    tables[-1].caption = "; ".join(matrix.legend) or None
    return tables


def _study_table(report: Report) -> Table | None:
    """A built-in study's published figures, and the same figures from this run."""
    study = report.study
    if study is None:
        return None
    caption = f"today's figures: {study.sources}" + (f"\n{study.note}" if study.note else "")
    table = _table(study.title, [], caption=caption)
    table.add_column("", overflow="fold", min_width=24)
    for label in study.columns:
        table.add_column(label, justify="right")
    for label, texts in study.published:
        table.add_row(Text(label), *texts, style="bold")
    for label, texts in study.today:
        table.add_row(Text(label), *texts)  # Text: "[engine=…]" is not rich markup
    return table


def _pair_tables(report: Report) -> list[Table]:
    """Study S3's table per pair: each type's execution time on both sides, Diff, R%, Diff%."""
    tables = []
    for pair in report.pairs:
        candidate, reference = pair.names
        caption = "\n".join(filter(None, [pair.tally, pair.published_tally,
                                          "each side: mean of the trials (min–max), then the median [95% CI]; "
                                          "≈: no significant difference"]))
        table = _table(pair.title, [("type", "left"), (reference, "right"), (candidate, "right"), ("Diff", "right"),
                                    ("R%", "right"), ("Diff%", "right")], caption=caption)
        table.add_column("study R%", justify="right")
        table.add_column(f"{candidate} vs {reference}", overflow="fold", min_width=24)
        for row in pair.rows:
            table.add_row(row.label, "\n".join(row.reference), "\n".join(row.candidate), row.diff,
                          f"{row.r_percent:.1f}%", f"{row.r_percent - 100:+.1f}%", row.published_r, Text(row.verdict))
        tables.append(table)
    return tables


def _size_tables(report: Report) -> list[Table]:
    """A result-size sweep per target: rows/s of each curve at each size, the crossover named."""
    tables = []
    for sweep in report.sizes:
        sizes = sorted({round(x) for c in sweep.curves for x, _ in c.points})
        title = f"Result size: {step_title(sweep.variant, sweep.sweep)} on {sweep.target}, rows/s (median)"
        table = _table(title, [], caption="\n".join(sweep.verdicts))
        table.add_column("", overflow="fold", min_width=24)
        for size in sizes:
            table.add_column(f"{size:,} row{'s' if size != 1 else ''}", justify="right")
        for curve in sweep.curves:
            at = {round(x): pt for x, pt in curve.points}
            table.add_row(Text(curve.label), *(fmt.rate(at[s].row_rate.median) if s in at else "" for s in sizes))
        tables.append(table)
    return tables


def _transfer_tables(report: Report) -> list[Table]:
    """Each scan read beside the wire's floor (time per read, × the floor, per path), each TLS or
    compressed cell beside its plain twin (what the attribute adds), each load by strategy, and
    where each sampled page request's time went (Report.titled)."""
    return titled_tables(report.titled)


def titled_tables(titled: list) -> list[Table]:
    """Tables that carry their own title, columns, cells and caption (a transfer, twin or
    association table), as the terminal shows them."""
    tables = []
    for t in titled:
        table = _table(t.title, [(name, "left" if i < t.numeric_from else "right") for i, name in enumerate(t.columns)],
                       caption=t.caption)
        for row in t.rows:
            table.add_row(*t.cells(row))
        tables.append(table)
    return tables


def _cold_start_table(report: Report) -> Table | None:
    """JIT runtimes: the first operation before any warm-up, against the warm median."""
    if not report.cold_starts:
        return None
    table = _table("Cold start (JIT runtimes): first operation of each cell vs warm p50", [
        ("method", "left"), ("target/path", "left"), ("step", "left"), ("cold 1st op", "right"),
        ("warm p50", "right"), ("cold/warm", "right"), ("warmups", "right")])
    for c in report.cold_starts:
        table.add_row(c.result.cell.method, c.result.where, c.result.cell.step, c.cold.text, c.warm.text,
                      c.ratio, c.warmups)
    return table


def _not_measured(console: Console, report: Report) -> None:
    if not report.not_measured:
        return
    console.print(Text("Not measured", style="bold"))
    for n in report.not_measured:
        console.print(f"  {n.where} · {n.status} · {', '.join(n.steps)}: {n.message}", markup=False)


_FLAGS_SHOWN = 8


def render_flags(report: Report) -> Text:
    """pyperf-style warnings, grouped by kind: a few cells each, the count of the rest."""
    text = Text()
    if not report.warnings:
        return text
    text.append("Warnings", style="bold yellow")
    text.append(" — the figures stand, but read these cells with care\n")
    for group in report.warnings:
        found = group.cells
        text.append(f"  {group.title}: {len(found)} cell{'s' if len(found) > 1 else ''}\n", style="yellow")
        if group.summary:
            text.append(f"    {group.summary}\n")
            continue
        for r, f in found[:_FLAGS_SHOWN]:
            text.append(f"    {r.label} · {r.cell.step}: {f.text}\n")
        if len(found) > _FLAGS_SHOWN:
            text.append(f"    … and {len(found) - _FLAGS_SHOWN} more (the HTML report lists every cell's flags)\n")
    return text


def render_summary(report: Report) -> Group:
    """The closing verdict, as hyperfine ends: per step and target, the fastest verified cell
    and how it stands against the next method (significance as the HTML verdict says it). A
    long verdict wraps under itself, not under the target."""
    if not report.verdicts:
        return Group()
    parts: list = [Text.assemble(("Summary", "bold"), (
        f" — per step and target, the fastest verified cell against the next method (significant when "
        f"Mann-Whitney p < {report.alpha:g} and the ratio's 95% CI lies outside ±{report.noise:.0%})"))]
    width = max(len(v.target) for v in report.verdicts)
    judged = [v for v in report.verdicts if v.reason != "refused"]
    for step in [s for s in report.steps if any(v.step is s for v in judged)]:
        parts.append(Text(f"  {step.title}", style="bold"))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, min_width=4 + width)
        grid.add_column()
        for v in (v for v in judged if v.step is step):
            if v.best is None:
                grid.add_row(f"    {v.target}", Text(v.against, style="dim"))
                continue
            grid.add_row(f"    {v.target}", Text.assemble(
                (f"{v.best.cell.method} @ {v.best.cell.path}", "bold green"), f" {v.with_unit}: ",
                (v.against, "" if v.significant else "dim")))
        parts.append(grid)
    refusals: dict[tuple[str, str], list[str]] = {}
    for v in report.verdicts:
        if v.reason == "refused":
            refusals.setdefault((v.target, v.against), []).append(v.step.title)
    for (target, why), steps in refusals.items():  # by design, not a failure: once per target
        parts.append(Text(f"  {target} refuses {', '.join(steps)} by design — {why}", style="dim"))
    return Group(*parts, Text())


BRIEF_STANDINGS = 4  # rows of each target's ranking a run ends with


def render_brief(stored: StoredRun, color: bool = False, width: int | None = None) -> str:
    """What a run ends with, in about two screens: the verdict per step and target, and a
    compact ranking of the methods per target; every table is one command away
    (``show RUN --full``), every figure in the HTML report."""
    report = build(stored)
    out, console = _text_console(color, width or PIPE_WIDTH)
    _header(console, report)
    console.print(render_summary(report))
    ranked = standings(report)
    if ranked:
        table = _table("Ranking per target — each method on its path, by how far it stood behind the target's best "
                       f"cell of each step (geometric mean over the steps it was ranked in; the first {BRIEF_STANDINGS} "
                       "of each target)",
                       [("target", "left"), ("#", "right"), ("method @ path", "left"), ("steps", "right"),
                        ("vs best", "right"), ("best in", "right")])
        for target in dict.fromkeys(s.target for s in ranked):
            mine = [s for s in ranked if s.target == target]
            for i, standing in enumerate(mine[:BRIEF_STANDINGS], 1):
                table.add_row(target if i == 1 else "", str(i), standing.label, str(standing.steps),
                              fmt.ratio(standing.behind), str(standing.first) if standing.first else "",
                              end_section=i == min(len(mine), BRIEF_STANDINGS))
        console.print(table)
    warned = len({id(r) for group in report.warnings for r, _ in group.cells})
    missing = sum(len(n.steps) for n in report.not_measured)
    more = [f"{warned} cell{'s' if warned != 1 else ''} with warnings" if warned else "",
            f"{missing} cells not measured" if missing else ""]
    console.print(Text.assemble(
        ("The rest", "bold"), f"{' (' + ', '.join(filter(None, more)) + ')' if any(more) else ''}: every step's table "
        f"with percentiles, CPU and round trips, the warnings and why a cell was not measured — "
        f"accessbench show {report.header.run_id} --full; every figure and chart in the HTML report."))
    return out.getvalue()
