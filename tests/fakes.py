"""A stand-in for the runner's executor (runner/executor.py), as hyperfine's MockExecutor is
for its benchmark: it starts no process and answers each cell as its script says, so that the
run's recipe — verification, comparison, warmups, interleaved trials, precision rounds, what a
failure ends — is tested alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from accessbench.runner.executor import Executor, Trial
from accessbench.runner.state import CellFailed


@dataclass
class Script:
    """What one method's fake worker does: its hello's capabilities, what its verification
    reads, how long each trial's operations take (ns per op, by the trial's index), and the
    trial from which it fails (None: never)."""

    capabilities: dict = field(default_factory=lambda: {"kinds": ["connect", "scan", "exec", "batch"],
                                                        "modes": ["literal", "extended", "prepared"]})
    checksum: str = "same"
    rows: int = 10
    ns_per_op: Callable[[int], float] = lambda i: 1000.0
    fails_at: int | None = None
    first: int = 1  # the first row it dumps (diagnosis.py) is (first,): a typed integer

    def dump(self) -> list[list[dict]]:
        return [[{"type": "int", "value": self.first}]]


class FakeExecutor(Executor):
    def __init__(self, ctx, scripts: dict[str, Script]) -> None:
        self.ctx, self.scripts = ctx, scripts
        self.calls: list[tuple] = []  # (what, method, step), in order
        self.trials: dict[tuple, int] = {}

    def open(self, cell) -> None:
        self.ctx.greeted(cell.method, {"ok": True, "protocol": 1, "name": cell.method, "language": "fake",
                                       "driver": "fake", "driver_version": "0", "settings": {},
                                       "capabilities": self.scripts[cell.method].capabilities})

    def ask(self, cell, message) -> dict:
        self.calls.append(("verify", cell.method, cell.step.name))
        script = self.scripts[cell.method]
        return {"ok": True, "n": message["iterations"], "rows": script.rows, "checksum": script.checksum,
                "first_op_ns": 5000, **({"dump": script.dump()} if message.get("dump") else {})}

    def trial(self, cell) -> Trial:
        self.ctx.reset(cell)
        script = self.scripts[cell.method]
        i = self.trials[cell] = self.trials.get(cell, -1) + 1
        self.calls.append(("trial", cell.method, cell.step.name))
        if script.fails_at is not None and i >= script.fails_at:
            raise CellFailed("error", f"the fake worker of {cell.method} failed in trial {i + 1}")
        n = cell.step.iterations
        per_op = int(script.ns_per_op(i))
        answer = {"ok": True, "n": n, "elapsed_ns": n * per_op, "rows": script.rows * n, "user_ns": 0, "sys_ns": 0}
        return Trial("2026-11-28T00:00:00.000+00:00", answer, per_op.to_bytes(8, "little") * n, None, None)

    def keep(self, cells) -> None:
        self.calls.append(("keep", tuple(sorted({c.method for c in cells})), cells[0].step.name))

    def use_cluster(self, remote) -> None:
        raise AssertionError("no cluster in a fake run")
