"""`accessbench show RUN --profile`: each profiled cell's frames that hold the CPU, client and
server; with ``--against METHOD``, how each frame's share differs from the same cell of
another method (a layer against its driver, two versions of one driver)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..profile.folded import diff, frames, parse, share
from ..profile.samplers import COUNTS

TOP = 15  # frames listed per profile


@dataclass(frozen=True)
class Profile:
    """One side of one cell's profile as stored (``store.profiles``)."""

    row: dict

    @property
    def cell(self) -> tuple:
        r = self.row
        return r["variant"], r["step"], r["target"], r["path"]

    @property
    def label(self) -> str:
        r = self.row
        variant = f" [{r['variant']}]" if r["variant"] else ""
        return f"{r['method']} · {r['step']}{variant} · {r['target']}/{r['path']}"

    @property
    def stacks(self):
        return parse(self.row["folded"] or "")

    def heading(self) -> str:
        r = self.row
        if not r["folded"]:
            return f"{self.label} · {r['side']}: {r['note']}"
        return (f"{self.label} · {r['side']}: {r['sampler']}, {r['samples']:,} samples over {r['seconds']:.1f} s "
                f"(a trial of its own: {r['operations']:,} operations) — {COUNTS.get(r['sampler'], '')}")


def select(rows: list[dict], method=None, step=None, target=None, path=None, side=None) -> list[Profile]:
    wanted = {"method": method, "step": step, "target": target, "path": path, "side": [side] if side else None}
    return [Profile(r) for r in rows if all(not v or r[k] in v for k, v in wanted.items())]


def _console(out: io.StringIO, color: bool, width: int | None) -> Console:
    return Console(file=out, force_terminal=color, no_color=not color, width=width or 200, highlight=False)


def render_profiles(profiles: list[Profile], color: bool = False, width: int | None = None, top: int = TOP) -> str:
    """Each profile's heading, then its top frames by self share (and their total share)."""
    out = io.StringIO()
    console = _console(out, color, width)
    for p in profiles:
        if not p.row["folded"]:
            console.print(p.heading(), style="dim", markup=False)
            continue
        stacks = p.stacks
        whole = sum(stacks.values())
        console.print(p.heading(), style="bold", markup=False)
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("self", justify="right", no_wrap=True)
        table.add_column("total", justify="right", no_wrap=True)
        table.add_column("frame", justify="left")
        for f in frames(stacks)[:top]:
            table.add_row(share(f.self_samples, whole), share(f.total_samples, whole), Text(f.name))
        console.print(table)
    console.print("self: samples in the frame itself; total: in it or what it called. A share is of the "
                  "profile's own samples, printed at the precision their number allows.")
    return out.getvalue()


def pairs(profiles: list[Profile], base: list[Profile]) -> list[tuple[Profile, Profile]]:
    """Each profile with the base's of the same cell and side."""
    by_cell = {(b.cell, b.row["side"]): b for b in base if b.row["folded"]}
    return [(by_cell[(p.cell, p.row["side"])], p) for p in profiles
            if p.row["folded"] and (p.cell, p.row["side"]) in by_cell]


def render_diff(matched: list[tuple[Profile, Profile]], color: bool = False, width: int | None = None,
                top: int = TOP) -> str:
    """For each pair, the frames whose share moved most, base first."""
    out = io.StringIO()
    console = _console(out, color, width)
    for base, other in matched:
        a, b = base.stacks, other.stacks
        na, nb = sum(a.values()), sum(b.values())
        console.print(f"{other.label} · {other.row['side']} against {base.row['method']}: each frame's share of its "
                      f"own profile's samples ({na:,} and {nb:,})", style="bold", markup=False)
        console.print(f"A: {base.row['method']}, B: {other.row['method']}", markup=False)
        table = Table(box=box.SIMPLE_HEAD)
        for name in ("self A", "self B", "total A", "total B"):
            table.add_column(name, justify="right", no_wrap=True)
        table.add_column("frame", justify="left", overflow="fold")
        for c in diff(a, b)[:top]:
            table.add_row(_pct(c.a, na), _pct(c.b, nb), _pct(c.total_a, na), _pct(c.total_b, nb), Text(c.name))
        console.print(table)
    console.print("The frames whose share moved most, in self (the CPU in the frame itself) or in total (in it or "
                  "what it called); a share is of each profile's own samples.")
    return out.getvalue()


def _pct(value: float, whole: int) -> str:
    return share(round(value * whole), whole)


