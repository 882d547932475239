"""`accessbench history`: each cell's figure over the store's runs, oldest first, with the
significant changes marked at the run where each happened."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import formatting as fmt
from ..stats.history import Point, Series


def _figure(point: Point) -> str:
    rate = point.result.rate
    return f"{fmt.rate(rate.median)} [{fmt.rate(rate.ci_low)}–{fmt.rate(rate.ci_high)}]"


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
