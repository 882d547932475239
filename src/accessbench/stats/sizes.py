"""A result-size sweep: rows/s against the rows one read returns, and the crossover, if any.

Study S1 saw statement plans cached on the server win on a small result set while the native
driver moved rows faster on a large one. A suite asks the same question with a step that varies
``rows`` (the size of the table it reads, see suites.md): one curve per method, path and
other varied value (the mode), a point per size. Each size's points read the same rows, so
comparing them is comparing their operations; a curve leads at a size only when it is faster
than every other there with significance (stats/compare.py), and a *crossover* is the leader
changing from one size to a larger one. The x of a point is the rows its reads returned,
measured, not the name's value.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import formatting as fmt
from .cells import CellResult
from .compare import compare


@dataclass(frozen=True)
class Curve:
    label: str                                   # "c-libpq @ unix · mode=prepared"
    method: str
    path: str
    series: str                                  # the sweep's other varied values ("mode=prepared")
    points: tuple[tuple[float, CellResult], ...]  # (rows per read, cell), smallest first


@dataclass(frozen=True)
class SizeSweep:
    variant: str
    sweep: str                   # the [[steps]] entry's name as written
    target: str
    curves: tuple[Curve, ...]    # fastest first, by their best rows/s
    leaders: tuple[tuple[float, str | None], ...]  # per size: the curve that leads, or None (no clear lead)
    verdicts: tuple[str, ...]    # the crossover(s) named, or that there is none


def is_size_sweep(rs: list[CellResult]) -> bool:
    """A sweep whose cells all share clients and rate varies the result size."""
    return len({(r.cell.clients or 1, r.cell.rate) for r in rs}) == 1


def size_sweeps(results: list[CellResult]) -> list[SizeSweep]:
    groups: dict[tuple, list[CellResult]] = {}
    for r in results:
        if r.cell.sweep and r.ranked and r.rows_per_op:
            groups.setdefault((r.cell.variant, r.cell.sweep, r.cell.target), []).append(r)
    out = []
    for (variant, sweep, target), rs in groups.items():
        if not is_size_sweep(rs) or len({round(r.rows_per_op) for r in rs}) < 2:
            continue
        by_curve: dict[tuple, list[CellResult]] = {}
        for r in rs:
            by_curve.setdefault((r.cell.method, r.cell.path, r.cell.sweep_series or ""), []).append(r)
        curves = sorted(
            (Curve(" · ".join(filter(None, [f"{m} @ {p}", s])), m, p, s,
                   tuple(sorted(((pt.rows_per_op, pt) for pt in pts), key=lambda xp: xp[0])))
             for (m, p, s), pts in by_curve.items()),
            key=lambda c: -max(pt.row_rate.median for _, pt in c.points))
        leaders = tuple(_leaders(curves))
        out.append(SizeSweep(variant, sweep, target, tuple(curves), leaders,
                             tuple(_verdicts(leaders, curves))))
    return out


def _leaders(curves: list[Curve]):
    sizes = sorted({round(x) for c in curves for x, _ in c.points})
    for size in sizes:
        here = sorted(((pt, c.label) for c in curves for x, pt in c.points if round(x) == size),
                      key=lambda pl: -pl[0].rate.median)
        if len(here) == 1:
            yield size, here[0][1]
        elif len(here) > 1:
            yield size, here[0][1] if compare(here[0][0], here[1][0]).significant else None


def _rows(n: float) -> str:
    return f"{n:,.0f} row{'s' if round(n) != 1 else ''}"


def _verdicts(leaders: tuple, curves: list[Curve]) -> list[str]:
    """The overall crossover (which curve leads, by size), then each method's own between its
    series (say extended against prepared) where it has two."""
    out = [_crossover("fastest", leaders)]
    for method, path in dict.fromkeys((c.method, c.path) for c in curves):
        text = method_verdict(curves, method, path)
        if text and "crosses over" in text:
            out.append(text)
    return out


def method_verdict(curves: list[Curve], method: str, path: str) -> str | None:
    """One method's own crossover between its two series (say extended against prepared), or
    that there is none; None when it has no two series here."""
    mine = [c for c in curves if (c.method, c.path) == (method, path)]
    if len(mine) != 2 or not all(c.series for c in mine):
        return None
    short = {c.label: c.series.split("=", 1)[-1] for c in mine}
    named = [(size, short.get(label) if label else None) for size, label in _leaders(mine)]
    return _crossover(f"{method} @ {path}", named, faster=True)


def _crossover(who: str, leaders: list, faster: bool = False) -> str:
    clear = [(size, label) for size, label in leaders if label]
    if not clear:
        return f"{who}: no clear lead at any size (within noise or not significant)"
    runs: list[list] = []
    for size, label in clear:
        if runs and runs[-1][0] == label:
            runs[-1][2] = size
        else:
            runs.append([label, size, size])
    word = "faster" if faster else "leads"
    if len(runs) == 1:
        label, lo, hi = runs[0]
        where = f"at {_rows(lo)}" if lo == hi else f"from {_rows(lo)} to {_rows(hi)}"
        if len(clear) == len(leaders):
            return f"{who}: no crossover — {label} {word} at every size ({where.split(' ', 1)[1]})"
        return f"{who}: no crossover — {label} {word} {where}, no curve clearly elsewhere"
    parts = [f"{label} {word} at {_rows(lo)}" if lo == hi else f"{label} {word} from {_rows(lo)} to {_rows(hi)}"
             for label, lo, hi in runs]
    return f"{who}: crosses over — " + "; then ".join(parts)


def points_text(curve: Curve) -> str:
    """"1 row 12,300 rows/s · 10 rows …", for a table or a tooltip."""
    return " · ".join(f"{_rows(x)} {fmt.rate(pt.row_rate.median)} rows/s" for x, pt in curve.points)
