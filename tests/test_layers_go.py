"""The Go worker's layer methods (GORM, sqlx), each measured beside the database/sql method it
runs on: every value read through the layer checksums as the bare driver's on every measured
step, and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import json
import subprocess

import pytest

from accessbench.methods import catalog, select, toolchain_absent
from accessbench.store import Store

from .conftest import accessbench

GO_ABSENT = toolchain_absent("go")
pytestmark = pytest.mark.skipif(bool(GO_ABSENT), reason=f"Go worker: {GO_ABSENT}")

LAYERS = {
    "postgresql": ("go-pgx-stdlib", ["go-gorm+pgx-stdlib", "go-sqlx+pgx-stdlib"]),
    "mariadb": ("go-mysql", ["go-gorm+mysql", "go-sqlx+mysql"]),
}
BINDS = "GORM binds every value"


def hello(method: str) -> dict:
    """The worker's hello, asked with no database: who the layer is and what it pins."""
    m = select([method])[0]
    if m.missing():
        pytest.skip(m.missing())
    proc = subprocess.run(m.command(), input='{"op": "hello"}\n{"op": "bye"}\n', capture_output=True, text=True,
                          timeout=120)
    return json.loads(proc.stdout.splitlines()[0])


def run_beside_driver(tmp_path, suite: str, targets: list[str]) -> dict[str, dict[str, dict]]:
    """One real run of each target's driver and its layers; the cells by method, then step."""
    methods = [name for t in targets for name in (LAYERS[t][0], *LAYERS[t][1])]
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--suite", suite, "--quick", "--target", ",".join(targets),
                         "--method", ",".join(methods), "--trials", "2", "--precision", "0", "--no-report",
                         cwd=tmp_path, timeout=3000)
    assert result.returncode == 0, result.stderr[-3000:]
    text = " ".join(result.stdout.split())
    for target in targets:  # every report says what each layer costs over its driver
        driver, layers = LAYERS[target]
        for layer in layers:
            assert f"{layer} over {driver} @ {target}/" in text, layer
    with Store(store) as s:
        cells = s.load(s.resolve("last")).cells
    by_method: dict[str, dict[str, dict]] = {}
    for c in cells:
        by_method.setdefault(c["method"], {})[c["step"]] = c
    return by_method


def assert_same_values(cells: dict[str, dict[str, dict]], driver: str, layer: str, unsupported: dict[str, str]) -> None:
    mine, bare = cells[layer], cells[driver]
    for step, why in unsupported.items():
        assert mine[step]["status"] == "unsupported" and why in mine[step]["message"], (layer, step, mine[step])
    measured = {step for step, c in mine.items() if c["status"] == "ok"}
    assert measured == set(mine) - set(unsupported), (layer, {s: c["status"] for s, c in mine.items()})
    for step in measured:  # verified against the driver's own reading of the same steps
        assert (mine[step]["checksum"], mine[step]["check_checksum"]) == \
               (bare[step]["checksum"], bare[step]["check_checksum"]), (layer, step)


def test_every_go_layer_runs_over_a_go_method_of_the_same_dbms_and_is_opt_in():
    methods = {m.name: m for m in catalog()}
    for target, (driver, layers) in LAYERS.items():
        for name in layers:
            m = methods[name]
            assert (m.language, m.over, m.default) == ("go", driver, False)
            assert m.dbms == [target] and m.layer in ("GORM", "sqlx")


def test_gorm_has_no_literal_mode_and_pins_its_transactions_statements_and_logging():
    for name in ("go-gorm+pgx-stdlib", "go-gorm+mysql"):
        answer = hello(name)
        assert answer["capabilities"]["modes"] == ["extended", "prepared"]
        settings = answer["settings"]
        assert settings["literal"].startswith("unsupported: ") and BINDS in settings["literal"]
        config = settings["gorm.Config"]
        assert "SkipDefaultTransaction true" in config and "logger.Discard" in config
        assert "PrepareStmt: true" in settings["prepared"] and "PrepareStmt false" in settings["extended"]
        assert "reflect.StructOf" in settings["entities"] and "Take(&entity)" in settings["reads"]


def test_sqlx_runs_the_users_sql_so_it_keeps_the_literal_mode_of_its_driver():
    pg, maria = hello("go-sqlx+pgx-stdlib"), hello("go-sqlx+mysql")
    for answer in (pg, maria):
        assert answer["capabilities"]["modes"] == ["literal", "extended", "prepared"]
        assert "NamedExec" in answer["settings"]["writes"] and "Get(&entity" in answer["settings"]["reads"]
    assert "QueryExecModeSimpleProtocol" in pg["settings"]["literal"]
    assert "COM_QUERY" in maria["settings"]["literal"]


def test_layers_measured_beside_their_go_driver_read_and_write_the_same_values(tmp_path):
    cells = run_beside_driver(tmp_path, "quick", ["postgresql", "mariadb"])
    for target, (driver, layers) in LAYERS.items():
        gorm, sqlx = layers
        assert_same_values(cells, driver, gorm, {"sel1-literal": BINDS})
        assert_same_values(cells, driver, sqlx, {})


def test_every_type_read_and_written_through_the_go_layers_checksums_as_the_driver(tmp_path):
    # Booleans, doubles, numerics, dates, bytes and NULLs: the entity's field types are the
    # driver's own scan types, and the typed suite's selects (no plain shape) go through
    # each layer's raw-SQL API.
    cells = run_beside_driver(tmp_path, "typed", ["postgresql", "mariadb"])
    for target, (driver, layers) in LAYERS.items():
        gorm, sqlx = layers
        assert_same_values(cells, driver, gorm, {"find-literal": BINDS, "insert-literal": BINDS})
        assert_same_values(cells, driver, sqlx, {})
