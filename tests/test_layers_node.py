"""The Node worker's layer methods (Knex, Drizzle, Prisma), each measured beside the driver it
runs on: every value read through the layer checksums as the bare driver's on every measured
step, and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import pytest

from accessbench.methods import catalog, toolchain_absent

from .layers import assert_same_values, run_beside_driver

NODE_ABSENT = toolchain_absent("node")
pytestmark = pytest.mark.skipif(bool(NODE_ABSENT), reason=f"Node.js worker: {NODE_ABSENT}")

LAYERS = {
    "postgresql": ("node-pg", ["node-knex+pg", "node-drizzle+pg", "node-prisma+pg"]),
    "sqlite": ("node-better-sqlite3", ["node-knex+better-sqlite3"]),
    "mariadb": ("node-mysql2", ["node-knex+mysql2"]),
}






def test_every_node_layer_is_opt_in_and_names_a_node_driver_of_the_same_dbms():
    methods = {m.name: m for m in catalog()}
    layers = {name for _, names in LAYERS.values() for name in names}
    for name in layers:
        m = methods[name]
        assert m.over and m.layer and not m.default and m.language == "node"
        assert methods[m.over].language == "node" and set(m.dbms) <= set(methods[m.over].dbms)


def test_knex_drizzle_and_prisma_over_node_pg_read_and_write_what_node_pg_does(tmp_path):
    cells = run_beside_driver(tmp_path, LAYERS, ["postgresql"])
    for layer in LAYERS["postgresql"][1]:
        assert_same_values(cells, "node-pg", layer, {"sel1-literal": "binds every value"})


def test_knex_over_better_sqlite3_prepares_every_time_so_has_no_prepared_mode(tmp_path):
    cells = run_beside_driver(tmp_path, LAYERS, ["sqlite"])
    prepared = "prepares every statement at every execution"
    assert_same_values(cells, "node-better-sqlite3", "node-knex+better-sqlite3", {
        "sel1-literal": "binds every value", "sel1-prepared": prepared, "ins1": prepared,
        "upd1": prepared, "upd10": prepared})


def test_knex_over_mysql2_inlines_values_through_mysql2_and_never_prepares(tmp_path):
    cells = run_beside_driver(tmp_path, LAYERS, ["mariadb"])
    never = "never prepares"
    assert_same_values(cells, "node-mysql2", "node-knex+mysql2", {
        "sel1-extended": never, "sel1-prepared": never, "ins1": never, "upd1": never, "upd10": never})
