"""Study S3's table for a study that compared methods in pairs: per query type both methods'
mean time of an execution (a trial), Diff, R% and Diff%, each side's min–max and median with
its CI, a significance verdict, the study's own R% beside, and the study's tally ("ODBC faster
in N of 10 types; native ahead by more than 10% in M")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats.cells import CellResult
from ..stats.compare import compare
from ..stats.summary import summarize
from ..store import StoredRun
from .. import formatting as fmt

AHEAD = 0.10  # S3 counted the types where the native API was ahead by more than 10%


@dataclass
class PairRow:
    label: str                      # the study's name of the query type (INS, SEL1 …)
    reference: tuple[str, str]      # "mean (min–max)", "median [CI]"
    candidate: tuple[str, str]
    diff: str                       # candidate's mean minus the reference's
    r_percent: float                # candidate's mean as a percentage of the reference's
    verdict: str                    # the candidate against the reference, by the project's test (≈: no
                                    # significant difference, and why)
    published_r: str                # the study's own R% for the type, where it published one


@dataclass
class PairTable:
    title: str                      # "ODBC vs the native API (C): c-odbc vs c-libpq @ postgresql/unix"
    names: tuple[str, str]          # what the study called the candidate and the reference
    rows: list[PairRow]
    tally: str
    published_tally: str


def _side(trials: np.ndarray) -> tuple[str, str]:
    """"34.6 ms (32–38.4)" and "median 34.1 [32–38.4]": one unit per side."""
    s = summarize(trials)
    ci = [s.ci_low, s.ci_high] if s.n > 1 else []  # one trial: no interval
    low, high, median, *bounds = fmt.durations_in(s.mean, [s.min, s.max, s.median, *ci])
    return f"{fmt.duration(s.mean)} ({low}–{high})", f"median {median}" + (" [{}–{}]".format(*bounds) if bounds else "")


def study_pairs(stored: StoredRun, results: list[CellResult]) -> list[PairTable]:
    """Every pair of the suite's study that the run measured: one table per candidate,
    reference, target and path."""
    suite = stored.suite
    if suite.study is None or not suite.study.pairs:
        return []
    study = suite.study
    types = [(f.label, f.steps) for f in study.figures if f.per == "trial"]
    published = {row.label: row.values for row in study.rows}
    cells = {(r.cell.method, r.cell.target, r.cell.path, r.cell.variant, r.cell.step): r
             for r in results if r.ranked and r.trial_ns is not None}
    places = list(dict.fromkeys((r.cell.target, r.cell.path, r.cell.variant) for r in results))
    tables = []
    for pair in study.pairs:
        for reference in pair.references:
            for candidate in pair.candidates:
                for target, path, variant in places:
                    table = _table(pair, reference, candidate, (target, path, variant), types, cells,
                                   published)
                    if table is not None:
                        tables.append(table)
    return tables


def _table(pair, reference: str, candidate: str, place: tuple, types, cells, published) -> PairTable | None:
    target, path, variant = place
    rows = []
    for label, steps in types:
        found = [(cells.get((reference, target, path, variant, s)), cells.get((candidate, target, path, variant, s)))
                 for s in steps]
        ref, cand = next(((r, c) for r, c in found if r is not None and c is not None), (None, None))
        if ref is None:
            continue
        comparison = compare(cand, ref)
        r_percent = 100.0 * cand.trial_ns.mean() / ref.trial_ns.mean()
        diff = cand.trial_ns.mean() - ref.trial_ns.mean()
        rows.append(PairRow(label, _side(ref.trial_ns), _side(cand.trial_ns),
                            ("+" if diff >= 0 else "-") + fmt.duration(abs(diff)), r_percent,
                            comparison.verdict if comparison.significant else f"≈ ({comparison.reason})",
                            _published_r(pair, label, published)))
    if not rows:
        return None
    cand_name, ref_name = pair.names
    faster = sum(r.r_percent < 100 for r in rows)
    significantly = sum(r.r_percent < 100 and "faster" in r.verdict for r in rows)
    ahead = sum(r.r_percent > 100 * (1 + AHEAD) for r in rows)
    tally = (f"{cand_name} faster in {faster} of {len(rows)} types by the mean ({significantly} of them "
             f"significantly); {ref_name} ahead by more than {AHEAD:.0%} in {ahead}")
    where = f"{target}/{path}" + (f" [{variant}]" if variant else "")
    return PairTable(f"{pair.label}: {candidate} vs {reference} @ {where}", pair.names, rows, tally,
                     _published_tally(pair, types, published))


def _published_r(pair, label: str, published: dict) -> str:
    if not pair.published:
        return ""
    ref, cand = (published.get(row, {}).get(label) for row in pair.published)
    try:
        return f"{100.0 * float(cand) / float(ref):.0f}%"
    except (TypeError, ValueError, ZeroDivisionError):
        return ""


def _published_tally(pair, types, published: dict) -> str:
    """The same tally over the study's own published means, where it published both sides."""
    if not pair.published:
        return ""
    ref_row, cand_row = (published.get(row, {}) for row in pair.published)
    both = [(float(ref_row[label]), float(cand_row[label])) for label, _ in types
            if label in ref_row and label in cand_row]
    if not both:
        return ""
    cand_name, ref_name = pair.names
    faster = sum(c < r for r, c in both)
    ahead = sum(c > r * (1 + AHEAD) for r, c in both)
    return (f"published ({pair.published[1]} vs {pair.published[0]}): {cand_name} faster in {faster} of "
            f"{len(both)} types; {ref_name} ahead by more than {AHEAD:.0%} in {ahead}")
