"""`accessbench history`: each cell's figure over the store's runs, oldest first, with the
significant changes marked at the run where each happened."""

from __future__ import annotations

import hashlib
import io
from datetime import datetime, timezone

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from typing import TYPE_CHECKING

from .. import formatting as fmt
from . import charts

if TYPE_CHECKING:  # the run's report links here without loading the statistics
    from ..stats.history import Point, Series
    from ..store.model import Cell, Run

CHART_W = 980


def _figure(point: Point) -> str:
    rate = point.result.rate
    return fmt.rate(rate.median) + (f" [{fmt.rate(rate.ci_low)}–{fmt.rate(rate.ci_high)}]" if rate.n > 1 else "")


def _change(point: Point) -> Text:
    c = point.change
    if c is None:
        return Text("")
    if not c.significant:
        return Text("no significant change", style="dim")
    return Text(("▲ " if c.ratio > 1 else "▼ ") + c.verdict, style="green" if c.ratio > 1 else "red")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_history(lines: list[Series], color: bool = False, width: int | None = None) -> str:
    """One table per cell, then a line of how many changed."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 200, highlight=False)
    for line in lines:
        cell = line.result.cell
        table = Table(title=f"{cell.step}{f' [{cell.variant}]' if cell.variant else ''} · {line.result.label} "
                            f"(suite {line.suite}): the trials' median, and its change against the run before",
                      title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
        result = line.result
        for name, justify in (("run", "left"), ("made", "left"), (f"{result.unit}/s [95% CI]", "right"),
                              (f"per {result.one_unit}", "right")):
            table.add_column(name, justify=justify, no_wrap=True)
        table.add_column("change", justify="left")  # the one column that may wrap
        for point in line.points:
            table.add_row(point.run.id, point.run.started_at[:16].replace("T", " "), _figure(point),
                          fmt.duration(point.result.unit_ns.median), _change(point))
        console.print(table)
    changed = [s for s in lines if s.changes]
    runs = len({p.run.id for s in lines for p in s.points})
    count = sum(len(s.changes) for s in lines)
    console.print(f"{_n(len(lines), 'cell')} over {_n(runs, 'run')}; {len(changed)} changed significantly "
                  f"({_n(count, 'change')})"
                  + (": " + "; ".join(f"{s.result.label} · {s.result.cell.step} at "
                                      + ", ".join(p.run.id for p in s.changes) for s in changed[:5])
                     + (f"; … and {len(changed) - 5} more" if len(changed) > 5 else "") if changed else "."))
    return out.getvalue()


def anchor(cell: Cell) -> str:
    """The id of a cell's section in the history page, from what names a cell across runs."""
    key = "\0".join((cell.variant, cell.step, cell.method, cell.target, cell.path))
    return "cell-" + hashlib.sha1(key.encode()).hexdigest()[:12]


def page_name(run: Run) -> str:
    """The history page written beside a run's report (`report --history`)."""
    return f"accessbench-{run.id}-history.html"


def render_history_html(run: Run, lines: list[Series]) -> str:
    """The history of every cell of ``run`` as one self-contained page: per cell a chart of its
    figure over the runs and the table `accessbench history` prints."""
    from markupsafe import Markup

    from .assets import asset, template

    cells = [{"anchor": anchor(s.result.cell), "title": f"{s.result.cell.step} · {s.result.label}",
              "suite": s.suite, "chart": Markup(_chart(s)), "unit": s.result.unit, "one": s.result.one_unit,
              "rows": [(p.run.id, p.run.id == run.id, p.run.started_at[:16].replace("T", " "), _figure(p),
                        fmt.duration(p.result.unit_ns.median), _change(p).plain, bool(p.change and p.change.significant))
                       for p in s.points]} for s in lines]
    return template("history.html.j2").render(
        run=run, cells=cells, css=Markup(asset("report.css")),
        made=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def _chart(line: Series) -> str:
    label = f"{line.result.cell.step} · {line.result.label}"
    points = [charts.Point(i, p.result.rate.median, p.run.started_at[:10],
                           f"{fmt.rate(p.result.rate.median)} {p.result.unit}/s · run {p.run.id}")
              for i, p in enumerate(line.points)]
    series = [charts.Series(label, tuple(points), charts.PALETTE[0])]
    series += [charts.Series(f"significant change · run {p.run.id} · {_change(p).plain}", (points[i],), "#cf222e")
               for i, p in enumerate(line.points) if p.change is not None and p.change.significant]
    legend = [charts.LegendItem("median", charts.PALETTE[0])]
    legend += [charts.LegendItem("significant change", "#cf222e")] if len(series) > 1 else []
    return charts.history_chart(label, series, legend, [p.run.started_at[5:16].replace("T", " ") for p in line.points],
                                line.result.unit, CHART_W)
