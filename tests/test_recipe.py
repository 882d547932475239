"""The run's recipe alone: a real SQLite target and store, a fake executor in place of the
workers (tests/fakes.py). What is verified, compared, warmed up and measured, in what order,
and how a failure or a mismatch ends a cell without ending the run."""

from __future__ import annotations

import pytest

from accessbench.methods import catalog
from accessbench.runner.resume import Done
from accessbench.runner.run import Progress, RunOptions, Runner
from accessbench.store import Store
from accessbench.suite.loader import parse
from accessbench.targets import make

from .fakes import FakeExecutor, Script

SUITE = """\
[suite]
name = "recipe"

[[tables]]
name = "t"
rows = 20
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]

[[steps]]
name = "get"
kind = "exec"
sql = "SELECT id FROM t WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 20 }]
mode = "prepared"
iterations = 10

[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT id FROM t"
iterations = 2
"""

METHODS = ("py-sqlite3", "c-sqlite", "node-better-sqlite3")


def run(tmp_path, scripts: dict[str, Script], **options):
    """A run of SUITE on SQLite by the scripted methods: (the stored run, the fake executor)."""
    methods = [m for m in catalog() if m.name in scripts]
    store = Store(str(tmp_path / "s.db"))
    options = {"trials": 3, "warmup": 1, "workdir": str(tmp_path), "allow_idle_halt": True, **options}
    runner = Runner(parse(SUITE, "recipe.toml"), [make("sqlite")], None, methods, store, RunOptions(**options),
                    executor=lambda ctx: FakeExecutor(ctx, scripts))
    with store:
        return store.load(runner.run()), runner.executor


def cells_by(stored) -> dict[tuple[str, str], dict]:
    return {(c["method"], c["step"]): c for c in stored.cells}


def test_every_cell_is_verified_before_any_trial_of_its_step_and_trials_interleave_across_cells(tmp_path):
    stored, fake = run(tmp_path, {m: Script() for m in METHODS})
    assert stored.run["status"] == "complete"
    for step in ("get", "scan"):
        calls = [(what, method) for what, method, s in fake.calls if s == step]
        first_trial = next(i for i, (what, _) in enumerate(calls) if what == "trial")
        assert {m for what, m in calls[:first_trial] if what == "verify"} == set(METHODS)
        assert all(what == "trial" for what, _ in calls[first_trial:])
        # one warmup and three trials each, round by round: no method runs twice before the others ran once
        trials = [m for what, m in calls[first_trial:]]
        assert len(trials) == 4 * len(METHODS)
        for start in range(0, len(trials), len(METHODS)):
            assert sorted(trials[start:start + len(METHODS)]) == sorted(METHODS)
    steps = [s for what, _, s in fake.calls if what == "trial"]
    assert steps == sorted(steps, key=["get", "scan"].index)  # a step's trials all before the next step's


def test_each_cell_stores_its_warmups_apart_and_every_timed_trial(tmp_path):
    stored, _ = run(tmp_path, {m: Script() for m in METHODS}, warmup=2, trials=4)
    for cell in stored.cells:
        assert cell["status"] == "ok" and cell["warmups"] == 2
        assert len(stored.trials[cell["id"]]) == 4


def test_a_cell_that_reads_otherwise_than_the_plurality_is_a_mismatch_and_is_still_measured(tmp_path):
    scripts = {m: Script() for m in METHODS}
    scripts["c-sqlite"] = Script(checksum="different")
    stored, _ = run(tmp_path, scripts)
    cells = cells_by(stored)
    assert cells[("c-sqlite", "get")]["status"] == "mismatch"
    assert "most methods" in cells[("c-sqlite", "get")]["message"]
    assert len(stored.trials[cells[("c-sqlite", "get")]["id"]]) == 3
    assert {cells[(m, "get")]["status"] for m in METHODS if m != "c-sqlite"} == {"ok"}


def test_without_a_plurality_every_cell_that_differs_is_suspect(tmp_path):
    scripts = {"py-sqlite3": Script(checksum="a"), "c-sqlite": Script(checksum="b")}
    stored, _ = run(tmp_path, scripts)
    assert {c["status"] for c in stored.cells} == {"mismatch"}
    assert all("no majority" in c["message"] for c in stored.cells)


def test_a_cell_that_fails_in_a_trial_ends_there_and_the_others_carry_on(tmp_path):
    scripts = {m: Script() for m in METHODS}
    scripts["c-sqlite"] = Script(fails_at=2)  # its warmup and first trial pass
    stored, fake = run(tmp_path, scripts)
    cells = cells_by(stored)
    failed = cells[("c-sqlite", "get")]
    assert failed["status"] == "error" and "failed in trial 3" in failed["message"]
    assert len(stored.trials[failed["id"]]) == 1  # what it measured before it failed is kept
    assert [s for what, m, s in fake.calls if what == "trial" and m == "c-sqlite"].count("get") == 3
    assert stored.run["status"] == "complete"
    assert all(len(stored.trials[cells[(m, "get")]["id"]]) == 3 for m in METHODS if m != "c-sqlite")


def test_a_step_kind_the_method_does_not_have_is_unsupported_with_what_it_has(tmp_path):
    scripts = {m: Script() for m in METHODS}
    scripts["c-sqlite"] = Script(capabilities={"kinds": ["exec"], "modes": ["prepared"]})
    stored, _ = run(tmp_path, scripts)
    scan = cells_by(stored)[("c-sqlite", "scan")]
    assert scan["status"] == "unsupported" and scan["message"] == "c-sqlite has no scan steps (it has exec)"
    assert scan["id"] not in stored.trials


def test_a_run_in_which_no_cell_could_be_measured_is_stored_as_failed_with_why(tmp_path):
    none = {"kinds": ["connect"], "modes": []}
    stored, _ = run(tmp_path, {m: Script(capabilities=none) for m in METHODS})
    assert stored.run["status"] == "failed" and "nothing was measured" in stored.run["message"]


def test_a_cell_wider_than_the_precision_asked_gets_more_rounds_and_a_steady_one_does_not(tmp_path):
    noisy = Script(ns_per_op=lambda i: 1000.0 * (1 + (i % 2)))  # every other trial twice as slow
    stored, _ = run(tmp_path, {"py-sqlite3": Script(), "c-sqlite": noisy}, precision=0.05, budget=60.0,
                    max_trials=12)
    cells = cells_by(stored)
    assert len(stored.trials[cells[("py-sqlite3", "get")]["id"]]) == 3
    assert len(stored.trials[cells[("c-sqlite", "get")]["id"]]) == 12


@pytest.mark.parametrize("jit, warmups", [(True, 6), (False, 1)])
def test_a_jit_runtime_warms_up_until_two_warmups_agree_and_others_take_the_fixed_count(tmp_path, jit, warmups):
    capabilities = {**Script().capabilities, "jit": jit}
    slowing = Script(capabilities=capabilities, ns_per_op=lambda i: 1000.0 * (i + 1))  # never settles
    stored, _ = run(tmp_path, {"py-sqlite3": slowing}, max_warmup=6, stable_within=0.01)
    assert {c["warmups"] for c in stored.cells} == {warmups}


def test_a_step_too_big_for_the_machine_is_measured_in_batches_each_whole_after_every_cell_is_verified(
        tmp_path, monkeypatch):
    monkeypatch.setattr("accessbench.runner.run.worker_room", lambda: 2)  # room for two workers at once
    stored, fake = run(tmp_path, {m: Script() for m in METHODS})
    assert stored.run["status"] == "complete"
    assert stored.run["environment"]["room"]["workers"] == 2
    assert stored.run["environment"]["batches"] == {"get": 2, "scan": 2}  # the report's header names them
    assert {c["status"] for c in stored.cells} == {"ok"}
    calls = [(what, method) for what, method, s in fake.calls if s == "get"]
    kept = [method for what, method in calls if what == "keep"]
    assert len(kept) == 4 and kept[:2] == kept[:1:-1]  # two batches verified, then measured, the open one first
    assert all(len(batch) <= 2 for batch in kept) and sorted(sum(kept[:2], ())) == sorted(METHODS)
    first_trial = next(i for i, (what, _) in enumerate(calls) if what == "trial")
    assert {m for what, m in calls[:first_trial] if what == "verify"} == set(METHODS)
    # each batch's warmup and trials, interleaved within it, all before the next batch's
    measured = [m for what, m in calls[first_trial:] if what == "trial"]
    first, second = kept[2], kept[3]
    rounds = [(measured[:4 * len(first)], first), (measured[4 * len(first):], second)]
    for done, batch in rounds:
        assert len(done) == 4 * len(batch)
        assert all(sorted(done[i:i + len(batch)]) == list(batch) for i in range(0, len(done), len(batch)))


@pytest.mark.server
def test_a_method_that_reads_otherwise_on_several_paths_is_explained_once_for_them_all(tmp_path, workdir):
    # each explanation reads the step again (and its reference once per target): minutes for
    # 1,000,000 rows at 10 Mbit/s, the same rows on every path of one method
    scripts = {"py-psycopg": Script(), "py-pg8000": Script(), "py-asyncpg": Script(checksum="different", first=2)}
    methods = [m for m in catalog() if m.name in scripts]
    store = Store(str(tmp_path / "s.db"))
    options = RunOptions(trials=1, warmup=0, workdir=workdir, allow_idle_halt=True)
    runner = Runner(parse(SUITE, "recipe.toml"), [make("postgresql")], ["unix", "tcp"], methods, store, options,
                    executor=lambda ctx: FakeExecutor(ctx, scripts))
    with store:
        stored = store.load(runner.run())
    asked = [(m, s) for what, m, s in runner.executor.calls if what == "verify"]
    for step in ("get", "scan"):
        assert asked.count(("py-asyncpg", step)) == 2 + 1  # its two cells' verifications, one re-read to explain
        assert asked.count(("py-psycopg", step)) == 2 + 1  # the reference's rows, read once for the target
    explained = {c["path"]: c["message"] for c in stored.cells if c["method"] == "py-asyncpg" and c["step"] == "get"}
    assert set(explained) == {"unix", "tcp"} and len(set(explained.values())) == 1
    assert "int 1 from 2 methods, int 2 from py-asyncpg" in explained["tcp"]


class StopAtTrial(Progress):
    """Ctrl-C as the run's ``n``-th timed trial begins."""

    def __init__(self, n: int) -> None:
        self.n = n

    def advance(self, description: str, *args, **kwargs) -> None:
        if " · trial " in description:
            self.n -= 1
            if not self.n:
                raise KeyboardInterrupt


@pytest.mark.server
def test_a_resumed_runs_cells_whose_first_verification_stands_are_stored_as_verified(tmp_path, workdir):
    # a resumed cell is set back to planned until it is verified again: one whose first
    # verification stands (resume.Done.again) is verified as surely, and reads as such
    scripts = {"py-psycopg": Script(), "py-pg8000": Script()}
    methods = [m for m in catalog() if m.name in scripts]
    store = Store(str(tmp_path / "s.db"))
    options = RunOptions(trials=2, warmup=0, workdir=workdir, allow_idle_halt=True)
    suite, targets = parse(SUITE, "recipe.toml"), [make("postgresql")]
    with store:
        first = Runner(suite, targets, ["unix", "tcp"], methods, store, options, StopAtTrial(3),
                       executor=lambda ctx: FakeExecutor(ctx, scripts))
        with pytest.raises(KeyboardInterrupt):
            first.run()
        resumed = Runner(suite, targets, ["unix", "tcp"], methods, store, options, done=Done.of(store, first.run_id),
                         executor=lambda ctx: FakeExecutor(ctx, scripts))
        stored = store.load(resumed.run())
        verified = [(what, m, s) for what, m, s in resumed.executor.calls if what == "verify"]
    assert stored.run["status"] == "complete"
    assert len(verified) < len(stored.cells)  # some first verifications stood
    assert {(c["path"], c["method"], c["step"]): c["status"] for c in stored.cells} == {
        (p, m, s): "ok" for p in ("unix", "tcp") for m in scripts for s in ("get", "scan")}
