"""A DBMS is one module: its Target and its description (targets/registry.py). Here a stand-in
DBMS — SQLite under another name, with limits of its own — is added by this file alone,
registered for each test and taken out at its end, and a suite naming it goes through loading,
planning, a run (tests/fakes.py's executor in place of the workers) and the report."""

from __future__ import annotations

import pytest

from accessbench.errors import SuiteError
from accessbench.methods import catalog
from accessbench.report.model import build
from accessbench.report.terminal import render
from accessbench.runner.plan import variant_plan
from accessbench.runner.run import RunOptions, Runner
from accessbench.store import Store
from accessbench.suite.limits import check_for_dbms
from accessbench.suite.loader import parse
from accessbench.targets import EMBEDDED, make, registry
from accessbench.targets.registry import DBMS, Conformance, DBMSLimits
from accessbench.targets.sqlite import SQLiteTarget

from .fakes import FakeExecutor, Script


# --- the stand-in DBMS: what a new DBMS's module holds ----------------------------------------

class StandInTarget(SQLiteTarget):
    """SQLite's file in the run's work directory, under the stand-in's name."""

    name = "sqlite-standin"
    dbms = "sqlite-standin"

    def endpoint(self, path: str) -> dict:
        return {**super().endpoint(path), "dbms": self.dbms}


STANDIN = DBMS(
    name="sqlite-standin",
    managed=StandInTarget,
    embedded=True,
    limits=DBMSLimits("the stand-in's", identifier=None, char=None, varchar=None, precision=None, scale=None,
                      columns=None, markers=1),  # one parameter per statement: a limit of its own
    conformance=Conformance(types_ddl="CREATE TABLE conf_types (i8 BIGINT)", types_rows=((1,), (None,))),
)

# --- the tests ----------------------------------------------------------------------------

SUITE = """\
[suite]
name = "stand-in"

[[tables]]
name = "t"
rows = 20
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } },
           { name = "v", type = "varchar(8)", gen = { kind = "text", pattern = "v##" } }]
primary_key = ["id"]

[[steps]]
name = "get"
kind = "exec"
sql = "SELECT id, v FROM t WHERE id = ?"
sql_for = { sqlite-standin = "SELECT id, v FROM t WHERE id = ? AND v IS NOT NULL" }
params = [{ kind = "uniform", lo = 1, hi = 20 }]
mode = "prepared"
iterations = 10

[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT id, v FROM t"
iterations = 2

[setup]
sqlite-standin = ["CREATE TABLE standin_setup (x integer)"]
"""

METHODS = ("py-sqlite3", "c-sqlite")


@pytest.fixture
def standin():
    """The stand-in registered for one test, and taken out again whatever the test did."""
    registry.register(STANDIN)
    try:
        yield STANDIN
    finally:
        registry.unregister(STANDIN.name)


def methods_reaching_the_standin():
    """SQLite's methods, as a catalog entry for the stand-in would name them."""
    return [m.model_copy(update={"dbms": [STANDIN.name]}) for m in catalog() if m.name in METHODS]


def test_a_registered_stand_in_is_a_target_an_embedded_dbms_and_a_default_of_selection(standin):
    target = make("sqlite-standin")
    assert isinstance(target, StandInTarget) and target.dbms == "sqlite-standin"
    assert "sqlite-standin" in EMBEDDED
    assert registry.by_default()[-1] == "sqlite-standin"


def test_a_suite_naming_the_stand_in_loads_and_its_cells_are_planned(standin):
    suite = parse(SUITE, "stand-in.toml")
    get = suite.variants[0].steps[0]
    assert get.sql_on("sqlite-standin").endswith("AND v IS NOT NULL") and suite.setup == {
        "sqlite-standin": ["CREATE TABLE standin_setup (x integer)"]}
    check_for_dbms(suite, "sqlite-standin")  # within its limits
    [(_, targets, groups)] = variant_plan(suite, [make("sqlite-standin")], None, methods_reaching_the_standin())
    assert [t.name for t in targets] == ["sqlite-standin"]
    assert [sorted((c.method, c.target, c.path) for c in group) for group in groups] == [
        [("c-sqlite", "sqlite-standin", "inproc"), ("py-sqlite3", "sqlite-standin", "inproc")]] * 2


def test_the_stand_ins_cells_are_measured_and_reported_under_its_name(standin, tmp_path):
    store = Store(str(tmp_path / "s.db"))
    runner = Runner(parse(SUITE, "stand-in.toml"), [make("sqlite-standin")], None, methods_reaching_the_standin(),
                    store, RunOptions(trials=3, warmup=1, workdir=str(tmp_path), allow_idle_halt=True),
                    executor=lambda ctx: FakeExecutor(ctx, {m: Script() for m in METHODS}))
    with store:
        stored = store.load(runner.run())
    assert stored.run["status"] == "complete"
    assert [(t["target"], t["dbms"]) for t in stored.targets] == [("sqlite-standin", "sqlite-standin")]
    assert sorted((c["method"], c["step"], c["target"], c["status"]) for c in stored.cells) == sorted(
        (m, step, "sqlite-standin", "ok") for m in METHODS for step in ("get", "scan"))
    assert all(len(stored.trials[c["id"]]) == 3 for c in stored.cells)
    assert {("trial", m, step) for m in METHODS for step in ("get", "scan")} <= set(runner.executor.calls)

    report = build(stored)
    assert {(v.step.step, v.target) for v in report.verdicts} == {("get", "sqlite-standin"), ("scan", "sqlite-standin")}
    assert {row.cell["target"] for step in report.steps for row in step.rows} == {"sqlite-standin"}
    text = render(stored, width=200)
    assert "sqlite-standin" in text and all(m in text for m in METHODS)


def test_the_stand_ins_own_limits_refuse_a_suite_naming_the_file_and_line(standin):
    two = SUITE.replace("WHERE id = ?", "WHERE id = ? AND id <= ?").replace(
        'params = [{ kind = "uniform", lo = 1, hi = 20 }]',
        'params = [{ kind = "uniform", lo = 1, hi = 20 }, { kind = "const", value = 20 }]')
    suite = parse(two, "stand-in.toml")
    check_for_dbms(suite, "sqlite")  # SQLite binds thousands
    with pytest.raises(SuiteError) as refused:
        check_for_dbms(suite, "sqlite-standin")
    line = next(i for i, text in enumerate(two.splitlines(), 1) if text.startswith("params = ["))
    assert str(refused.value) == (f"stand-in.toml:{line}: steps.0.params: 2 parameters is above the stand-in's "
                                  "limit of 1 per statement")


def test_once_the_stand_in_is_taken_out_a_suite_naming_it_is_one_clear_line():
    registry.register(STANDIN)
    registry.unregister(STANDIN.name)
    assert "sqlite-standin" not in registry.names() and "sqlite-standin" not in EMBEDDED
    with pytest.raises(SuiteError) as refused:
        parse(SUITE, "stand-in.toml")
    line = next(i for i, text in enumerate(SUITE.splitlines(), 1) if text.startswith("sql_for = "))
    assert str(refused.value) == (f"stand-in.toml:{line}: steps.0.sql_for.sqlite-standin.[key]: Input should be "
                                  "'postgresql', 'sqlite', 'mariadb' or 'duckdb'")
