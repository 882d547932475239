"""Which targets, paths and methods a run measures (runner.select): what was named must be
usable here, what was not named is left out with a note. Availability is injected as plain
functions; targets are real (constructing a managed one starts nothing)."""

from __future__ import annotations

import re

import pytest

from accessbench import targets
from accessbench.errors import InputError
from accessbench.methods import catalog
from accessbench.runner.select import Skipped, select
from accessbench.suite.loader import load
from accessbench.targets import TargetUnavailable

QUICK = load("quick", quick=True)


def available(_) -> None:
    return None


def missing(*names: str, why: str = "Python module it is not installed"):
    """Availability where the methods (or paths) named are missing, for ``why``."""
    return lambda item: why if item.name in names else None


def without(*specs: str, why: str = "its server is not installed"):
    """``targets.make`` where the targets named cannot be made here."""
    def make(spec: str):
        if spec in specs:
            raise TargetUnavailable(why)
        return targets.make(spec)
    return make


def refused(message: str, **kwargs) -> InputError:
    options = {"method_missing": available, "path_missing": available, "make_target": targets.make, **kwargs}
    with pytest.raises(InputError, match=f"^{re.escape(message)}$") as caught:
        select(QUICK, **options)
    return caught.value


def names(selection) -> tuple[list[str], list[str]]:
    return [m.name for m in selection.methods], [t.name for t in selection.targets]


def test_a_named_method_that_cannot_run_here_is_refused_saying_why():
    refused("--method py-psycopg: unavailable here: Python module it is not installed",
            methods=["py-sqlite3", "py-psycopg"], method_missing=missing("py-psycopg"))


def test_a_named_path_that_cannot_run_here_is_refused_saying_why():
    refused("--path tcp+1ms: unavailable here: the latency proxy is not built",
            paths=["tcp", "tcp+1ms"], path_missing=missing("tcp+1ms", why="the latency proxy is not built"))


def test_a_named_target_that_cannot_be_made_is_refused_saying_why():
    refused("--target mariadb: its server is not installed", targets=["sqlite", "mariadb"], make_target=without("mariadb"))


def test_a_named_target_no_selected_method_reaches_is_refused():
    refused("--target postgresql: no selected method reaches postgresql", methods=["py-sqlite3"],
            targets=["postgresql"])


def test_a_named_target_offering_none_of_the_paths_is_refused_naming_what_it_offers():
    refused("--target sqlite: offers paths inproc, not tcp, tcp+1ms", targets=["postgresql", "sqlite"],
            paths=["tcp", "tcp+1ms"])


def test_a_named_path_no_selected_target_offers_is_refused_naming_what_they_offer():
    refused("--path inproc: the targets offer tcp, unix (and tcp+DELAY where they offer tcp)",
            methods=["py-psycopg"], paths=["unix", "inproc"])


def test_nothing_to_measure_is_refused_and_the_refusal_keeps_what_it_skipped_before():
    error = refused("nothing to measure: no target has an available method (see `accessbench methods`)",
                    method_missing=lambda method: "not built")
    assert error.skipped[0] == Skipped("skipping py-sqlite3: not built", "yellow")
    assert len(error.skipped) == len([m for m in catalog() if m.default])


def test_an_unknown_method_target_or_path_is_refused_as_before():
    refused("--target nosuch: expected postgresql, mariadb, sqlite, duckdb, a postgresql:// or mariadb:// URL, "
            "or env (DATABASE_URL, libpq's PG* variables, MariaDB's option files)",
            targets=["nosuch"])
    with pytest.raises(InputError, match=r"^--method nosuch: unknown \(known: py-sqlite3, "):
        select(QUICK, methods=["nosuch"])
    with pytest.raises(InputError, match=r"^--path nosuch: expected inproc, unix, tcp, "):
        select(QUICK, paths=["nosuch"])


def test_methods_that_cannot_run_here_are_skipped_with_a_yellow_note_when_none_is_named():
    selection = select(QUICK, method_missing=missing("py-psycopg", "c-libpq"), path_missing=available)
    methods, chosen = names(selection)
    assert "py-psycopg" not in methods and "c-libpq" not in methods and "py-asyncpg" in methods
    assert chosen == ["postgresql", "mariadb", "sqlite", "duckdb"]
    assert selection.skipped == [Skipped("skipping py-psycopg: Python module it is not installed", "yellow"),
                                 Skipped("skipping c-libpq: Python module it is not installed", "yellow")]


def test_targets_that_cannot_be_made_are_skipped_in_bold_yellow_when_none_is_named():
    selection = select(QUICK, method_missing=available, make_target=without("postgresql", "mariadb"))
    assert names(selection)[1] == ["sqlite", "duckdb"]
    assert selection.skipped == [Skipped("SKIPPING target postgresql: its server is not installed", "bold yellow"),
                                 Skipped("SKIPPING target mariadb: its server is not installed", "bold yellow")]


def test_a_target_no_method_reaches_is_left_out_without_a_note_when_none_is_named():
    selection = select(QUICK, methods=["py-sqlite3"], method_missing=available)
    assert names(selection) == (["py-sqlite3"], ["sqlite"])
    assert selection.skipped == []


def test_the_suites_own_paths_are_used_when_no_path_is_named_and_apply_where_they_can():
    suite = QUICK.model_copy(update={"paths": ["unix"]})
    selection = select(suite, method_missing=available)
    assert selection.paths == ["unix"]
    assert names(selection)[1] == ["postgresql", "mariadb"]  # sqlite has no unix path: left out, no error
    assert select(suite, paths=["inproc"], method_missing=available).paths == ["inproc"]


def test_without_paths_anywhere_every_path_of_each_target_is_meant():
    assert select(QUICK, method_missing=available).paths is None


def test_a_proxied_path_rides_on_tcp():
    selection = select(QUICK, paths=["tcp+250us"], method_missing=available, path_missing=available)
    assert names(selection)[1] == ["postgresql", "mariadb"]
    assert selection.paths == ["tcp+250us"]


def test_the_default_on_this_machine_selects_postgresql_mariadb_sqlite_and_duckdb():
    selection = select(QUICK)
    assert names(selection)[1] == ["postgresql", "mariadb", "sqlite", "duckdb"]
    assert selection.methods and selection.paths is None


def test_a_named_pooler_path_on_a_target_that_cannot_sit_behind_pgbouncer_is_refused_saying_why():
    refused("--target mariadb: pooler paths need a managed PostgreSQL (accessbench starts PgBouncer in front of it)",
            targets=["mariadb"], paths=["pooler"])
    refused("--path pooler: pooler paths need a managed PostgreSQL (accessbench starts PgBouncer in front of it)",
            targets=["mariadb"], paths=["tcp+1ms", "pooler"])


def test_a_suites_pooler_path_applies_only_to_the_targets_that_can_have_it():
    from accessbench.runner.plan import paths_of

    suite = load("s5-connections", quick=True)
    selection = select(suite, method_missing=available, path_missing=available)
    by_target = {t.name: paths_of(t, selection.paths) for t in selection.targets}
    assert by_target == {"postgresql": ["unix", "tcp", "pooler"], "mariadb": ["unix", "tcp"]}


def test_all_names_every_method_and_layers_each_layer_with_its_driver_skipping_what_cannot_run_here():
    every = [m.name for m in catalog()]
    chosen = select(QUICK, methods=["all"], method_missing=missing("py-pg8000"), path_missing=available,
                    make_target=targets.make)
    assert names(chosen)[0] == [n for n in every if n != "py-pg8000"]
    assert any("skipping py-pg8000" in s.text for s in chosen.skipped)
    layers = select(QUICK, methods=["layers"], method_missing=available, path_missing=available,
                    make_target=targets.make)
    over = {m.name: m.over for m in catalog() if m.over}
    assert set(names(layers)[0]) == set(over) | set(over.values())
