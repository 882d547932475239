"""The Rust worker's layer methods (Diesel over libpq, libmariadb and the bundled SQLite), each
measured beside the method its backend runs on: every value read through the layer checksums
as the bare driver's on every measured step, and what the layer cannot do as asked is
unsupported with the reason."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from accessbench.methods import catalog, select, toolchain_absent
from accessbench.store import Store

from .conftest import accessbench

RUST_ABSENT = toolchain_absent("rust")
pytestmark = pytest.mark.skipif(bool(RUST_ABSENT), reason=f"Rust worker: {RUST_ABSENT}")

# target → (the method the layer's backend runs on, the layer)
LAYERS = {
    "sqlite": ("rust-rusqlite", "rust-diesel+sqlite"),
    "postgresql": ("c-libpq", "rust-diesel+libpq"),
    "mariadb": ("c-libmariadb", "rust-diesel+libmariadb"),
}
BINDS = "Diesel binds every value"


def hello(method: str) -> dict:
    m = select([method])[0]
    if m.missing():
        pytest.skip(m.missing())
    proc = subprocess.run(m.command(), input='{"op": "hello"}\n{"op": "bye"}\n', capture_output=True, text=True,
                          timeout=120)
    return json.loads(proc.stdout.splitlines()[0])


def run_beside_driver(tmp_path, suite: str) -> dict[str, dict[str, dict]]:
    """One real run of each target's driver and its layer; the report's layer-cost lines
    checked; the cells by method, then step."""
    for driver, layer in LAYERS.values():
        for m in select([driver, layer]):
            if m.missing():
                pytest.skip(m.missing())
    methods = [name for pair in LAYERS.values() for name in pair]
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--suite", suite, "--quick", "--target", ",".join(LAYERS),
                         "--method", ",".join(methods), "--trials", "2", "--precision", "0", "--no-report",
                         cwd=tmp_path, timeout=3000)
    assert result.returncode == 0, result.stderr[-3000:]
    text = " ".join(result.stdout.split())
    for target, (driver, layer) in LAYERS.items():  # every report says what the layer costs over its driver
        assert f"{layer} over {driver} @ {target}/" in text, layer
    with Store(store) as s:
        cells = s.load(s.resolve("last")).cells
    by_method: dict[str, dict[str, dict]] = {}
    for c in cells:
        by_method.setdefault(c["method"], {})[c["step"]] = c
    return by_method


def assert_same_values(cells, driver: str, layer: str, unsupported: dict[str, str]) -> None:
    """``layer`` measured every step but ``unsupported`` (each with its reason), and read and
    wrote on each what ``driver`` did: the same checksums of the rows read and of the table after."""
    mine, bare = cells[layer], cells[driver]
    for step, why in unsupported.items():
        assert mine[step]["status"] == "unsupported" and why in mine[step]["message"], (layer, step, mine[step])
    measured = {step for step, c in mine.items() if c["status"] == "ok"}
    assert measured == set(mine) - set(unsupported), (layer, {s: c["status"] for s, c in mine.items()})
    for step in measured:  # verified against the driver's own reading of the same steps
        assert (mine[step]["checksum"], mine[step]["check_checksum"]) == \
               (bare[step]["checksum"], bare[step]["check_checksum"]), (layer, step)


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
    cells = run_beside_driver(tmp_path, "quick")
    for driver, layer in LAYERS.values():
        assert_same_values(cells, driver, layer, {"sel1-literal": BINDS})


def test_every_type_read_and_written_through_diesel_checksums_as_the_driver(tmp_path):
    # Booleans, doubles, numerics, dates, bytes and NULLs through the generated entities
    # (on SQLite a NUMERIC read by storage class, on MariaDB a BOOLEAN as the integer it is),
    # and the typed suite's selects (no plain shape) through sql_query.
    cells = run_beside_driver(tmp_path, "typed")
    for driver, layer in LAYERS.values():
        assert_same_values(cells, driver, layer, {"find-literal": BINDS, "insert-literal": BINDS})
