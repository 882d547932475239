"""Verification: before a step's trials, every cell runs it once untimed and says what it read
and wrote (rows, a checksum of the values; a check query's checksum of the table after a
write). Every method on one target must agree: the plurality is taken as right, and a cell
that differs is a mismatch, explained where both sides can dump their rows (diagnosis.py).
The wire's floor reads no values: it must move as many lines as the others read rows.

A resumed run's cell must read what its first verification read: each method is verified again
once per target and step (resume.Done.again), the rest keep their first verification.
"""

from __future__ import annotations

import os
from collections import Counter

from .. import formatting as fmt
from ..paths.floor import name_of as floor_name, write_csv
from ..protocol.checksum import Checksum
from ..protocol.generators import rows as generated_rows
from ..suite.shape import unmapped
from .context import RunContext
from .diagnosis import DUMP_ROWS, explain
from .executor import Executor
from .plan import Cell
from .resume import Done
from .state import CellFailed, CellState


class Verification:
    def __init__(self, ctx: RunContext, executor: Executor, done: Done) -> None:
        self.ctx, self.executor, self.done = ctx, executor, done

    def verify(self, cell: Cell, state: CellState, again: bool = True) -> None:
        """One untimed pass of the cell: it is ``ok`` with what it read, or fails (unsupported
        here, an error) with why. ``again`` False: a resumed cell whose first verification
        stands (resume.Done.again) is opened and admitted as any, and keeps what it read then."""
        ctx = self.ctx
        try:
            self.executor.open(cell)  # its hello says what it does
            message = self._admit(cell)
            ctx.reset(cell)
            if ctx.method(cell).reads == "floor":
                self._floor_file(cell)
            if not again:  # its row, set back to planned as the run resumed, is verified again
                state.status, state.key = "ok", self.done.verified(cell)
                ctx.store.update_cell(state.id, status="ok")
                return
            answer = self.executor.ask(cell, {**message, "verify": True})
            parents, check = self._parents(cell, message), self._check(cell)
        except CellFailed as e:
            ctx.fail(cell, state, e)
            return
        state.status, state.key = "ok", (answer["rows"], answer.get("checksum"), check)
        first = self.done.verified(cell)
        if first is not None and first != state.key:  # a resumed cell must read what it read before
            self._mismatch(cell, state, f"the resumed verification differs from the first attempt's: read "
                                        f"{state.key[0]} rows with checksum {state.key[1]}"
                                        f"{f', table check {check}' if check else ''}; first {first[0]} rows, "
                                        f"{first[1]}{f', table check {first[2]}' if first[2] else ''}")
            return
        statements = answer.get("statements")
        ctx.store.update_cell(
            state.id, status="ok", checksum=answer.get("checksum"), check_checksum=check,
            verify_rows=answer["rows"], verify_values=answer.get("values"),
            cold_first_op_ns=answer.get("first_op_ns"),
            statements_per_op=statements / answer["n"] if statements is not None and answer.get("n") else None,
            api=self._api(cell, message, answer), parents_per_op=parents,
        )

    def _admit(self, cell: Cell) -> dict:
        """The cell's step message, or CellFailed (unsupported) with why this method does not run
        this step here."""
        ctx = self.ctx
        caps = ctx.capabilities.get(cell.method, {})
        if why := ctx.target(cell).refuses_step(cell.step):
            raise CellFailed("unsupported", why)
        if cell.step.kind not in caps.get("kinds", [cell.step.kind]):
            raise CellFailed("unsupported", f"{cell.method} has no {cell.step.kind} steps (it has "
                                            f"{', '.join(caps['kinds'])})")
        message = ctx.message(cell)
        method = ctx.method(cell)
        # A layer is measured through its own API: a shape it does not map is unsupported,
        # with its reason, never run through its raw-SQL API under its name.
        if method.layer and (why := unmapped(message, caps.get("shapes"), method.layer)):
            raise CellFailed("unsupported", why)
        modes, mode = caps.get("modes"), cell.step.mode
        if mode and modes is not None and mode not in modes:
            # never run some other way: a worker may not know a mode it does not list.
            # Its own reason, where its settings give one ("extended": "unsupported: …").
            why = str(ctx.settings.get(cell.method, {}).get(mode, ""))
            why = why.removeprefix("unsupported: ") if why.startswith("unsupported") else f"it has {', '.join(modes)}"
            raise CellFailed("unsupported", f"{cell.method} has no {mode} mode: {why}")
        return message

    def _parents(self, cell: Cell, message: dict) -> float | None:
        """A load step: the parent rows each operation loads, by the runner's own count (what a
        load's time is per)."""
        if cell.step.kind != "load":
            return None
        sql, values = message["sql"], generated_rows(message["params"], cell.step.iterations)
        return self.ctx.own(cell, "the parents' statement", sql,
                            lambda t: sum(len(t.query(sql, v)) for v in values)) / len(values)

    def _check(self, cell: Cell) -> str | None:
        """The checksum of the step's check statement (the table after a write), by the runner."""
        if not cell.step.check:
            return None
        checksum = Checksum()
        checksum.add_rows(self.ctx.own(cell, "check", cell.step.check, lambda t: t.query(cell.step.check)))
        return f"{checksum.hexdigest()}/{checksum.rows}"

    def _api(self, cell: Cell, message: dict, answer: dict) -> str | None:
        """"raw" when a layer ran the step through its raw-SQL API: as it says, and always for
        a statement of no shape (whatever a worker says, it had no shape to build from)."""
        if not self.ctx.method(cell).layer or cell.step.kind in ("connect", "page"):
            return None
        return "raw" if answer.get("api") == "raw" or message.get("shape") is None else None

    def compare(self, cells: list[Cell], states: dict[Cell, CellState]) -> None:
        """Every method on the same target must have read and written the same data. The
        plurality is taken as right; without a clear one, every cell is suspect. The wire's
        floor reads no values: its lines must be as many as the rows the plurality read."""
        floors = [c for c in cells if self.ctx.method(c).reads == "floor"]
        self._compare_floors(floors, [c for c in cells if c not in floors], states)
        cells = [c for c in cells if c not in floors]
        for target in self.ctx.targets:
            verified = [c for c in cells if c.target == target.name and states[c].status == "ok"]
            counts = Counter(states[c].key for c in verified).most_common()
            if len(counts) < 2:
                continue
            clear = counts[0][1] > counts[1][1]
            reference = next((c for c in verified if states[c].key == counts[0][0]), None) if clear else None
            dumps: dict[Cell, list | None] = {}
            # a method that read the same on several paths read the same rows: explained once
            # (each explanation reads the step again, minutes for 1,000,000 rows at 10 Mbit/s)
            explained: dict[tuple[str, tuple], str | None] = {}
            for cell in verified:
                state = states[cell]
                if clear and state.key == counts[0][0]:
                    continue
                rows, checksum, check = state.key
                message = (
                    f"read {rows} rows with checksum {checksum}"
                    + (f", table check {check}" if check else "")
                    + (f"; most methods: {counts[0][0][0]} rows, {counts[0][0][1]}" if clear else "; no majority")
                )
                agreeing = len({c.method for c in verified if states[c].key == counts[0][0]})
                if reference is not None and (cell.method, state.key) not in explained:
                    explained[cell.method, state.key] = self._explain(cell, reference, agreeing, dumps)
                if why := explained.get((cell.method, state.key)):
                    message += f"; {why}"
                self._mismatch(cell, state, message)

    def _compare_floors(self, floors: list[Cell], cells: list[Cell], states: dict[Cell, CellState]) -> None:
        for floor in floors:
            if states[floor].status != "ok":
                continue
            rows = Counter(states[c].key[0] for c in cells if c.target == floor.target and states[c].status == "ok")
            if rows and (read := rows.most_common(1)[0][0]) != states[floor].key[0]:
                self._mismatch(floor, states[floor], f"moved {states[floor].key[0]:,} lines of CSV; most methods "
                                                     f"read {read:,} rows")

    def _mismatch(self, cell: Cell, state: CellState, message: str) -> None:
        state.status, state.message = "mismatch", message
        self.ctx.store.update_cell(state.id, status="mismatch", message=message)
        self.ctx.progress.note(f"MISMATCH {cell.label}: {message}")

    def _explain(self, cell: Cell, reference: Cell, agreeing: int, dumps: dict) -> str | None:
        """Where ``cell`` read otherwise than the plurality (``reference`` one of it), from both
        sides' rows read again, untimed, and dumped (diagnosis.py); ``dumps`` keeps what was read
        so the reference is read once per target. None when the step reads no rows, or either
        worker cannot dump."""
        if not cell.step.reads_rows:
            return None
        self.executor.keep([reference, cell])  # within the run's room (a step's batches are verified by now)
        for one in (reference, cell):
            if one not in dumps:
                try:
                    self.ctx.reset(one)
                    dumps[one] = self.executor.ask(one, {**self.ctx.message(one), "verify": True,
                                                         "dump": DUMP_ROWS}).get("dump")
                except CellFailed:
                    dumps[one] = None
            if not isinstance(dumps[one], list):
                return None
        return explain(dumps[cell], dumps[reference], cell.method, agreeing, cell.step.sql)

    def _floor_file(self, cell: Cell) -> None:
        """The step's result as CSV (the wire's floor, paths/floor.py), read once per target on
        the runner's own connection."""
        ctx = self.ctx
        sql = cell.step.sql_on(ctx.target(cell).dbms)
        path = os.path.join(ctx.floor_directory(cell.target), floor_name(sql))
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            ctx.progress.note(f"writing {cell.step.name}'s result on {cell.target} as CSV, the wire's floor")
            rows, size = ctx.own(cell, "the floor's CSV of", sql, lambda t: write_csv(path, t.query(sql)))
            ctx.progress.note(f"  {rows:,} rows, {fmt.size(size)} of CSV")
