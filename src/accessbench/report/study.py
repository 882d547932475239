"""A built-in study's published figures beside the same figures from a run: the rows both
reports draw (terminal and HTML), as text."""

from __future__ import annotations

from dataclasses import dataclass

from ..stats.cells import CellResult
from ..store import StoredRun
from .. import formatting as fmt


@dataclass
class StudyTable:
    title: str
    columns: list[str]                       # figure labels
    published: list[tuple[str, list[str]]]   # (row label, a text per column)
    today: list[tuple[str, list[str]]]
    sources: str                             # where today's figures come from
    note: str = ""


def study_table(stored: StoredRun, results: list[CellResult]) -> StudyTable | None:
    """A row per method, target and variant (and per path, when a figure names none)."""
    from ..suite.loader import parse

    run = stored.run
    suite = parse(run["suite_text"], run["suite_source"], quick=bool(run["settings"].get("quick")))
    if suite.study is None:
        return None
    study, figures = suite.study, suite.study.figures
    steps = {s.name: s for v in suite.variants for s in v.steps}
    per_path = any(f.step and f.path is None for f in figures)
    cells = {(r.cell["method"], r.cell["target"], r.cell["variant"], r.cell["step"], r.cell["path"]): r
             for r in results if r.ranked}
    rows = list(dict.fromkeys((r.cell["method"], r.cell["target"], r.cell["variant"],
                               r.cell["path"] if per_path else None) for r in results))
    published = ([(row.label, [row.values.get(f.label, "") for f in figures]) for row in study.rows]
                 or [("published", [f.published for f in figures])])
    today = []
    for method, target, variant, path in rows:
        values: dict[str, float] = {}
        for f in figures:
            r = next((cells[key] for name in f.steps
                      if (key := (method, target, variant, name, f.path or path)) in cells), None)
            if r is not None and r.per_op_ns and f.per == "second":
                values[f.label] = 1e9 / r.per_op_ns * f.times
            elif r is not None and f.per == "1000" and r.seconds_per_1000:
                values[f.label] = r.seconds_per_1000 * f.times
            elif r is not None and r.per_op_ns:
                per = steps[r.cell["step"]].params[f.per_param].value if f.per_param is not None else 1
                values[f.label] = r.per_op_ns / per * f.times
            elif f.ratio and all(label in values for label in f.ratio):
                values[f.label] = values[f.ratio[0]] / values[f.ratio[1]]
        if values:
            label = " ".join(filter(None, [method, f"@ {target}" + (f"/{path}" if path else ""),
                                           f"[{variant}]" if variant else ""]))
            today.append((label, [_text(f, values.get(f.label)) for f in figures]))
    sources = "; ".join(
        f"{f.label}: {' or '.join(f.steps)}" + (f" on {f.path}" if f.path else "")
        + (" ÷ its loop count" if f.per_param is not None else "")
        + (f" × {f.times:,.3g}" if f.times != 1 else "")
        for f in figures if f.step)
    return StudyTable(study.title, [f.label for f in figures], published, today, sources, study.note)


def _text(figure, value: float | None) -> str:
    if value is None:
        return ""
    if figure.ratio:
        return f"{value:.1f}×"
    if figure.per == "second":
        return fmt.rate(value)
    return fmt.seconds(value) if figure.per == "1000" else fmt.duration(value)
