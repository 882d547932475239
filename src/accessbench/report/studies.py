"""The studies report of `accessbench reproduce`: each claim of the five studies as a row — the
claim, the published figure, today's figure with its CI, the verdict and the rule it was judged
by — as terminal text and as a self-contained HTML page."""

from __future__ import annotations

import io
import os
from collections import Counter
from datetime import datetime, timezone

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import formatting as fmt
from ..studies import RECIPES
from .charts import Breakdown, LegendItem, Point, RatioRow, Series, breakdown_chart, floor_chart, look, ratio_chart
from .model import Share
from .requests import RequestTable, request_tables
from .study import StudyRows, study_table
from .markdown import titled_markdown
from .terminal import titled_tables
from .transfer import GridTable, TransferTable, grid_tables, gridded, transfer_tables
from ..studies.claims import NOT_MEASURED, NOT_REPRODUCED, REPRODUCED, REVERSED, UNTESTABLE, Finding, StudyRun

STYLES = {REPRODUCED: "green", NOT_REPRODUCED: "yellow", REVERSED: "red", UNTESTABLE: "dim", NOT_MEASURED: "dim"}


def tally(findings: list[Finding]) -> str:
    counts = Counter(f.verdict.split(" in ")[0] if f.verdict.startswith(REPRODUCED + " in") else f.verdict
                     for f in findings)
    order = [REPRODUCED, NOT_REPRODUCED, REVERSED, UNTESTABLE, NOT_MEASURED]
    return " · ".join(f"{counts[v]} {v}" for v in order if counts[v]) + f" (of {len(findings)} claims)"


def heading(findings: list[Finding]) -> str:
    """What the table holds: the five seed studies, or the studies it has (``CONNECTIONS``)."""
    held = list(dict.fromkeys(f.study for f in findings))
    seeds = [r.study for r in RECIPES.values() if r.in_all]
    if set(seeds) <= set(held) and len(held) == len(seeds):
        return "The five studies today"
    return " and ".join(h.upper() for h in held) + " today" if held else "The studies today"


def _runs_line(runs: dict[str, StudyRun]) -> str:
    return "runs: " + ", ".join(f"{study} {run.run_id}" for study, run in sorted(runs.items())) if runs else "runs: none"


def render_studies(findings: list[Finding], runs: dict[str, StudyRun], color: bool = False,
                   width: int | None = None) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or fmt.PIPE_WIDTH, highlight=False,
                      soft_wrap=False)
    table = Table(title=f"{heading(findings)}: each claim, the published figure, today's, and a verdict",
                  title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, caption_justify="left",
                  caption=f"{tally(findings)}\n{_runs_line(runs)}\nverdict rules: accessbench/studies/claims.py "
                          "(each row's rule in the HTML studies report)")
    for name, justify, ratio in (("study", "left", 0), ("claim", "left", 4), ("published", "left", 2),
                                 ("today [95% CI]", "left", 3), ("verdict", "left", 0)):
        table.add_column(name, justify=justify, ratio=ratio or None, no_wrap=not ratio, overflow="fold")
    for f in findings:
        judged_on = f"\non {f.where}" if f.where and f.today else ""  # which target and path (and method) it was judged on
        table.add_row(f.study.upper(), Text(f.claim), Text(f.published), Text.assemble(_today(f), (judged_on, "dim")),
                      Text(f.verdict, style=STYLES.get(f.verdict.split(" in ")[0], "")))
    console.print(table)
    for study, tables in study_tables(runs):
        beside = RECIPES[study].beside
        what = ("each read beside the wire's floor" if any(isinstance(t, (TransferTable, GridTable)) for t in tables)
                else "each test's requests/s and where each request's time went"
                if any(isinstance(t, RequestTable) for t in tables) else "its figures today")
        console.print(Text(f"\n{study.upper()}: {what}" + (f" — beside {beside}" if beside else ""), style="bold"))
        for t in titled_tables(tables):
            console.print()
            console.print(t)
    return out.getvalue()


def grid_chart(grid: GridTable, width: float = 960) -> str:
    """The grid as lines: × the wire's floor against the delay, one line per method and bandwidth."""
    lines: dict[str, list[Point]] = {}
    for row in grid.rows:
        for bandwidth, reading in row.by_bandwidth.items():
            if reading.floor is not None and reading.floor.value and reading.status == "ok":
                label = f"{row.method} at {fmt.link(bandwidth)}"
                lines.setdefault(label, []).append(Point(row.delay_us, reading.floor.value,
                                                         fmt.duration(row.delay_us * 1e3), reading.floor.text))
    series = [Series(label, tuple(sorted(points, key=lambda p: p.x)), *look(i)) for i, (label, points) in enumerate(lines.items())]
    legend = [LegendItem(s.label, s.color, s.dash) for s in series]
    delays = sorted({r.delay_us for r in grid.rows})
    return floor_chart(f"{grid.step} on {grid.target}", series, legend, delays, width)


def request_chart(table: RequestTable, width: float = 960) -> str:
    """Each cell's round trip as bars of its parts (database, page, outside), labelled."""
    rows = []
    for row in table.rows:
        total = row.round_trip.value
        known = [(kind, f) for kind, f in (("database", row.db), ("page", row.page), ("outside", row.outside))
                 if f.value is not None]
        if not total or not known:
            continue
        rows.append(Breakdown(f"{row.method} · {row.step}", row.round_trip.text,
                              tuple(Share(kind, f.value / total, f.text) for kind, f in known)))
    return breakdown_chart(table.title, rows, width, labelled=True, per="per request")


def study_tables(runs: dict[str, StudyRun]) -> list[tuple[str, list]]:
    """Each study's own tables, in the recipes' order: its suite's study table where its recipe
    asks (tfb's requests/s per test and their ratios); its reads beside the wire's floor, by path, and (a grid of proxied paths) as the paper's grid
    of delay × bandwidth per target; its sampled page requests, where their time went."""
    found = []
    for study, recipe in RECIPES.items():
        run = runs.get(study)
        if run is None:
            continue
        own = study_table(run.suite, run.results) if recipe.suite_table and run.suite is not None else None
        grids = grid_tables(run.results)
        # where the grid shows the proxied paths, the path-by-path table keeps the others (loopback, in process)
        tables = [*([StudyRows(own)] if own else []),
                  *transfer_tables([r for r in run.results if not (grids and gridded(r.cell.path))]), *grids,
                  *request_tables(run.results)]
        if tables:
            found.append((study, tables))
    return found


def _today(f: Finding) -> str:
    """Today's figure, or (unjudged) why there is none."""
    if f.verdict == NOT_MEASURED and f.where:
        return f.where
    return f.today or (f.rule if f.verdict in (UNTESTABLE, NOT_MEASURED) else "")


def render_studies_markdown(findings: list[Finding], runs: dict[str, StudyRun] | None = None) -> str:
    """The claims table as Markdown (a README's Studies table, `reproduce --markdown`), then each
    study's own tables (the hostage grid, where tfb's requests went) under headings of their own."""
    cell = lambda text: text.replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| study | claim | published | today [95% CI] | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {f.study.upper()} | {cell(f.claim)} | {cell(f.published)} | {cell(_today(f))} | {f.verdict} |"
              for f in findings]
    wanted = {f.study for f in findings}
    for study, tables in study_tables(runs or {}):
        if study in wanted:
            lines += titled_markdown(tables, level="####")
    return "\n".join(lines) + "\n"


def _short(claim: str, most: int = 60) -> str:
    return claim if len(claim) <= most else claim[:most - 1].rstrip() + "…"


def write_studies_html(findings: list[Finding], runs: dict[str, StudyRun], directory: str) -> str:
    from .assets import asset, template

    studies = [(r.study.upper(), r.title, runs.get(r.study), [f for f in findings if f.study == r.study])
               for r in RECIPES.values()]
    ratios = [RatioRow(f"{f.study.upper()} · {_short(f.claim)}", *f.ratio, f.published_ratio, f.verdict)
              for f in findings if f.ratio is not None]
    from .html import titled_sections

    found = study_tables(runs)
    tables = {study.upper(): titled_sections(t) for study, t in found}
    charts = {study.upper(): [c for t in ts if (c := grid_chart(t) if isinstance(t, GridTable) else
                                                request_chart(t) if isinstance(t, RequestTable) else "")]
              for study, ts in found}
    html = template("studies.html.j2").render(
        studies=[(*s, tally(s[3]), tables.get(s[0], []), charts.get(s[0], []), RECIPES[s[0].lower()].beside)
                 for s in studies],
        tally=tally(findings), css=asset("report.css"),
        heading=heading(findings),
        chart=ratio_chart(ratios, 960),
        made=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        css_class={v: f"verdict-{v.replace(' ', '-')}" for v in STYLES})
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "accessbench-studies.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(html)
    return path
