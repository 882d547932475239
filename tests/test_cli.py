"""The command line as a user meets it: options where they are typed, one clear line per error
on stderr with exit status 2, help texts that read right, NO_COLOR honoured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import accessbench


def test_the_store_option_is_accepted_after_the_subcommand_too(sqlite_store):
    result = accessbench("show", "--store", sqlite_store, "last")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("accessbench run ")


def test_a_usage_error_names_the_command_once_on_stderr_with_status_2():
    top = accessbench("--bogus")
    assert top.returncode == 2 and top.stdout == ""
    assert top.stderr.startswith("accessbench: unrecognized arguments: --bogus")
    sub = accessbench("run", "--trials", "x")
    assert sub.returncode == 2
    assert sub.stderr.startswith("accessbench: run: argument --trials: 'x' is not a whole number")
    assert "accessbench: accessbench" not in top.stderr + sub.stderr


def test_conformance_takes_methods_separated_by_commas_and_names_an_unknown_one_as_given():
    result = accessbench("conformance", "c-sqlite,no-such-method")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("accessbench: METHOD no-such-method: unknown (known: ")


def test_a_missing_results_file_is_named_as_the_user_named_it(tmp_path):
    in_run = accessbench("show", str(tmp_path / "gone.db") + ":last")
    assert in_run.returncode == 2
    assert in_run.stderr.startswith(f"accessbench: RUN {tmp_path / 'gone.db'}:last: no such results file")
    as_store = accessbench("--store", str(tmp_path / "gone.db"), "show", "last")
    assert as_store.returncode == 2
    assert as_store.stderr.startswith(f"accessbench: --store {tmp_path / 'gone.db'}: no such results file")


def test_predict_with_nothing_to_predict_says_so_on_stderr_with_status_2(sqlite_store):
    result = accessbench("predict", f"{sqlite_store}:last", "--latency", "1ms")
    assert result.returncode == 2 and result.stdout == ""
    assert "no cell on tcp whose round trips were counted" in result.stderr


def test_help_texts_show_a_percent_sign_once_and_the_default_targets():
    compare = accessbench("compare", "--help").stdout
    assert "R% and Diff%" in compare and "%%" not in compare
    assert "PostgreSQL and MariaDB" in accessbench("--help").stdout


@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux's script for a terminal")
@pytest.mark.parametrize("no_color", [False, True])
def test_colour_is_used_on_a_terminal_unless_no_color_is_set(sqlite_store, no_color):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | ({"NO_COLOR": "1"} if no_color else {})
    command = f"{sys.executable} -m accessbench --store {sqlite_store} show last"
    shown = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True, text=True, env=env,
                           timeout=300, stdin=subprocess.DEVNULL)
    assert shown.returncode == 0, shown.stdout[-2000:]
    assert ("\x1b[" in shown.stdout) is not no_color


def test_runs_lists_one_line_per_run_with_its_id_whole(sqlite_store):
    from accessbench.store import Store

    with Store(sqlite_store) as store:
        run = store.load(store.resolve("last")).run
    listing = accessbench("--store", sqlite_store, "runs").stdout.splitlines()
    assert listing[0].split() == ["run", "started", "(UTC)", "suite", "targets", "methods", "trials", "status"]
    assert len(listing) == 2 and listing[1].split()[0] == run["id"]
    assert listing[1].split()[3:] == ["quick", "sqlite", str(len({c["method"] for c in store_cells(sqlite_store)})),
                                      "3", "quick", "complete"]


def store_cells(path: str) -> list[dict]:
    from accessbench.store import Store

    with Store(path) as store:
        return store.load(store.resolve("last")).cells


def test_a_runs_label_is_listed_by_runs_and_heads_its_report(tmp_path):
    store = str(tmp_path / "results.db")
    result = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "py-sqlite3",
                         "--trials", "1", "--no-report", "--label", "laptop on battery")
    assert result.returncode == 0, result.stderr
    header, row = accessbench("--store", store, "runs").stdout.splitlines()
    assert header.split()[-1] == "label" and row.endswith("laptop on battery")
    assert "label: laptop on battery" in accessbench("--store", store, "show", "last").stdout.splitlines()


def test_step_measures_only_the_steps_named_and_a_resumed_run_keeps_them(tmp_path):
    store = str(tmp_path / "results.db")
    unknown = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--step", "sel1-prepared,nosuch")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.startswith("accessbench: --step nosuch: suite quick has no such step (its steps: ")
    assert len(unknown.stderr.splitlines()) == 1
    result = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "py-sqlite3",
                         "--trials", "1", "--no-report", "--step", "sel1-prepared")
    assert result.returncode == 0, result.stderr
    from accessbench.store import Store

    with Store(store) as s:
        stored = s.load(s.resolve("last"))
    assert {c.step for c in stored.cells} == {"sel1-prepared"}
    assert stored.run.settings["steps"] == ["sel1-prepared"]
    import sqlite3

    with sqlite3.connect(store) as db:  # as if stopped before its end: a resume keeps its steps
        db.execute("UPDATE runs SET status = 'interrupted'")
    other = accessbench("--store", store, "run", "--resume", "last", "--step", "scan-6k")
    assert other.returncode == 2 and "--step scan-6k differs from the run's sel1-prepared" in other.stderr
    again = accessbench("--store", store, "run", "--resume", "last", "--no-report")
    assert again.returncode == 0, again.stderr
    with Store(store) as s:
        assert {c.step for c in s.load(s.resolve("last")).cells} == {"sel1-prepared"}


def test_compare_calibrates_the_hosts_drift_and_later_comparisons_name_it(sqlite_store, tmp_path):
    store = tmp_path / "copy.db"
    shutil.copy(sqlite_store, store)
    first = accessbench("--store", str(store), "compare", "last", "last", "--calibrate", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "calibrated: on " in first.stdout and "up to ±0.0%" in first.stdout
    later = accessbench("--store", str(store), "compare", "last", "last", cwd=tmp_path)
    assert "this host's calibrated run-to-run drift ±0.0%" in later.stdout
    assert "a difference is called only beyond ±3.0%" in later.stdout
    assert "whole steps moved between the runs by +0.0% to +0.0%" in later.stdout.replace("\n", " ")


def test_a_step_varied_over_two_keys_is_named_whole_by_step_its_comma_and_all():
    from accessbench.arguments import build_parser

    args = build_parser().parse_args(["run", "--step", "get[mode=literal,rows=10],scan , ,put"])
    assert args.step == ["get[mode=literal,rows=10]", "scan", "put"]
    assert build_parser().parse_args(["run", "--method", "a,b"]).method == ["a", "b"]
