"""The transfer table: a whole result read by every method, set against the wire's floor.

After Raasveldt and Mühleisen ("Don't Hold My Data Hostage", VLDB 2017), who set each
client protocol against netcat moving the same data as CSV: for a step measured beside
``wire-floor`` (the result as CSV moved raw along the same path, paths/floor.py), each
method's time to read the result once on each path, as "× the floor" of that path with the
ratio's 95% CI, beside what a row costs on the wire (bytes to the client, counted by the
latency proxy) and the worker's peak memory. A path without a floor (in process) shows the
time alone; a cell that did not verify shows its figures marked, as every table does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import formatting as fmt
from ..paths import parse as parse_path
from ..stats.cells import CellResult
from ..stats.compare import compare
from .figures import Figure, step_title


@dataclass(frozen=True)
class Reading:
    """One method's read of the result on one path."""

    time: Figure                  # per read (one operation), median over trials
    floor: Figure | None          # × the path's floor, with its CI in ``floor.note``; None: no floor here
    status: str

    @property
    def text(self) -> str:
        mark = "" if self.status == "ok" else "!"
        return self.time.text + mark + (f" ({self.floor.text})" if self.floor else "")


@dataclass
class TransferRow:
    method: str
    target: str
    by_path: dict[str, Reading] = field(default_factory=dict)
    bytes_per_row: Figure = Figure(None, "—")
    memory: Figure = Figure(None, "—")
    growth: Figure = Figure(None, "—")


@dataclass(frozen=True)
class TransferTable:
    title: str
    paths: tuple[str, ...]
    floors: dict[tuple[str, str], CellResult]  # (target, path) → the floor's cell
    rows: tuple[TransferRow, ...]                # per target, fastest first on the slowest path with a floor
    numeric_from = 2                             # the columns from here on are figures (right-aligned)

    @property
    def columns(self) -> list[str]:
        return ["method", "target", *self.paths, "B/row", "peak memory"]

    def cells(self, row: TransferRow) -> list[str]:
        return [row.method, row.target, *(row.by_path[p].text if p in row.by_path else "" for p in self.paths),
                row.bytes_per_row.text, row.memory.text]

    def notes(self, row: TransferRow) -> list[str | None]:
        """Each cell's note, beside ``cells``: the × floor's 95% CI."""
        return [None, None, *((row.by_path[p].floor.note or None) if p in row.by_path and row.by_path[p].floor else None
                              for p in self.paths), None, None]

    @property
    def caption(self) -> str:
        floors = "; ".join(f"{target}/{path} {fmt.duration(f.per_op_ns)}" for (target, path), f in self.floors.items())
        return (f"The wire's floor, the result as CSV moved raw along the same path: {floors}. B/row: bytes to the "
                "client per row, counted by the latency proxy (tcp+DELAY paths). Peak memory: the worker's largest "
                "resident set in a trial (its whole process). ! did not verify.")


def _reading(r: CellResult, floor: CellResult | None) -> Reading:
    """A method's read on one path, × that path's floor where it has one."""
    times = None
    if floor is not None:
        c = compare(floor, r)  # the floor's rows/s over the method's: its time over the floor's
        times = Figure(c.ratio, fmt.times(c.ratio), c.interval_words(fmt.times))
    return Reading(Figure(r.per_op_ns, fmt.duration(r.per_op_ns)), times, r.cell.status)


def _nearest_first(path: str) -> tuple:
    """Paths from the nearest to the farthest: in process, unix, tcp, then by added delay."""
    p = parse_path(path)
    return {"inproc": 0, "unix": 1, "tcp": 2}.get(p.base, 3), p.delay_us, -(p.bandwidth or 0), path


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def transfer_tables(results: list[CellResult]) -> list[TransferTable]:
    """One table per step measured beside the wire's floor."""
    steps: dict[tuple, list[CellResult]] = {}
    for r in results:
        if r.measured and r.cell.kind == "scan":
            steps.setdefault((r.cell.variant, r.cell.step_index, r.cell.step), []).append(r)
    tables = []
    for (variant, _, step), rs in steps.items():
        floors = {(r.cell.target, r.cell.path): r for r in rs if r.floor and r.cell.status == "ok"}
        if not floors:
            continue
        paths = tuple(sorted(dict.fromkeys(r.cell.path for r in rs), key=_nearest_first))
        rows: dict[tuple[str, str], TransferRow] = {}
        for r in rs:
            if r.floor:
                continue
            target, path = r.cell.target, r.cell.path
            row = rows.setdefault((target, r.cell.method), TransferRow(r.cell.method, target))
            row.by_path[path] = _reading(r, floors.get((target, path)))
        for (target, method), row in rows.items():
            mine = [r for r in rs if r.cell.target == target and r.cell.method == method]
            wire = _median([r.bytes_per_row for r in mine if r.bytes_per_row is not None])
            row.bytes_per_row = Figure(wire, f"{wire:,.0f}" if wire is not None else "—")
            peak = _median([r.peak_rss_bytes for r in mine if r.peak_rss_bytes is not None])
            growth = _median([r.rss_growth_bytes for r in mine if r.rss_growth_bytes is not None])
            row.memory, row.growth = Figure(peak, fmt.size(peak)), Figure(growth, fmt.size(growth))
        slowest = [p for p in reversed(paths) if any(k[1] == p for k in floors)]

        def order(row: TransferRow) -> tuple:
            reading = next((row.by_path[p] for p in slowest if p in row.by_path), None)
            return (row.target, reading is None or reading.status != "ok",
                    reading.time.value if reading and reading.time.value is not None else float("inf"))

        tables.append(TransferTable(
            f"Transfer: {step_title(variant, step)} — time per read (× the wire's floor on that path)",
            paths, floors, tuple(sorted(rows.values(), key=order))))
    return tables


# --- the grid: a read over every delay × bandwidth of a proxied path ------------------------------

@dataclass(frozen=True)
class GridRow:
    method: str       # with "+compress" where the path compresses (MariaDB's protocol)
    delay_us: float
    by_bandwidth: dict[float, Reading]


@dataclass(frozen=True)
class GridTable:
    """One target's reads of one step on the proxied paths that hold a bandwidth, laid out as
    the paper's grid: a row per method and one-way delay, a column per bandwidth; each cell the
    time per read and × the wire's floor on that very path."""

    title: str
    step: str                      # the step's title
    target: str
    bandwidths: tuple[float, ...]  # bytes/s each way, widest first
    rows: tuple[GridRow, ...]
    caption: str
    numeric_from = 2

    @property
    def columns(self) -> list[str]:
        return ["method", "one-way delay", *(fmt.link(b) for b in self.bandwidths)]

    def cells(self, row: GridRow) -> list[str]:
        return [row.method, fmt.duration(row.delay_us * 1e3),
                *(row.by_bandwidth[b].text if b in row.by_bandwidth else "" for b in self.bandwidths)]

    def notes(self, row: GridRow) -> list[str | None]:
        return [None, None, *((row.by_bandwidth[b].floor.note or None) if b in row.by_bandwidth
                              and row.by_bandwidth[b].floor else None for b in self.bandwidths)]


def gridded(path: str) -> bool:
    """Whether a path is a point of the grid: proxied, with a bandwidth."""
    p = parse_path(path)
    return bool(p.proxied and p.bandwidth)


def grid_tables(results: list[CellResult]) -> list[GridTable]:
    """One table per step and target measured beside the wire's floor on proxied paths with a
    bandwidth (`reproduce hostage`'s grid); none where fewer than two such paths were measured."""
    groups: dict[tuple, list[tuple]] = {}
    for r in results:
        if not (r.measured and r.cell.kind == "scan"):
            continue
        path = parse_path(r.cell.path)
        if path.proxied and path.bandwidth and path.tls is None:
            groups.setdefault((r.cell.variant, r.cell.step, r.cell.target), []).append((r, path))
    tables = []
    for (variant, step, target), found in groups.items():
        floors = {(p.delay_us, p.bandwidth): r for r, p in found if r.floor and r.cell.status == "ok"}
        if len({(p.delay_us, p.bandwidth) for _, p in found}) < 2 or not floors:
            continue
        rows: dict[tuple[str, float], dict[float, Reading]] = {}
        for r, p in found:
            if r.floor:
                continue
            name = r.cell.method + ("+compress" if p.compress else "")
            rows.setdefault((name, p.delay_us), {})[p.bandwidth] = _reading(r, floors.get((p.delay_us, p.bandwidth)))
        bandwidths = tuple(sorted({p.bandwidth for _, p in found}, reverse=True))
        floor_line = "; ".join(f"{fmt.duration(d * 1e3)} at {fmt.link(b)} {fmt.duration(f.per_op_ns)}"
                               for (d, b), f in sorted(floors.items()))
        tables.append(GridTable(
            f"Grid: {step_title(variant, step)} on {target} — time per read (× the wire's floor on that path)",
            step_title(variant, step), target, bandwidths, tuple(GridRow(m, d, by) for (m, d), by in sorted(rows.items())),
            f"The wire's floor on each path, the result as CSV moved raw: {floor_line}. Delay: added each way by "
            "accessbench's proxy; bandwidth: its link each way. ! did not verify."))
    return tables
