"""A layer's cost: each measured layer cell (an ORM, a query builder, a row mapper) paired with
its own driver's cell on the same step, target and path (the catalog's ``over``), and the
comparison of the two. Every report shows it, and study S1's claim about layers is judged on it."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formatting as fmt
from ..methods import catalog
from .cells import CellResult
from .compare import Comparison, compare


@dataclass(frozen=True)
class LayerCost:
    """A layer method's cell against its own driver's on the same step, target and path."""

    layer: CellResult
    driver: CellResult
    comparison: Comparison  # the driver against the layer: ratio = the layer's time per op / the driver's

    @property
    def percent_text(self) -> str:
        """"+23% [+18% to +29%]": time per operation over the driver's, with the ratio's CI."""
        c = self.comparison

        def percent(ratio: float) -> str:
            return f"{round((ratio - 1) * 100):+d}%"  # never "-0%"

        return f"{percent(c.ratio)} {c.interval(percent, ' to ')}"

    @property
    def text(self) -> str:
        """"py-sqlalchemy-core+psycopg over py-psycopg @ postgresql/unix: +23% [+18% to +29%]"."""
        c, cost = self.comparison, self.percent_text
        cpu = ""
        if self.layer.cpu_per_op_ns is not None and self.driver.cpu_per_op_ns is not None:
            cpu = (f" · client CPU {fmt.duration(self.layer.cpu_per_op_ns)} vs {fmt.duration(self.driver.cpu_per_op_ns)}"
                   " per op")
        verdict = "" if c.significant else f" (not significant: {c.reason})"
        raw = f" ({label})" if (label := through(self.layer.cell)) else ""
        return f"{self.layer.cell.method}{raw} over {self.driver.label}: {cost}{verdict}{cpu}"


def through(cell) -> str:
    """"through SQLAlchemy ORM's raw-SQL API" for a layer's cell that did not go through its
    builder (a statement of no shape, or one it could not build): every report shows it beside
    the cell's figure, so that a raw path is never reported under the layer's name silently."""
    if getattr(cell, "api", None) != "raw":
        return ""
    layer = next((m.layer for m in catalog() if m.name == cell.method), None) or cell.method
    return f"through {layer}'s raw-SQL API"


def layer_costs(rs: list[CellResult]) -> list[LayerCost]:
    """Each measured layer cell of one step paired with its driver's cell (catalog ``over``)."""
    over = {m.name: m.over for m in catalog() if m.over}
    by = {(r.cell.target, r.cell.path, r.cell.method): r for r in rs if r.ranked}
    pairs = []
    for (target, path, method), layer in by.items():
        driver = by.get((target, path, over.get(method)))
        if driver is not None:
            pairs.append(LayerCost(layer, driver, compare(driver, layer)))
    return pairs
