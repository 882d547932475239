"""The Go worker's layer methods (GORM, sqlx), each measured beside the database/sql method it
runs on: every value read through the layer checksums as the bare driver's on every measured
step, and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import pytest

from accessbench.methods import catalog, toolchain_absent

from .layers import assert_same_values, hello, run_beside_driver

GO_ABSENT = toolchain_absent("go")
pytestmark = pytest.mark.skipif(bool(GO_ABSENT), reason=f"Go worker: {GO_ABSENT}")

LAYERS = {
    "postgresql": ("go-pgx-stdlib", ["go-gorm+pgx-stdlib", "go-sqlx+pgx-stdlib"]),
    "mariadb": ("go-mysql", ["go-gorm+mysql", "go-sqlx+mysql"]),
}
BINDS = "GORM binds every value"








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
    cells = run_beside_driver(tmp_path, LAYERS, ["postgresql", "mariadb"])
    for target, (driver, layers) in LAYERS.items():
        gorm, sqlx = layers
        assert_same_values(cells, driver, gorm, {"sel1-literal": BINDS})
        assert_same_values(cells, driver, sqlx, {})


def test_every_type_read_and_written_through_the_go_layers_checksums_as_the_driver(tmp_path):
    # Booleans, doubles, numerics, dates, bytes and NULLs: the entity's field types are the
    # driver's own scan types, and the typed suite's selects (no plain shape) go through
    # each layer's raw-SQL API.
    cells = run_beside_driver(tmp_path, LAYERS, ["postgresql", "mariadb"], suite="typed")
    for target, (driver, layers) in LAYERS.items():
        gorm, sqlx = layers
        assert_same_values(cells, driver, gorm, {"find-literal": BINDS, "insert-literal": BINDS})
        assert_same_values(cells, driver, sqlx, {})
