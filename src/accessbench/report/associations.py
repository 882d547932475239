"""Loading associations: each load step's cells side by side, one row per method, path and
strategy — the time of a whole load, that time per parent row, the statements each load sent
(so that N+1 shows as such: a lazy load of 100 users with their posts and comments sends
1 + 100 + 1,000) and the entities it read. Drivers sit beside the layers: their rows are the
statements a programmer writes by hand for the same strategy (suite/association.py).

The statements are the verification pass's, counted by the worker (a layer's own hook on what
it executes); the parents are counted by the runner's own connection, running the parents'
statement with the same parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import formatting as fmt
from ..stats.cells import CellResult
from .figures import Figure, step_title

STRATEGIES = ("lazy", "selectin", "joined")


@dataclass(frozen=True)
class AssociationRow:
    method: str
    path: str
    strategy: str
    step: str                # its title
    per_load: Figure         # median time per operation (one whole load)
    per_parent: Figure       # that time per parent row
    statements: Figure       # statements each load sent
    entities: Figure         # parents + children + grandchildren each load read
    status: str


@dataclass(frozen=True)
class AssociationTable:
    title: str
    rows: tuple[AssociationRow, ...]

    numeric_from = 4
    columns = ["method", "path", "strategy", "step", "per load", "per parent", "statements/load", "entities/load"]

    def cells(self, row: AssociationRow) -> list[str]:
        mark = "" if row.status == "ok" else "!"
        return [row.method, row.path, row.strategy, row.step, row.per_load.text + mark, row.per_parent.text,
                row.statements.text, row.entities.text]

    def notes(self, row: AssociationRow) -> list[str | None]:
        return [None] * len(self.columns)

    @property
    def caption(self) -> str:
        return ("Each load: the parent rows with their children and grandchildren, by each strategy (lazy: a query "
                "per parent and per child, the N+1 pattern; selectin: a query per level with the keys read; joined: "
                "one query of LEFT JOINs). Layers load through their relations, drivers run the hand-written "
                "statements. per load: median time of one whole load; per parent: that over the parents it "
                "loads; statements/load: what the verification pass sent, counted by the worker; — where a worker "
                "did not count. ! a cell that did not verify.")


def association_tables(results: list[CellResult], stored) -> list[AssociationTable]:
    """One table per variant and target holding load steps, rows by method, path, strategy."""
    if not any(r.cell.kind == "load" for r in results):
        return []
    loads = {(variant.label, step.name): step.load for variant in stored.suite.variants for step in variant.steps
             if step.kind == "load"}
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for r in results:
        if r.cell.kind == "load" and r.measured:
            groups.setdefault((r.cell.variant, r.cell.target), []).append(r)
    tables = []
    for (variant, target), rs in groups.items():
        order = {s: i for i, s in enumerate(STRATEGIES)}
        rows = sorted((_row(r, loads.get((variant, r.cell.step), "")) for r in rs),
                      key=lambda row: (row.method, row.path, order.get(row.strategy, 9), row.step))
        title = f"Loading associations on {target}" + (f" ({variant})" if variant else "")
        tables.append(AssociationTable(title, tuple(rows)))
    return tables


def _row(r: CellResult, strategy: str) -> AssociationRow:
    per_op = r.per_op_ns
    parents = r.cell.parents_per_op
    per_parent = per_op / parents if per_op is not None and parents else None
    statements = r.cell.statements_per_op
    return AssociationRow(
        method=r.cell.method, path=r.cell.path, strategy=strategy or "—", step=step_title(r.cell.variant, r.cell.step),
        per_load=Figure(per_op, fmt.duration(per_op) if per_op is not None else "—"),
        per_parent=Figure(per_parent, fmt.duration(per_parent) if per_parent is not None else "—"),
        statements=Figure(statements, f"{statements:,.0f}" if statements is not None else "—"),
        entities=Figure(r.rows_per_op, f"{r.rows_per_op:,.0f}" if r.rows_per_op is not None else "—"),
        status=r.cell.status)
