"""A built-in study's published figures beside the same figures from a run: the rows both
reports draw (terminal and HTML), as text."""

from __future__ import annotations

from dataclasses import dataclass

from ..stats.cells import CellResult
from ..suite.model import Suite
from .. import formatting as fmt
from ..methods import catalog


@dataclass
class StudyTable:
    title: str
    columns: list[str]                       # figure labels
    published: list[tuple[str, list[str]]]   # (row label, a text per column)
    today: list[tuple[str, list[str]]]
    sources: str                             # where today's figures come from
    note: str = ""


@dataclass(frozen=True)
class StudyRows:
    """A study table laid out as the tables that carry their own title, columns, cells and caption
    (terminal.titled_tables, html.titled_sections, markdown.titled_markdown): the published rows,
    then today's."""

    table: StudyTable
    numeric_from = 1

    @property
    def title(self) -> str:
        return self.table.title

    @property
    def columns(self) -> list[str]:
        return ["", *self.table.columns]

    @property
    def rows(self) -> list[tuple[str, list[str]]]:
        return [*self.table.published, *self.table.today]

    def cells(self, row: tuple[str, list[str]]) -> list[str]:
        label, texts = row
        return [label, *texts]

    def notes(self, row) -> list[str | None]:
        return [None] * len(self.columns)

    @property
    def caption(self) -> str:
        return f"Today's figures: {self.table.sources}." + (f" {self.table.note}" if self.table.note else "")


def study_table(suite: Suite, results: list[CellResult]) -> StudyTable | None:
    """A row per method, target and variant (and per path, when a figure names none)."""
    if suite.study is None:
        return None
    study, figures = suite.study, suite.study.figures
    steps = {s.name: s for v in suite.variants for s in v.steps}
    per_path = any(f.step and f.path is None for f in figures)
    # ranked cells, and the wire's floor (not a method, never ranked: what "× the wire" divides by)
    cells = {(r.cell.method, r.cell.target, r.cell.variant, r.cell.step, r.cell.path): r
             for r in results if r.verified}
    rows = list(dict.fromkeys((r.cell.method, r.cell.target, r.cell.variant,
                               r.cell.path if per_path else None) for r in results))
    published = ([(row.label, [row.values.get(f.label, "") for f in figures]) for row in study.rows]
                 or [("published", [f.published for f in figures])])
    found: dict[tuple, dict[str, float]] = {}
    for method, target, variant, path in rows:
        values = found[(method, target, variant, path)] = {}
        for f in (f for f in figures if f.step):
            r = next((cells[key] for name in f.steps for p in f.paths
                      if (key := (method, target, variant, name, p or path)) in cells), None)
            if r is not None and (v := _value(f, r, steps)) is not None:
                values[f.label] = v
    _ratios(found, figures)
    today = []
    for (method, target, variant, path), values in found.items():
        if values:
            label = " ".join(filter(None, [method, f"@ {target}" + (f"/{path}" if path else ""),
                                           f"[{variant}]" if variant else ""]))
            today.append((label, [_text(f, values.get(f.label)) for f in figures]))
    return StudyTable(study.title, [f.label for f in figures], published, today, _sources(figures), study.note)


def _value(f, r: CellResult, steps: dict) -> float | None:
    """A study figure ``f`` from the cell it is read from, in the figure's own terms."""
    if not r.per_op_ns:
        return None
    if f.per == "unit":  # the step's own units per second (rows for a read): median or best trial
        return (float(max(r.rates)) if f.view == "best" else r.rate.median) * f.times
    if f.per == "trial":  # a whole trial: the study's execution of a query type, its mean
        return float(r.trial_ns.mean()) * f.times if r.trial_ns is not None else None
    if f.per == "second":
        return 1e9 / r.per_op_ns * f.times
    if f.per == "1000":
        return r.seconds_per_1000 * f.times if r.seconds_per_1000 else None
    per = steps[r.cell.step].params[f.per_param].value if f.per_param is not None else 1
    return r.per_op_ns / per * f.times


def _ratios(found: dict[tuple, dict[str, float]], figures) -> None:
    """The figures that are ratios: of two figures of a row, or of one figure against the same
    of another method on the same target and path (a layer against its own driver)."""
    over = {m.name: m.over for m in catalog() if m.over}
    for (method, target, variant, path), values in found.items():
        for f in figures:
            if f.relative_to:
                other = found.get((over.get(method) if f.relative_to == "over" else f.relative_to,
                                   target, variant, path), {})
                both = next((label for label in f.ratio if label in values and other.get(label)), None)
                if other is not values and both:
                    values[f.label] = values[both] / other[both]
            elif f.ratio and all(label in values for label in f.ratio):
                values[f.label] = values[f.ratio[0]] / values[f.ratio[1]]


def _sources(figures) -> str:
    """Where each figure comes from, in words."""
    sources = "; ".join(
        f"{f.label}: {' or '.join(f.steps)}" + (f" on {' or '.join(filter(None, f.paths))}" if f.path else "")
        + (", best trial" if f.view == "best" else "") + (", mean time of a trial" if f.per == "trial" else "")
        + (" ÷ its loop count" if f.per_param is not None else "")
        + (f" × {f.times:,.3g}" if f.times != 1 else "")
        for f in figures if f.step)
    relative = "; ".join(f"{f.label}: {' or '.join(f.ratio)} ÷ the same of "
                         + ("the layer's own driver" if f.relative_to == "over" else f.relative_to)
                         for f in figures if f.relative_to)
    return "; ".join(filter(None, [sources, relative]))


def _text(figure, value: float | None) -> str:
    if value is None:
        return ""
    if figure.ratio:
        return fmt.times(value)  # three significant digits: 0.064×, not 0.1×
    if figure.per == "unit":
        return fmt.rate(value) + "/s"
    if figure.per == "second":
        return fmt.rate(value)
    return fmt.seconds(value) if figure.per == "1000" else fmt.duration(value)
