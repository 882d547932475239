"""The Java worker's layer methods (Hibernate ORM, Spring's JdbcTemplate), each measured beside
the driver it runs on: every value read through the layer checksums as the bare driver's on
every measured step, and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import pytest

from accessbench.methods import catalog, toolchain_absent

from .layers import assert_same_values, hello, run_beside_driver

JAVA_ABSENT = toolchain_absent("java")
pytestmark = pytest.mark.skipif(bool(JAVA_ABSENT), reason=f"Java worker: {JAVA_ABSENT}")

LAYERS = {
    "postgresql": ("java-pgjdbc", ["java-hibernate+pgjdbc", "java-jdbctemplate+pgjdbc"]),
    "mariadb": ("java-mariadb", ["java-hibernate+mariadb", "java-jdbctemplate+mariadb"]),
}
BINDS = "binds every value"








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
    cells = run_beside_driver(tmp_path, LAYERS, ["postgresql"])
    for layer in LAYERS["postgresql"][1]:
        assert_same_values(cells, "java-pgjdbc", layer, {"sel1-literal": BINDS})


def test_hibernate_and_jdbctemplate_over_connector_j_read_and_write_what_connector_j_does(tmp_path):
    cells = run_beside_driver(tmp_path, LAYERS, ["mariadb"])
    for layer in LAYERS["mariadb"][1]:
        assert_same_values(cells, "java-mariadb", layer, {"sel1-literal": BINDS})
