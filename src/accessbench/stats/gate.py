"""A regression gate: rules that a comparison of two runs trips (`compare --fail-on`).

A gate in a CI job must fail on a real regression and stay quiet on noise. So a speed rule is
tripped only by a pair the comparison itself calls significant — the Mann-Whitney test at
--alpha *and* the ratio's 95% CI outside the floor, which is the larger of --noise and the
drift this host was measured to have between runs — and then only when the change is larger
than the rule's limit. The other rules need no test: a cell whose median is known too loosely
to judge (its CI half-width), and a cell that read other data than its reference did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cells import CellResult
from .compare import Pair

KINDS = {
    "slower": "a cell significantly slower than its reference by more than the limit (1.05× for 5%)",
    "faster": "a cell significantly faster than its reference by more than the limit (a figure to re-base)",
    "width": "a cell of the new run whose median's 95% CI half-width is wider than the limit: too loose to judge",
    "mismatch": "a cell of the new run that is a mismatch, or reads other rows, checksum or table check than its "
                "reference",
}
_RULE = re.compile(r"^(?P<kind>slower|faster|width)\s*>\s*(?P<limit>\d+(?:\.\d+)?)\s*%$|^(?P<bare>mismatch)$")
HELP = ("slower>PCT, faster>PCT, width>PCT or mismatch (several comma-separated, or the option repeated): "
        + "; ".join(f"{kind}: {what}" for kind, what in KINDS.items()))


@dataclass(frozen=True)
class Rule:
    kind: str               # slower | faster | width | mismatch
    limit: float | None     # a fraction (0.05 for 5%); None for mismatch

    def __str__(self) -> str:
        return self.kind if self.limit is None else f"{self.kind}>{self.limit * 100:g}%"


def parse_rule(text: str) -> Rule:
    """One rule as written; ValueError naming what is understood."""
    found = _RULE.match(text.strip().lower())
    if not found:
        raise ValueError(f"{text!r} is not a rule (slower>PCT, faster>PCT, width>PCT or mismatch; e.g. slower>5%)")
    if found["bare"]:
        return Rule(found["bare"], None)
    return Rule(found["kind"], float(found["limit"]) / 100)


@dataclass(frozen=True)
class Trip:
    """A cell that tripped a rule, and what it showed."""

    rule: Rule
    cell: CellResult          # the new run's (or, against a base, the method's) cell
    step: str
    what: str


def trips(rules: list[Rule], pairs: list[Pair], candidates: list[CellResult]) -> list[Trip]:
    """Every (rule, cell) the comparison trips, in the order of the rules. ``pairs`` are the
    compared cells (their comparisons carry the floor they were judged at); ``candidates`` every
    cell of the new run, for the rules that need no reference."""
    found: list[Trip] = []
    for rule in rules:
        found += _BY_KIND[rule.kind](rule, pairs, candidates)
    return found


def _speed(rule: Rule, pairs: list[Pair], _: list[CellResult]) -> list[Trip]:
    out = []
    for p in pairs:
        c = p.comparison  # candidate against reference: ratio > 1 means the candidate is faster
        if not c.significant:
            continue
        change = 1 / c.ratio - 1 if rule.kind == "slower" else c.ratio - 1
        if change > rule.limit:
            out.append(Trip(rule, p.candidate, p.candidate.cell.step, f"{c.verdict} than {p.reference.label}"))
    return out


def _width(rule: Rule, _: list[Pair], candidates: list[CellResult]) -> list[Trip]:
    return [Trip(rule, r, r.cell.step, f"its median is known within ±{r.half_width:.1%} ({r.rate.n} trials)")
            for r in candidates if r.ranked and r.half_width is not None and r.half_width > rule.limit]


def _mismatch(rule: Rule, pairs: list[Pair], candidates: list[CellResult]) -> list[Trip]:
    out = [Trip(rule, r, r.cell.step, f"a mismatch: {r.cell.message or 'it read otherwise than the other methods'}")
           for r in candidates if r.cell.status == "mismatch"]
    for p in pairs:
        a, b = p.reference.cell, p.candidate.cell
        read = [f"{name} {getattr(b, key)} where {p.reference.label} has {getattr(a, key)}"
                for name, key in (("rows", "verify_rows"), ("checksum", "checksum"), ("table check", "check_checksum"))
                if getattr(a, key) != getattr(b, key)]
        if read:
            out.append(Trip(rule, p.candidate, b.step, "reads otherwise: " + "; ".join(read)))
    return out


_BY_KIND = {"slower": _speed, "faster": _speed, "width": _width, "mismatch": _mismatch}
