"""`run --profile`: where each cell's client and server backend spent their CPU, sampled by
each ecosystem's own sampler in a trial of its own — stored, listed by `show --profile`,
compared cell against cell, drawn as flame graphs in the HTML report; and what cannot be
profiled says why. Real runs, real samplers (perf, py-spy)."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from accessbench.methods import catalog
from accessbench.profile.folded import diff, frames, parse, share
from accessbench.profile.samplers import for_language, jfr_folded, unaddressed

from .conftest import accessbench

pytestmark = pytest.mark.server

METHODS = "rust-rusqlite,rust-diesel+sqlite,py-psycopg"


@pytest.fixture(scope="module")
def profiled(tmp_path_factory) -> str:
    store = str(tmp_path_factory.mktemp("profiles") / "results.db")
    result = accessbench("--store", store, "run", "--suite", "orm", "--quick", "--target", "sqlite,postgresql",
                         "--path", "inproc,unix", "--method", METHODS, "--step", "get-prepared", "--trials", "2",
                         "--precision", "0", "--no-report", "--profile", "1", timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    return store


def stored(store: str) -> dict[tuple[str, str], dict]:
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        return {(r["method"], r["side"]): dict(r) for r in db.execute(
            "SELECT c.method, p.* FROM profiles p JOIN cells c ON c.id = p.cell_id")}


def test_each_cell_gets_a_client_and_a_server_profile_or_says_why_not(profiled):
    profiles = stored(profiled)
    assert profiles[("rust-rusqlite", "client")]["sampler"] == "perf"
    assert profiles[("py-psycopg", "client")]["sampler"] == "py-spy"
    assert profiles[("py-psycopg", "native")]["sampler"] == "perf"  # its C extensions and libpq, beside py-spy
    assert profiles[("py-psycopg", "server")]["sampler"] == "perf"  # the PostgreSQL backend serving it
    assert ("rust-rusqlite", "native") not in profiles  # perf's client profile is native already
    for key in [("rust-rusqlite", "client"), ("rust-diesel+sqlite", "client"), ("py-psycopg", "client"),
                ("py-psycopg", "native"), ("py-psycopg", "server")]:
        assert profiles[key]["samples"] > 0 and profiles[key]["operations"] >= 1, key
        assert sum(parse(profiles[key]["folded"]).values()) == profiles[key]["samples"]
    assert "in-process" in profiles[("rust-rusqlite", "server")]["note"]


def test_a_language_with_no_sampler_here_says_so_in_place_of_its_profiles():
    assert for_language("cobol").missing() == "no sampler for cobol workers here"
    languages = {m.language for m in catalog() if not m.tier}
    assert {for_language(language).name for language in languages} == {"py-spy", "perf", "jfr", "perf (interpreter)"}


def test_a_profiles_trial_is_never_stored_as_a_timed_one(profiled):
    with sqlite3.connect(profiled) as db:
        counts = db.execute("SELECT c.method, count(*) FROM trials t JOIN cells c ON c.id = t.cell_id"
                            " WHERE t.phase = 'trial' GROUP BY c.method").fetchall()
    assert counts and all(n == 2 for _, n in counts), counts


def test_the_profile_shows_diesel_re_preparing_its_cached_statement_inside_sqlite3_step(profiled):
    # The finding a hand-taken profile once gave (Diesel on SQLite): rusqlite's cached statement
    # steps; Diesel's is re-prepared within sqlite3_step, parser and all.
    profiles = stored(profiled)
    diesel = parse(profiles[("rust-diesel+sqlite", "client")]["folded"])
    rusqlite = parse(profiles[("rust-rusqlite", "client")]["folded"])
    reprepared = lambda stacks: sum(n for s, n in stacks.items() if "sqlite3_step;sqlite3Reprepare" in s)  # noqa: E731
    assert reprepared(diesel) > 0.2 * sum(diesel.values())
    assert reprepared(rusqlite) == 0
    result = accessbench("--store", profiled, "show", "last", "--profile", "--method", "rust-diesel+sqlite",
                         "--against", "rust-rusqlite", "--top", "200")
    assert result.returncode == 0, result.stderr
    assert "rust-diesel+sqlite · get-prepared · sqlite/inproc · client against rust-rusqlite" in result.stdout
    assert "sqlite3Reprepare" in result.stdout


def test_show_profile_lists_each_sides_top_frames_and_draws_flame_graphs(profiled, tmp_path):
    result = accessbench("--store", profiled, "show", "last", "--profile", "--method", "py-psycopg", "--top", "5")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "py-psycopg · get-prepared · postgresql/unix · client: py-spy" in out
    assert "py-psycopg · get-prepared · postgresql/unix · server: perf" in out
    assert "self" in out and "total" in out
    svg = tmp_path / "diesel.svg"
    one = accessbench("--store", profiled, "show", "last", "--profile", "--method", "rust-diesel+sqlite",
                      "--flamegraph", str(svg))
    assert one.returncode == 0, one.stderr
    assert "<svg" in svg.read_text() and "sqlite3Reprepare" in svg.read_text()
    both = accessbench("--store", profiled, "show", "last", "--profile", "--method", "py-psycopg",
                       "--flamegraph", str(svg))
    assert both.returncode == 2 and "3 profiles match" in both.stderr  # its client, native and server
    server = accessbench("--store", profiled, "show", "last", "--profile", "--method", "py-psycopg", "--side",
                         "server", "--flamegraph", str(svg))
    assert server.returncode == 0 and "PostgresMain" in svg.read_text()


def test_the_html_report_holds_a_flame_graph_for_each_profile_and_says_why_for_the_others(profiled, tmp_path):
    result = accessbench("--store", profiled, "report", "last", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    [page] = tmp_path.glob("accessbench-*.html")
    html = page.read_text()
    assert html.count('class="flamegraph" src="data:image/svg+xml;base64,') == 5  # 3 clients, 1 native, 1 server
    assert "in-process: the engine runs inside the client" in html  # SQLite's server side


def test_show_profile_of_a_run_without_profiles_is_one_line(tmp_path):
    store = str(tmp_path / "r.db")
    assert accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "py-sqlite3", "--step",
                       "sel1-prepared", "--trials", "1", "--precision", "0", "--no-report").returncode == 0
    result = accessbench("--store", store, "show", "last", "--profile")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "has no profiles" in result.stderr
    against = accessbench("--store", store, "show", "last", "--against", "py-sqlite3")
    assert against.returncode == 2 and "add --profile" in against.stderr


def test_frames_count_self_and_total_samples_and_a_recursing_frame_once_per_stack():
    stacks = Counter({"main;run;parse;parse": 3, "main;run;step": 1})
    by_name = {f.name: f for f in frames(stacks)}
    assert (by_name["parse"].self_samples, by_name["parse"].total_samples) == (3, 3)
    assert (by_name["run"].self_samples, by_name["run"].total_samples) == (0, 4)
    assert frames(stacks)[0].name == "parse"


def test_a_share_is_printed_at_the_precision_its_samples_allow():
    assert share(3, 400) == "0.8%"
    assert share(20, 400) == "5%"
    assert share(50, 1000) == "5.0%"
    assert share(0, 0) == "—"


def test_a_diff_compares_shares_not_counts():
    a = Counter({"main;parse": 10, "main;step": 10})
    b = Counter({"main;parse": 30, "main;step": 10})  # twice the samples: parse's share grew
    [first, *_] = diff(a, b)
    assert first.name == "parse" and (first.a, first.b) == (0.5, 0.75)
    layer = diff(Counter({"main;step": 4}), Counter({"main;orm;step": 3, "main;orm": 1}))
    assert layer[0].name == "orm" and (layer[0].total_a, layer[0].total_b) == (0.0, 1.0)  # a layer moves in total


def test_jfr_samples_fold_root_first():
    recording = {"recording": {"events": [
        {"values": {"stackTrace": {"frames": [
            {"method": {"type": {"name": "org.postgresql.core.PGStream"}, "name": "receive"}},
            {"method": {"type": {"name": "accessbench.worker.Main"}, "name": "timed"}}]}}},
        {"values": {"stackTrace": None}}]}}
    assert jfr_folded(recording) == Counter({"accessbench.worker.Main.timed;org.postgresql.core.PGStream.receive": 1})


def test_a_native_frame_py_spy_could_not_name_is_named_by_its_library_so_that_two_processes_compare():
    one = unaddressed(Counter({"main (w.py);0x7efd9d045a10 (libc.so.6)": 2}))
    other = unaddressed(Counter({"main (w.py);0x7f80fe045b20 (libc.so.6)": 3}))
    assert set(one) == set(other) == {"main (w.py);[libc.so.6]"}


def test_a_library_a_wheel_bundles_is_named_without_its_build_hash():
    assert set(unaddressed(Counter({"main;[libpq-9b38f5e3.so.5.17]": 1}))) == {"main;[libpq.so.5.17]"}
