"""The plan: which cells a run measures and in what order.

A cell is variant × target × path × method × step. Within a step every cell gets its
verification pass first, then warmup and trials *interleaved* across cells (A B C A B C …)
so that drift on the machine hits every method alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from ..methods import Method
from ..paths import parse as parse_path
from ..suite.model import Step, Suite, Variant
from ..targets import Target


@dataclass(frozen=True)
class Cell:
    variant: str
    target: str
    path: str
    method: str
    step: Step = field(compare=False)  # identified by step_index; the model is not hashable
    step_index: int = 0

    @property
    def worker_key(self) -> tuple[str, str, str]:
        """One worker process per (method, target, path), kept for the variant."""
        return (self.method, self.target, self.path)

    @property
    def label(self) -> str:
        return f"{self.step.name} · {self.method} @ {self.target}/{self.path}"


def paths_of(target: Target, paths: list[str] | None) -> list[str]:
    """The paths a target is measured on: those asked for that can reach it (a proxied
    ``tcp+…`` path rides on its ``tcp``; a pooler needs a managed PostgreSQL), or all its own
    when none are asked for."""
    if paths is None:
        return list(target.paths)
    return [p for p in paths if parse_path(p).refuses(target) is None]


def on_path(step: Step, path: str) -> bool:
    """Whether a step is measured on a path: every path, unless the step names its own."""
    def same(p: str) -> tuple:  # tcp+250us and tcp+0.25ms are one path, pooler and pooler:transaction
        parsed = parse_path(p)   # too; tcp+0us (the proxy) is not tcp, nor pooler:session pooler
        return (parsed.base, parsed.proxied, parsed.delay_us, parsed.jitter_us, parsed.bandwidth, parsed.tls,
                parsed.compress, getattr(parsed, "pool_mode", None))

    return step.paths is None or same(path) in {same(p) for p in step.paths}


def cells_by_step(
    variant: Variant, targets: list[Target], paths: list[str] | None, methods: list[Method],
    variants: list[Variant] | None = None,
) -> list[list[Cell]]:
    """For each step of the variant, in suite order, the cells that measure it."""
    labels = {t.name: variant_label(variant, variants or [variant], t.dbms) for t in targets}
    groups = []
    for index, step in enumerate(variant.steps):
        group = [
            Cell(labels[target.name], target.name, path, method.name, step, index)
            for target in targets
            for path in paths_of(target, paths)
            for method in methods
            if target.dbms in method.dbms and on_path(step, path)
        ]
        groups.append(group)
    return groups


def variant_targets(variants: list[Variant], targets: list[Target]) -> list[list[Target]]:
    """Per variant, the targets it is measured on: a variant that asks a target nothing an
    earlier one did not (engine=MyISAM on PostgreSQL) is not measured there again."""
    seen: dict[str, list[dict]] = {t.name: [] for t in targets}
    out = []
    for variant in variants:
        chosen = []
        for target in targets:
            view = variant.as_seen_by(target.dbms)
            if view not in seen[target.name]:
                seen[target.name].append(view)
                chosen.append(target)
        out.append(chosen)
    return out


def variant_plan(suite: Suite, targets: list[Target], paths: list[str] | None,
                 methods: list[Method]) -> list[tuple[Variant, list[Target], list[list[Cell]]]]:
    """The whole run, variant by variant: the targets it is measured on, and its cells step by step."""
    return [(variant, chosen, cells_by_step(variant, chosen, paths, methods, suite.variants))
            for variant, chosen in zip(suite.variants, variant_targets(suite.variants, targets))]


def variant_label(variant: Variant, variants: list[Variant], dbms: str) -> str:
    """The variant's label as a DBMS sees it: without the parameters that change nothing
    there (engine=InnoDB on PostgreSQL)."""
    view = variant.as_seen_by(dbms)

    def matters(key: str) -> bool:
        return any(w.as_seen_by(dbms) != view for w in variants
                   if w.values[key] != variant.values[key]
                   and all(w.values[k] == v for k, v in variant.values.items() if k != key))

    return ",".join(f"{k}={v}" for k, v in variant.values.items() if matters(k))


def trial_order(cells: list[Cell], warmup: int, trials: int) -> Iterator[tuple[Cell, str, int]]:
    """(cell, phase, seq) in the order they run: rounds of every cell, warmups first."""
    for seq in range(warmup):
        for cell in cells:
            yield cell, "warmup", seq
    for seq in range(trials):
        for cell in cells:
            yield cell, "trial", seq


@dataclass
class Room:
    """What may be open at once while a step is measured. Every worker keeps its connection
    between trials, so a step's cells hold their connections together: through a session
    pooler no more than its pool serves at once (a client beyond it would wait for one to
    leave, for ever), on a server no more than its ``max_connections`` leaves; and this
    machine runs only so many worker processes before they page. ``lanes`` bounds the
    connections through each lane, ``lane_of`` gives the lane of a (target, path), and
    ``workers`` bounds the worker processes (None: no bound)."""

    lanes: dict[tuple, int] = field(default_factory=dict)
    lane_of: dict[tuple[str, str], tuple] = field(default_factory=dict)
    workers: int | None = None
    # what a method's worker holds, where not one connection per client (methods: Method.connections)
    connections: dict[str, int] = field(default_factory=dict)
    app_servers: dict[str, int] = field(default_factory=dict)  # a tier method's processes
    # methods whose hello says they drive a loaded step's clients in one process (threads,
    # async tasks, goroutines): their clients' connections come and go with each trial
    threaded: set[str] = field(default_factory=set)

    def fits(self, cells: list[Cell]) -> bool:
        if self.workers is not None and sum(self.processes(c) for c in cells) > self.workers:
            return False
        for lane, capacity in self.lanes.items():
            mine = [c for c in cells if self.lane_of.get((c.target, c.path)) == lane]
            if mine and sum(self.held(c) for c in mine) + max(self.opened(c) for c in mine) > capacity:
                return False
        return True

    def processes(self, cell: Cell) -> int:
        """The processes a cell keeps running: one worker, one per client of a loaded step
        where its runtime drives a client per process (or has not said yet), a tier method's
        app server's."""
        if cell.method in self.app_servers:
            return self.app_servers[cell.method]
        return cell.step.clients if cell.step.loaded and cell.method not in self.threaded else 1

    def held(self, cell: Cell) -> int:
        """The connections a cell keeps open between its trials: its method's for each of its
        processes (a tier method's app server: one per process)."""
        if cell.method in self.app_servers:
            return self.app_servers[cell.method]
        return self.connections.get(cell.method, 1) * self.processes(cell)

    def opened(self, cell: Cell) -> int:
        """The connections a trial of the cell opens while it runs, beside those it holds: a
        connect step's new one, a per-request client's, a pool's, the clients of a runtime
        that drives them all in one process."""
        step = cell.step
        if step.kind == "connect":
            return 1
        if step.loaded and step.policy == "per-request":
            return step.clients
        if step.loaded and step.policy == "pooled":
            return step.pool_size or step.clients
        if step.loaded and cell.method in self.threaded:
            return self.connections.get(cell.method, 1) * step.clients
        return 0


def batches(cells: list[Cell], room: Room) -> list[list[Cell]]:
    """A step's cells in as few batches as ``room`` allows, each measured whole (verified,
    warmed, its trials interleaved) before the next opens its workers. A method's cells on
    one target stay together where they fit, so that a TLS or pooled cell is interleaved
    with its plain twin; a cell that fits nowhere is a batch of its own (its pooler or server
    then answers as it would any client too many)."""
    families: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        families.setdefault((cell.target, cell.method), []).append(cell)
    out: list[list[Cell]] = [[]]
    for family in families.values():
        if room.fits(out[-1] + family):
            out[-1] += family
            continue
        if out[-1]:
            out.append([])
        for cell in family:  # a family too big for one batch: cell by cell
            if out[-1] and not room.fits(out[-1] + [cell]):
                out.append([])
            out[-1].append(cell)
    order = {cell: i for i, cell in enumerate(cells)}  # each batch's cells in the step's order
    return [sorted(batch, key=order.__getitem__) for batch in out if batch]


def count_executions(groups: list[list[Cell]], warmup: int, trials: int) -> int:
    """How many worker executions a variant takes: verification + warmups + trials."""
    return sum(len(g) for g in groups) * (1 + warmup + trials)
