"""The Java worker's layer methods (Hibernate ORM, Spring's JdbcTemplate), each measured beside
the driver it runs on: every value read through the layer checksums as the bare driver's on
every measured step, and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import json
import subprocess

import pytest

from accessbench.methods import catalog, select, toolchain_absent
from accessbench.store import Store

from .conftest import accessbench

JAVA_ABSENT = toolchain_absent("java")
pytestmark = pytest.mark.skipif(bool(JAVA_ABSENT), reason=f"Java worker: {JAVA_ABSENT}")

LAYERS = {
    "postgresql": ("java-pgjdbc", ["java-hibernate+pgjdbc", "java-jdbctemplate+pgjdbc"]),
    "mariadb": ("java-mariadb", ["java-hibernate+mariadb", "java-jdbctemplate+mariadb"]),
}
BINDS = "binds every value"


def hello(method: str) -> dict:
    """The worker's hello, asked with no database: who the layer is and what it pins."""
    m = select([method])[0]
    if m.missing():
        pytest.skip(m.missing())
    proc = subprocess.run(m.command(), input='{"op": "hello"}\n{"op": "bye"}\n', capture_output=True, text=True,
                          timeout=120)
    return json.loads(proc.stdout.splitlines()[0])


def run_beside_driver(tmp_path, target: str) -> dict[str, dict[str, dict]]:
    driver, layers = LAYERS[target]
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--quick", "--target", target, "--method", ",".join([driver, *layers]),
                         "--trials", "2", "--precision", "0", "--no-report", cwd=tmp_path, timeout=3000)
    assert result.returncode == 0, result.stderr[-3000:]
    text = " ".join(result.stdout.split())
    for layer in layers:  # every report says what each layer costs over its driver
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


def test_every_java_layer_is_opt_in_and_names_a_java_driver_of_the_same_dbms():
    methods = {m.name: m for m in catalog()}
    for _, (driver, layers) in LAYERS.items():
        for name in layers:
            m = methods[name]
            assert m.over == driver and m.layer and not m.default and m.language == "java"
            assert methods[m.over].language == "java" and set(m.dbms) <= set(methods[m.over].dbms)


def test_hibernate_says_it_maps_generated_entities_with_a_session_per_operation_and_no_cache():
    settings = hello("java-hibernate+pgjdbc")["settings"]
    pins = settings["hibernate settings"]
    for pin in ("hibernate.hbm2ddl.auto=none", "hibernate.cache.use_second_level_cache=false",
                "hibernate.cache.use_query_cache=false", "hibernate.show_sql=false", "hibernate.jdbc.batch_size=100",
                "hibernate.order_inserts=true"):
        assert pin in pins, pin
    assert "ByteBuddy" in settings["entities"] and "@IdClass" in settings["entities"]
    assert "a new Session (persistence context) per operation" in settings["session"]
    assert settings["literal"].startswith("unsupported: ") and BINDS in settings["literal"]
    # prepared: the driver's own statement cache under the layer, on a connection of its own
    assert "preparedStatementCacheQueries=256" in settings["connections"]


def test_jdbctemplate_binds_typed_arguments_on_the_drivers_own_connection():
    settings = hello("java-jdbctemplate+mariadb")["settings"]
    assert "SingleConnectionDataSource" in settings["data source"]
    assert "argTypes" in settings["parameters"] and "cachePrepStmts=true" in settings["connections"]


def test_hibernate_and_jdbctemplate_over_pgjdbc_read_and_write_what_pgjdbc_does(tmp_path):
    cells = run_beside_driver(tmp_path, "postgresql")
    for layer in LAYERS["postgresql"][1]:
        assert_same_values(cells, "java-pgjdbc", layer, {"sel1-literal": BINDS})


def test_hibernate_and_jdbctemplate_over_connector_j_read_and_write_what_connector_j_does(tmp_path):
    cells = run_beside_driver(tmp_path, "mariadb")
    for layer in LAYERS["mariadb"][1]:
        assert_same_values(cells, "java-mariadb", layer, {"sel1-literal": BINDS})
