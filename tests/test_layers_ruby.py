"""The Ruby worker's layers (ActiveRecord, Sequel), each measured beside the Ruby driver it runs
on: every value read through the layer checksums as the bare driver's on every measured step,
and what a layer cannot do as asked is unsupported with the reason."""

from __future__ import annotations

import pytest

from accessbench.methods import catalog, toolchain_absent

from .layers import assert_same_values, hello, run_beside_driver

RUBY_ABSENT = toolchain_absent("ruby")
pytestmark = pytest.mark.skipif(bool(RUBY_ABSENT), reason=f"Ruby worker: {RUBY_ABSENT}")

LAYERS = {
    "postgresql": ("rb-pg", ["rb-activerecord+pg", "rb-sequel+pg"]),
    "mariadb": ("rb-mysql2", ["rb-activerecord+mysql2", "rb-sequel+mysql2"]),
    "sqlite": ("rb-sqlite3", ["rb-activerecord+sqlite3", "rb-sequel+sqlite3"]),
}
NO_EXTENDED = "ActiveRecord"  # its reason names the layer: no setting binds without preparing


def test_every_ruby_layer_runs_over_the_ruby_driver_of_its_dbms_and_is_opt_in():
    methods = {m.name: m for m in catalog()}
    for target, (driver, layers) in LAYERS.items():
        for name in layers:
            m = methods[name]
            assert (m.language, m.over, m.default) == ("ruby", driver, False)
            assert m.dbms == [target] and m.layer in ("ActiveRecord", "Sequel")


def test_activerecord_prepares_through_its_statement_cache_and_has_no_extended_mode():
    for name in ("rb-activerecord+pg", "rb-activerecord+mysql2", "rb-activerecord+sqlite3"):
        answer = hello(name)
        assert answer["capabilities"]["modes"] == ["literal", "prepared"], name
        assert answer["settings"]["extended"].startswith("unsupported: "), name
        assert "prepared_statements" in answer["settings"]["prepared"], name
        assert set(answer["capabilities"]["shapes"]["maps"]) >= {"where", "join", "group", "load-lazy", "load-joined",
                                                                 "load-selectin"}


def test_sequel_has_every_mode_and_maps_every_shape_feature():
    for name in ("rb-sequel+pg", "rb-sequel+mysql2", "rb-sequel+sqlite3"):
        answer = hello(name)
        assert answer["capabilities"]["modes"] == ["literal", "extended", "prepared"], name
        assert answer["capabilities"]["shapes"]["unsupported"] == {}, name


def test_ruby_layers_measured_beside_their_driver_read_and_write_the_same_values(tmp_path):
    cells = run_beside_driver(tmp_path, LAYERS, list(LAYERS))
    for target, (driver, (activerecord, sequel)) in LAYERS.items():
        assert_same_values(cells, driver, activerecord, {"sel1-extended": NO_EXTENDED})
        assert_same_values(cells, driver, sequel, {})
