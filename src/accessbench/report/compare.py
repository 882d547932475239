"""`accessbench compare`: study S3's table per step — both means, Diff, R%, Diff% — with a
significance verdict per row, and what differs between the runs listed above it."""

from __future__ import annotations

import io
from collections import Counter

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..stats.compare import Pair
from ..stats.drift import RunDrift, step_shifts
from .. import formatting as fmt


def _verdict(pair: Pair) -> Text:
    c = pair.comparison
    if not c.significant:
        return Text("no significant difference", style="dim")
    return Text(c.verdict, style="green" if c.ratio > 1 else "red")


def _step_tables(pairs: list[Pair], reference: str, candidate: str, by_method: bool) -> list[Table]:
    """One table per step. Against a base method, a column names the base each row is measured
    against (one per target when several were given)."""
    steps: dict[tuple, list[Pair]] = {}
    for p in pairs:
        steps.setdefault(p.reference.step_key, []).append(p)
    tables = []
    for (variant, _, step), rows in sorted(steps.items(), key=lambda kv: kv[0][:2]):
        first, then = rows[0].reference, rows[0].candidate
        modes = first.cell.mode if first.cell.mode == then.cell.mode else \
            f"{first.cell.mode or 'no mode'} → {then.cell.mode or 'no mode'}"  # the step's mode changed
        table = Table(title=f"{step}{f' [{variant}]' if variant else ''} — mean time per {first.one_unit} "
                            f"({first.cell.kind}{', ' + modes if modes else ''})",
                      title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
        columns = [("method", "left"), ("target/path", "left")] + ([("base", "left")] if by_method else [])
        columns += [("base mean" if by_method else reference, "right"), ("mean" if by_method else candidate, "right"),
                    ("Diff", "right"), ("R%", "right"), ("Diff%", "right"), ("p", "right"),
                    (f"{candidate} vs {'base' if by_method else reference}", "left")]
        for name, justify in columns:
            table.add_column(name, justify=justify, no_wrap=True)
        for p in sorted(rows, key=lambda p: (p.candidate.cell.target, p.candidate.cell.path,
                                             p.candidate.cell.method)):
            sign = "+" if p.diff_ns >= 0 else "-"
            table.add_row(p.candidate.cell.method, p.candidate.where,
                          *([p.reference.cell.method] if by_method else []),
                          fmt.duration(p.mean_reference_ns), fmt.duration(p.mean_candidate_ns),
                          sign + fmt.duration(abs(p.diff_ns)), f"{p.r_percent:.1f}%", f"{p.diff_percent:+.1f}%",
                          f"{p.comparison.p_value:.2g}", _verdict(p))
        tables.append(table)
    return tables


_NOT_COMPARED_SHOWN = 3


def render_comparison(pairs: list[Pair], reference: str, candidate: str, differences: list[str],
                      unmatched: list[str], color: bool = False, width: int | None = None,
                      by_method: bool = False, legend: list[str] | None = None, show_all: bool = False) -> str:
    """The comparison as text. ``reference`` and ``candidate`` name the two columns (A and B
    with a legend, or the base method and 'method'). What was not compared is one line (the
    first few and a count) unless ``show_all``, then one line each."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 200, highlight=False)
    for line in legend or []:
        console.print(line, markup=False)
    if differences:
        console.print(Text(f"What differs between {reference} and {candidate} (comparable, but keep in mind):",
                           style="bold yellow"))
        for line in differences:
            console.print(f"  {line}", markup=False)
        console.print()
    for table in _step_tables(pairs, reference, candidate, by_method):
        console.print(table)
    if pairs:
        alpha, noise = pairs[0].comparison.alpha, pairs[0].comparison.noise
        tally = Counter("faster" if p.comparison.significant and p.comparison.ratio > 1 else
                        "slower" if p.comparison.significant else "same" for p in pairs)
        console.print(f"{len(pairs)} pairs: {tally['faster']} significantly faster, {tally['slower']} significantly "
                      f"slower, {tally['same']} with no significant difference.")
        console.print(Text(
            f"Diff = {candidate} − {reference}; R% = {candidate} ÷ {reference}; significant = Mann-Whitney U p < {alpha:g} "
            f"on the trials' figures and the 95% bootstrap CI of the ratio of medians outside ±{noise:.1%}"
            + ("." if by_method else " (the larger of --noise and the drift between the runs, above)."), style="dim"))
    reasons = Counter(p.comparison.reason for p in pairs
                      if not p.comparison.significant and "trials: p ≥" in p.comparison.reason)
    for reason, count in reasons.items():
        console.print(Text(f"{count} pairs cannot be significant: {reason}", style="yellow"))
    if unmatched and show_all:
        console.print(Text(f"not compared ({len(unmatched)}):", style="dim"))
        for line in unmatched:
            console.print(Text(f"  {line}", style="dim"))
    elif unmatched:
        more = f"; … and {len(unmatched) - _NOT_COMPARED_SHOWN} more (--all lists them)" \
            if len(unmatched) > _NOT_COMPARED_SHOWN else ""
        console.print(Text(f"not compared ({len(unmatched)}): " + "; ".join(unmatched[:_NOT_COMPARED_SHOWN]) + more,
                           style="dim"))
    return out.getvalue()


def drift_lines(drift: RunDrift) -> list[str]:
    """What the comparison's floor is and where it comes from (and the calibration stored)."""
    lines = []
    if drift.calibrated:
        host, floor, cells = drift.calibrated
        lines.append(f"calibrated: on {host}, cells of two identical runs differ by up to ±{floor:.1%} "
                     f"(95th percentile of {cells:,} cells); later comparisons on this host call only "
                     "larger differences")
    found = drift.found
    lines.append(f"drift between the runs: {found.sources}; a difference is called only beyond ±{found.floor:.1%} "
                 f"— the smallest change this comparison could detect"
                 + (f" (the median cell moved {found.shift:+.1%})" if found.shift is not None else ""))
    return lines


def step_shift_lines(pairs: list[Pair]) -> list[str]:
    """A line on how whole steps moved between the runs, where enough steps say."""
    by_step: dict[tuple, list[float]] = {}
    for p in pairs:
        cell = p.comparison.a.cell
        by_step.setdefault((cell.variant, cell.step_index, cell.target), []).append(p.comparison.ratio)
    found = step_shifts(by_step)
    if found is None:
        return []
    return [f"whole steps moved between the runs by {found.low:+.1%} to {found.high:+.1%} (a step's median cell on one "
            "target; between runs of identical settings, the host's speed while the step ran); around its own step's "
            f"shift a cell moved within ±{found.within:.1%} — a change confined to some methods of a step stands out "
            "sooner than one that moves a whole step"]
