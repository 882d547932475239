"""The Rust worker's layer methods (Diesel over libpq, libmariadb and the bundled SQLite; SeaORM
over sqlx), each measured beside the method its backend runs on: every value read through the layer checksums
as the bare driver's on every measured step, and what the layer cannot do as asked is
unsupported with the reason."""

from __future__ import annotations

import re

import pytest

from accessbench.methods import catalog, toolchain_absent

from .layers import assert_same_values, hello, run_beside_driver

RUST_ABSENT = toolchain_absent("rust")
pytestmark = pytest.mark.skipif(bool(RUST_ABSENT), reason=f"Rust worker: {RUST_ABSENT}")

# target → (the method the layer's backend runs on, the layer)
LAYERS = {
    "sqlite": ("rust-rusqlite", "rust-diesel+sqlite"),
    "postgresql": ("c-libpq", "rust-diesel+libpq"),
    "mariadb": ("c-libmariadb", "rust-diesel+libmariadb"),
}
BINDS = "Diesel binds every value"
BESIDE = {target: (driver, [layer]) for target, (driver, layer) in LAYERS.items()}
# SeaORM runs on rust-sqlx's sqlx, connect options and runtime
SEAORM = ("rust-sqlx", "rust-seaorm+sqlx")
SEA_BINDS = "SeaORM binds every value"


def test_every_diesel_layer_runs_over_the_library_its_backend_binds_and_is_opt_in():
    methods = {m.name: m for m in catalog()}
    for target, (driver, layer) in LAYERS.items():
        m = methods[layer]
        assert (m.language, m.layer, m.over, m.default) == ("rust", "Diesel", driver, False)
        assert m.dbms == [target] and target in methods[driver].dbms


def test_diesel_has_no_literal_mode_and_pins_its_statement_cache_per_mode():
    for driver, layer in LAYERS.values():
        answer = hello(layer)
        assert answer["capabilities"]["modes"] == ["extended", "prepared"]
        settings = answer["settings"]
        assert settings["literal"].startswith("unsupported: ") and BINDS in settings["literal"]
        assert "CacheSize::Disabled" in settings["extended"] and "CacheSize::Unbounded" in settings["prepared"]
        assert "find(key).first" in settings["reads"] and "sql_query" in settings["statements"]
        assert "webhits" in settings["schema"] and "rowops" in settings["schema"]  # generated from the suites


def test_diesel_over_sqlite_runs_on_the_very_sqlite_rusqlite_bundles():
    # One libsqlite3-sys in the build (it links `sqlite3` once): Diesel's SQLite is rusqlite's.
    layer, driver = hello("rust-diesel+sqlite"), hello("rust-rusqlite")
    bundled = re.search(r"SQLite \S+ bundled", driver["driver_version"]).group(0)
    sys_crate = re.search(r"libsqlite3-sys \S+", driver["settings"]["sqlite"]).group(0)
    assert bundled in layer["driver_version"] and sys_crate in layer["driver_version"]


def test_layers_measured_beside_their_driver_read_and_write_the_same_values(tmp_path):
    cells = run_beside_driver(tmp_path, BESIDE, list(LAYERS))
    for driver, layer in LAYERS.values():
        assert_same_values(cells, driver, layer, {"sel1-literal": BINDS})


def test_every_type_read_and_written_through_diesel_checksums_as_the_driver(tmp_path):
    # Booleans, doubles, numerics, dates, bytes and NULLs through the generated entities
    # (on SQLite a NUMERIC read by storage class, on MariaDB a BOOLEAN as the integer it is),
    # and the typed suite's selects (no plain shape) through sql_query.
    cells = run_beside_driver(tmp_path, BESIDE, list(LAYERS), suite="typed")
    for driver, layer in LAYERS.values():
        assert_same_values(cells, driver, layer, {"find-literal": BINDS, "insert-literal": BINDS})


def test_seaorm_is_an_opt_in_layer_over_rust_sqlx_on_postgresql():
    methods = {m.name: m for m in catalog()}
    m = methods["rust-seaorm+sqlx"]
    assert (m.language, m.layer, m.over, m.default, m.dbms) == ("rust", "SeaORM", "rust-sqlx", False, ["postgresql"])


def test_seaorm_runs_on_the_sqlx_of_rust_sqlx_and_pins_one_connection_and_its_statement_cache_per_mode():
    layer, driver = hello("rust-seaorm+sqlx"), hello("rust-sqlx")
    sqlx_version = driver["driver_version"].split()[0]
    assert f"sqlx {sqlx_version}" in layer["driver_version"]
    assert layer["capabilities"]["modes"] == ["extended", "prepared"]
    assert layer["capabilities"]["load"]["policies"] == ["persistent", "per-request"]
    settings = layer["settings"]
    assert settings["literal"].startswith("unsupported: ") and SEA_BINDS in settings["literal"]
    assert "from_sqlx_postgres_pool" in settings["connection"] and "max_connections(1)" in settings["connection"]
    assert "test_before_acquire(false)" in settings["connection"]
    assert "statement_cache_capacity(0)" in settings["extended"] and "DEALLOCATE ALL" in settings["extended"]
    assert "statement_cache_capacity(100)" in settings["prepared"]
    assert "statement_cache_capacity=100" in driver["settings"]["options"]  # the same capacity as the bare driver
    assert "find_by_id(key).one" in settings["reads"] and "into_active_model" in settings["writes"]
    assert "webhits" in settings["entities"] and "rowops" in settings["entities"]  # generated from the suites
    assert "ping" in settings["pool"]  # the round trip sqlx adds when SeaORM gives the connection back


def test_seaorm_measured_beside_rust_sqlx_reads_and_writes_the_same_values(tmp_path):
    driver, layer = SEAORM
    cells = run_beside_driver(tmp_path, {"postgresql": (driver, [layer])}, ["postgresql"])
    assert_same_values(cells, driver, layer, {"sel1-literal": SEA_BINDS})


def test_every_type_read_and_written_through_seaorm_checksums_as_rust_sqlx(tmp_path):
    # Booleans, doubles, numerics (the scale kept), dates, bytes and NULLs through the generated
    # entities, and the typed suite's selects (no plain shape) through query_all_raw.
    driver, layer = SEAORM
    cells = run_beside_driver(tmp_path, {"postgresql": (driver, [layer])}, ["postgresql"], suite="typed")
    assert_same_values(cells, driver, layer, {"find-literal": SEA_BINDS, "insert-literal": SEA_BINDS})
