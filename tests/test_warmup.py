"""Warm-up: JIT runtimes warm until stable (bounded), others take the fixed count; every cell
records its cold first operation."""

from __future__ import annotations

import sys
from pathlib import Path

from accessbench.methods import Method, catalog
from accessbench.runner.run import RunOptions, Runner
from accessbench.store import Store
from accessbench.suite.loader import parse
from accessbench.targets import make

FIXTURES = Path(__file__).parent / "fixtures"

SUITE = """\
[suite]
name = "warm"

[[tables]]
name = "t"
rows = 50
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "get"
kind = "exec"
sql = "SELECT id FROM t WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 50 }]
mode = "prepared"
iterations = 30
"""


class Relayed(Method):
    change: str

    def command(self) -> list[str]:
        return [sys.executable, str(FIXTURES / "corrupt_worker.py"), self.change, self.name]


def run(tmp_path, methods, **options) -> list[dict]:
    store = Store(str(tmp_path / "s.db"))
    runner = Runner(parse(SUITE, "warm.toml"), [make("sqlite")], None, methods, store, RunOptions(**options))
    with store:
        return store.load(runner.run()).cells


def test_a_jit_runtime_warms_up_until_stable_within_the_bound_and_others_take_the_fixed_count(tmp_path):
    base = next(m for m in catalog() if m.name == "py-sqlite3")
    jit = Relayed(**{**base.model_dump(), "name": "py-sqlite3"}, change="jit")
    (cell,) = run(tmp_path, [jit], warmup=1, max_warmup=6, trials=2, stable_within=0.0)
    assert cell["warmups"] == 6  # never "stable" within 0%: stops at the bound
    (cell,) = run(tmp_path, [jit], warmup=1, max_warmup=6, trials=2, stable_within=10.0)
    assert cell["warmups"] == 2  # stable as soon as two warmups exist
    (cell,) = run(tmp_path, [base], warmup=1, max_warmup=6, trials=2, stable_within=0.0)
    assert cell["warmups"] == 1  # not JIT: the fixed count


def test_every_verified_cell_records_its_cold_first_operation(tmp_path):
    base = next(m for m in catalog() if m.name == "py-sqlite3")
    (cell,) = run(tmp_path, [base], warmup=0, trials=1)
    assert cell["status"] == "ok" and cell["cold_first_op_ns"] > 0
