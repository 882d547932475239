"""What a path's attribute costs: each cell measured over TLS (or with MariaDB's compression)
beside its twin — the same method, target, step and settings on the same path without the
attribute (``tcp+tls`` beside ``tcp``, ``tcp+250us+tls`` beside ``tcp+250us``, ``pooler+tls``
beside ``pooler``).

Per row: both cells' time per operation (per connect on a connect step), the time the
attribute adds with the 95% CI of the two cells' speed ratio (≈ where the project's test finds
no significant difference), that time per MB read where the twin's bytes to the client were
counted (through the latency proxy, tcp+DELAY paths), and the client's and the server's CPU
per operation it adds (where both cells read them). Both cells of a row come from one run,
their trials interleaved, so the host's state is the same for both.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import formatting as fmt
from ..paths import parse as parse_path
from ..stats.cells import CellResult
from ..stats.compare import compare
from .figures import Figure, step_title

ATTRIBUTES = {"tls": "TLS", "compress": "compression"}


def _signed(ns: float | None) -> str:
    if ns is None:
        return "—"
    return ("+" if ns >= 0 else "−") + fmt.duration(abs(ns))


def _percent(value: float) -> str:
    """+46.3%, +1,454% (no exponent: TLS can add many times a plain connect)."""
    return f"{'+' if value >= 0 else '−'}{fmt.ratio3(abs(value) * 100)}%"


@dataclass(frozen=True)
class TwinRow:
    target: str
    method: str
    step: str                 # its title
    path: str                 # with the attribute
    twin: str                 # without it
    plain: Figure             # the twin's time per operation
    attributed: Figure        # this cell's
    added: Figure             # the time added per operation, its 95% CI in ``added.note``
    share: Figure             # the difference as a share of the twin's time
    per_mb: Figure            # added time per MB read (MB = 10⁶ bytes to the client)
    client_cpu: Figure        # added worker CPU per operation
    server_cpu: Figure        # added server CPU per operation
    status: str               # "ok", or the worse of the two cells' statuses


@dataclass(frozen=True)
class TwinTable:
    title: str
    attribute: str
    rows: tuple[TwinRow, ...]

    numeric_from = 3  # the columns from here on are figures (right-aligned)
    columns = ["method", "step", "path", "twin", "with", "added", "added %", "per MB", "+client CPU", "+server CPU"]

    def cells(self, row: TwinRow) -> list[str]:
        mark = "" if row.status == "ok" else "!"
        return [row.method, row.step, row.path, row.plain.text, row.attributed.text + mark, row.added.text,
                row.share.text, row.per_mb.text, row.client_cpu.text, row.server_cpu.text]

    def notes(self, row: TwinRow) -> list[str | None]:
        return [None] * 5 + [row.added.note or None] + [None] * 4

    @property
    def caption(self) -> str:
        return (f"Each cell with {self.attribute} beside its twin: the same path without it (tcp for tcp+tls, "
                "pooler for pooler+tls), in one run with interleaved trials. twin/with: median time per operation "
                "(per connect on a connect step). added %: "
                "with the 95% CI of the ratio; ≈ no significant difference. per MB: the added time per MB read, where the twin's bytes to "
                "the client were counted (tcp+DELAY paths, by the latency proxy). CPU: worker and server CPU per "
                "operation, where both cells read it. ! a cell that did not verify.")


def _row(r: CellResult, twin: CellResult) -> TwinRow:
    cell = r.cell
    # One comparison gives both figures: the twin's speed over this cell's (1.07: this cell takes
    # 7% longer), and that share of the twin's time per operation is the time added.
    c = compare(twin, r)
    share = Figure(c.ratio - 1, _percent(c.ratio - 1) + ("" if c.significant else " ≈"),
                   c.interval_words(lambda v: _percent(v - 1), " to "))
    base = twin.per_op_ns
    added = base * (c.ratio - 1) if base is not None else None
    span = c.interval_words(lambda v: _signed(base * (v - 1)), " to ") if base is not None else ""
    read = (twin.bytes_per_row * twin.rows_per_op if twin.bytes_per_row is not None and twin.rows_per_op
            and cell.kind == "scan" else None)
    per_mb = added / (read / 1e6) if added is not None and read else None
    both = [(r.cpu_per_op_ns, twin.cpu_per_op_ns), (r.server_cpu_per_op_ns, twin.server_cpu_per_op_ns)]
    client, server = (mine - theirs if mine is not None and theirs is not None else None for mine, theirs in both)
    statuses = {cell.status, twin.cell.status}
    step = step_title(cell.variant, cell.step)
    return TwinRow(cell.target, cell.method, step, cell.path, twin.cell.path,
                   Figure(twin.per_op_ns, fmt.duration(twin.per_op_ns)), Figure(r.per_op_ns, fmt.duration(r.per_op_ns)),
                   Figure(added, _signed(added), span), share,
                   Figure(per_mb, _signed(per_mb) if per_mb is not None else "—"),
                   Figure(client, _signed(client)), Figure(server, _signed(server)),
                   "ok" if statuses == {"ok"} else next(s for s in statuses if s != "ok"))


def twin_tables(results: list[CellResult]) -> list[TwinTable]:
    """One table per attribute the run measured beside its twin paths."""
    measured = {(r.cell.target, r.cell.method, r.cell.variant, r.cell.step_index, r.cell.path): r
                for r in results if r.measured and not r.floor and r.per_op_ns is not None}
    rows: dict[tuple[str, str], list[TwinRow]] = {}
    for (target, method, variant, index, path), r in measured.items():
        parsed = parse_path(path)
        attribute = "tls" if parsed.tls else "compress" if parsed.compress else None
        twin = measured.get((target, method, variant, index, parsed.plain)) if attribute else None
        if twin is not None:
            rows.setdefault((attribute, target), []).append(_row(r, twin))
    return [TwinTable(f"What {ATTRIBUTES[a]} adds on {target}: each cell beside its twin without it", ATTRIBUTES[a],
                      tuple(sorted(found, key=lambda row: (row.step, row.path, row.method))))
            for a in ATTRIBUTES for (b, target), found in rows.items() if b == a]
