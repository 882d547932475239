"""The Node worker's layer methods (Knex, Drizzle, Prisma), each measured beside the driver it
runs on: every value read through the layer checksums as the bare driver's on every measured
step, and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import pytest

from accessbench.methods import catalog, toolchain_absent
from accessbench.store import Store

from .conftest import accessbench

NODE_ABSENT = toolchain_absent("node")
pytestmark = pytest.mark.skipif(bool(NODE_ABSENT), reason=f"Node.js worker: {NODE_ABSENT}")

LAYERS = {
    "postgresql": ("node-pg", ["node-knex+pg", "node-drizzle+pg", "node-prisma+pg"]),
    "sqlite": ("node-better-sqlite3", ["node-knex+better-sqlite3"]),
    "mariadb": ("node-mysql2", ["node-knex+mysql2"]),
}


def run_beside_driver(tmp_path, target: str) -> dict[str, dict[str, dict]]:
    driver, layers = LAYERS[target]
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--quick", "--target", target, "--method", ",".join([driver, *layers]),
                         "--trials", "2", "--precision", "0", "--no-report", cwd=tmp_path)
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


def test_every_node_layer_is_opt_in_and_names_a_node_driver_of_the_same_dbms():
    methods = {m.name: m for m in catalog()}
    layers = {name for _, names in LAYERS.values() for name in names}
    for name in layers:
        m = methods[name]
        assert m.over and m.layer and not m.default and m.language == "node"
        assert methods[m.over].language == "node" and set(m.dbms) <= set(methods[m.over].dbms)


def test_knex_drizzle_and_prisma_over_node_pg_read_and_write_what_node_pg_does(tmp_path):
    cells = run_beside_driver(tmp_path, "postgresql")
    for layer in LAYERS["postgresql"][1]:
        assert_same_values(cells, "node-pg", layer, {"sel1-literal": "binds every value"})


def test_knex_over_better_sqlite3_prepares_every_time_so_has_no_prepared_mode(tmp_path):
    cells = run_beside_driver(tmp_path, "sqlite")
    prepared = "prepares every statement at every execution"
    assert_same_values(cells, "node-better-sqlite3", "node-knex+better-sqlite3", {
        "sel1-literal": "binds every value", "sel1-prepared": prepared, "ins1": prepared,
        "upd1": prepared, "upd10": prepared, "upd100": prepared})


def test_knex_over_mysql2_inlines_values_through_mysql2_and_never_prepares(tmp_path):
    cells = run_beside_driver(tmp_path, "mariadb")
    never = "never prepares"
    assert_same_values(cells, "node-mysql2", "node-knex+mysql2", {
        "sel1-extended": never, "sel1-prepared": never, "ins1": never, "upd1": never, "upd10": never, "upd100": never})
