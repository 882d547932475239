"""The report as Markdown (`accessbench export --format md`), as hyperfine exports its tables:
the header as a list, per step a table of its measured cells ranked by the view's figure, and
the summary per step and target. It lays out the report model and computes no figure."""

from __future__ import annotations

from .. import formatting as fmt
from .figures import step_title
from .model import LAYER_COST, Report, StepReport
from .study import StudyRows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(columns: list[tuple[str, bool]], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a column is (name, right-aligned)."""
    lines = ["| " + " | ".join(_cell(name) for name, _ in columns) + " |",
             "|" + "|".join("---:" if right else ":---" for _, right in columns) + "|"]
    lines += ["| " + " | ".join(_cell(text) for text in row) + " |" for row in rows]
    return lines


def titled_markdown(titled: list, level: str = "##") -> list[str]:
    """Tables that carry their own title, columns, cells and caption (a transfer, grid, twin,
    association or request table), each under a heading of ``level``."""
    lines = []
    for t in titled:
        lines += ["", f"{level} {t.title}", ""]
        lines += _table([(name, i >= t.numeric_from) for i, name in enumerate(t.columns)], [t.cells(row) for row in t.rows])
        lines += ["", t.caption]
    return lines


def _step(report: Report, step: StepReport) -> list[str]:
    view = report.view
    columns = [("#", True), ("method", False), ("target/path", False), (step.unit, True)]
    columns += [(view.spread_name, True)] if view.spread_name else []
    wire = any(row.bytes_per_row.value is not None for row in step.rows)
    columns += [("× behind", True), ("p50", True), ("p99", True), *([("B/row", True)] if wire else []),
                ("peak memory", True), ("trials", True), ("verified", False)]
    rows = []
    for row in step.rows:
        cells = [str(row.rank) if row.rank is not None else "–", row.method_text, row.result.where, row.figure.text]
        cells += [row.spread_text] if view.spread_name else []
        cells += [(("≈" if row.alike else "") + row.behind.text) if row.behind else "",
                  row.percentiles[50.0].text, row.percentiles[99.0].text, *([row.bytes_per_row.text] if wire else []),
                  row.memory.text, str(row.trials), row.status]
        rows.append(cells)
    lines = ["", f"## {step.title}", "", step.heading, ""]
    lines += _table(columns, rows) if rows else ["No measured cell."]
    if step.not_measured:
        lines += ["", "Not measured: " + ", ".join(f"{r.label} ({r.cell.status})" for r in step.not_measured)]
    if step.layer_costs:
        lines += ["", f"{LAYER_COST[0].upper()}{LAYER_COST[1:]}:", *(f"- {c.text}" for c in step.layer_costs)]
    return lines


def render_report(report: Report) -> str:
    lines = [f"# accessbench run {report.header.run_id}", ""]
    lines += [f"- {label}: {text}" for label, text in report.header.lines]
    if report.header.note:
        lines.append(f"- note: {report.header.note}")
    for step in report.steps:
        lines += _step(report, step)
    for sweep in report.sizes:
        sizes = sorted({round(x) for c in sweep.curves for x, _ in c.points})
        lines += ["", f"## Result size: {step_title(sweep.variant, sweep.sweep)} on {sweep.target}", "",
                  "Rows per second (median) against the rows one read returns.", ""]
        lines += _table([("", False)] + [(f"{n:,} row{'s' if n != 1 else ''}", True) for n in sizes],
                        [[c.label] + [fmt.rate(at[n].row_rate.median) if n in (at := {round(x): pt for x, pt in c.points})
                                      else "" for n in sizes] for c in sweep.curves])
        lines += [""] + [f"- {v}" for v in sweep.verdicts]
    lines += titled_markdown(report.titled)
    if report.study is not None:
        lines += titled_markdown([StudyRows(report.study)])
    for pair in report.pairs:
        candidate, reference = pair.names
        lines += ["", f"### {pair.title}", "",
                  "Each side: mean of the trials (min–max), then the median [95% CI].", ""]
        lines += _table([("type", False), (reference, True), (candidate, True), ("Diff", True), ("R%", True),
                         ("Diff%", True), (f"{candidate} vs {reference}", False), ("study R%", True)],
                        [[r.label, "<br>".join(r.reference), "<br>".join(r.candidate), r.diff, f"{r.r_percent:.1f}%",
                          f"{r.r_percent - 100:+.1f}%", r.verdict, r.published_r] for r in pair.rows])
        lines += [""] + [f"- {t}" for t in (pair.tally, pair.published_tally) if t]
    if report.verdicts:
        lines += ["", "## Summary", "",
                  f"Per step and target, the fastest verified cell against the next method (significant when "
                  f"Mann-Whitney p < {report.alpha:g} and the ratio's 95% CI lies outside ±{report.noise:.0%}); "
                  "≈ marks no significant difference from the best.", ""]
        lines += _table([("step", False), ("target", False), ("fastest verified cell", False), ("figure", True),
                         ("against the next method", False)],
                        [[v.step.title, v.target, f"{v.best.cell.method} @ {v.best.cell.path}" if v.best else "",
                          v.with_unit if v.best else "", v.against] for v in report.verdicts])
    return "\n".join(lines) + "\n"
