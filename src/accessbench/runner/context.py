"""What every part of a run shares once its targets are up: the suite and options, the store
and the run's id, where to say what happens, the targets and methods by name, the started
paths, what each method's ``hello`` said — and the runner's own connection to each target,
on which it runs the suite's reset, check and setup statements (bounded by ``--timeout``).

The recipe (run.py), the executor of trials (executor.py) and verification (verify.py) each
take this one context rather than each other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import Fault, first_line
from ..methods import Method
from ..paths import Path
from ..store import Store
from ..suite.message import step_message
from ..suite.model import Suite
from ..targets import Target
from .plan import Cell
from .state import CellFailed, CellState


def _timed_out(error: Exception) -> bool:
    """A statement on the runner's own connection stopped by its time bound (PostgreSQL
    57014, MariaDB 1969, SQLite interrupted)."""
    code = getattr(error, "sqlstate", None) or (error.args[0] if getattr(error, "args", None) else None)
    return code in ("57014", 1969) or "interrupted" in str(error)


@dataclass
class RunContext:
    suite: Suite
    options: Any                   # run.RunOptions
    store: Store
    progress: Any                  # run.Progress
    run_id: str
    targets: list[Target]
    methods: list[Method]
    workdir: str = ""
    worker_env: dict[str, str] = field(default_factory=dict)
    routes: dict[tuple[str, str], Path] = field(default_factory=dict)  # (target, path name) → the path, started
    capabilities: dict[str, dict] = field(default_factory=dict)  # method → capabilities from its hello
    settings: dict[str, dict] = field(default_factory=dict)      # method → pinned settings from its hello

    def __post_init__(self) -> None:
        self.by_name = {t.name: t for t in self.targets}
        self.method_by_name = {m.name: m for m in self.methods}

    def target(self, cell: Cell) -> Target:
        return self.by_name[cell.target]

    def method(self, cell: Cell) -> Method:
        return self.method_by_name[cell.method]

    def path(self, cell: Cell) -> Path:
        return self.routes[(cell.target, cell.path)]

    def tables(self, cell: Cell) -> list:
        """The suite's tables as the cell's variant defines them."""
        return next((v.tables for v in self.suite.variants if v.label == cell.variant), self.suite.variants[0].tables)

    def message(self, cell: Cell) -> dict:
        """The cell's step message, as every worker reads it (suite/message.py)."""
        return step_message(cell.step, self.target(cell).dbms, self.suite.seed, self.tables(cell))

    def greeted(self, method: str, hello: dict) -> None:
        """A method's first ``hello`` of the run: stored, and what it can do kept."""
        if method not in self.capabilities:
            self.store.add_method(self.run_id, hello)
            self.capabilities[method] = hello.get("capabilities", {})
            self.settings[method] = hello.get("settings", {})

    def floor_directory(self, target: str) -> str:
        """Where the wire's floor keeps a target's results as CSV (paths/floor.py)."""
        return os.path.join(self.workdir, f"floor-{[t.name for t in self.targets].index(target)}")

    def jit(self, cell: Cell) -> bool:
        return bool(self.capabilities.get(cell.method, {}).get("jit"))

    def server_cpu_known(self, cell: Cell) -> bool:
        """The serving backends' CPU can be read: a server on this machine, reached directly
        (behind PgBouncer the backend pid a client is told is PgBouncer's own)."""
        return self.target(cell).local_server and self.path(cell).server_cpu_known

    def fail(self, cell: Cell, state: CellState, error: CellFailed, quiet: bool = False) -> None:
        """The cell ends as ``error`` says, stored so; after an error the target must still serve."""
        state.status, state.message = error.status, error.message
        self.store.update_cell(state.id, status=error.status, message=error.message)
        if error.status in ("error", "timeout"):
            self.alive(self.target(cell))
        if error.status != "unsupported" and not quiet:
            self.progress.note(f"{error.status.upper()} {cell.label}: {error.message}")

    # the runner's own connection
    def alive(self, target: Target) -> None:
        """A target that can no longer serve stops the run at once: every later cell would fail."""
        why = target.alive()
        if why:
            raise Fault(why)

    def reset(self, cell: Cell) -> None:
        for sql in cell.step.reset:
            self.own(cell, "reset", sql, lambda t, q=sql: t.execute(q))

    def own(self, cell: Cell, what: str, sql: str, do):
        """A statement of the suite's on the runner's own connection (reset, check): bounded by
        --timeout; a failure fails the cell with the statement and the error."""
        target = self.target(cell)
        try:
            return do(target)
        except (KeyboardInterrupt, Fault):
            raise
        except Exception as e:
            self.alive(target)
            raise CellFailed("timeout" if _timed_out(e) else "error", f"{what} `{sql}`: {first_line(e)}") from None
