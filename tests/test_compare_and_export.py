"""compare, the study views, report and export, as a user runs them: two real quick runs on
SQLite files (no server needed), read back through the CLI."""

from __future__ import annotations

import csv
from html import unescape
import io
import json
import os
import sqlite3

import pytest

from accessbench.export.model import Export, schema_json
from accessbench.methods import select
from accessbench.store import Store

from .conftest import accessbench

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHODS = "py-sqlite3,c-sqlite" if not select(["c-sqlite"])[0].missing() else "py-sqlite3"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    where = tmp_path_factory.mktemp("runs")
    store = str(where / "results.db")
    first = accessbench("--store", store, "run", "--full", "--quick", "--target", "sqlite", "--method", METHODS,
                        "--precision", "0", "--report-dir", str(where / "reports"), cwd=str(where))
    assert first.returncode == 0, first.stderr[-3000:]
    second = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", METHODS,
                         "--trials", "6", "--precision", "0", "--no-report", cwd=str(where))
    assert second.returncode == 0, second.stderr[-3000:]
    with Store(store) as s:
        ids = [r["id"] for r in reversed(s.runs())]
    return store, ids, first, where


def cli(store, *args):
    return accessbench("--store", store, *args, timeout=120)


def test_a_run_writes_its_html_report_at_the_end(two_runs):
    _, (first, _), result, where = two_runs
    path = where / "reports" / f"accessbench-{first}.html"
    assert f"HTML report: {path}" in result.stdout.replace("\n", "")
    assert path.read_text().lstrip().lower().startswith("<!doctype html>")
    assert not (where / "reports" / f"accessbench-{two_runs[1][1]}.html").exists()  # --no-report


def test_the_run_report_ends_with_grouped_warnings(two_runs):
    _, _, result, _ = two_runs
    assert "Warnings — the figures stand" in result.stdout
    assert "too short (a trial under 3 ms" in result.stdout  # quick sizes are short on SQLite


def test_show_offers_the_three_study_views_of_the_same_trials(two_runs):
    store, (first, _), _, _ = two_runs
    best, mean, per1000 = (cli(store, "show", first, "--view", v) for v in ("best", "mean", "per1000"))
    assert all(r.returncode == 0 for r in (best, mean, per1000))
    assert "best of the trials (study S1's rule)" in best.stdout
    assert "mean time per unit with the trials' min and max (study S3's rule)" in mean.stdout and "min–max" in mean.stdout
    assert "Seconds per 1,000 units" in per1000.stdout and "95% CI" not in per1000.stdout


def test_compare_two_runs_prints_s3s_table_with_verdicts_and_lists_what_differs(two_runs):
    store, (first, second), _, _ = two_runs
    result = cli(store, "compare", first, second)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"A: run {first}" in out and f"B: run {second}" in out
    assert "setting trials: 5 → 6" in out  # listed above the tables
    for header in ("Diff", "R%", "Diff%", "B vs A"):
        assert header in out
    assert "sel1-prepared — mean time per op" in out
    assert "pairs:" in out and "significantly faster" in out


def test_compare_against_a_base_method_puts_every_other_method_beside_it(two_runs):
    if "c-sqlite" not in METHODS:
        pytest.skip("c-sqlite is not built here: py-sqlite3 would have nothing beside it")
    store, (first, _), _, _ = two_runs
    result = cli(store, "compare", first, "--base", "py-sqlite3")
    assert result.returncode == 0, result.stderr
    assert "c-sqlite " in result.stdout and "method vs base" in result.stdout


@pytest.mark.parametrize("args, says", [
    (("compare", "last"), "give either RUN_B"),
    (("compare", "last", "--base", "no-such-method"), "--base no-such-method: not in run"),
    (("compare", "last", "nothing-like-this"), "RUN nothing-like-this: no run"),
    (("compare", "last", "last", "--alpha", "2"), "--alpha"),
    (("export", "last", "--format", "xml"), "--format"),
    (("show", "last", "--view", "worst"), "--view"),
])
def test_bad_input_is_one_line_and_exit_status_2(two_runs, args, says):
    result = cli(two_runs[0], *args)
    assert result.returncode == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_json_export_follows_the_published_schema_and_holds_every_trial(two_runs):
    store, (first, _), _, _ = two_runs
    result = cli(store, "export", first, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == "accessbench-export" and data["schema_version"] == 1
    export = Export.model_validate(data)
    with sqlite3.connect(store) as db:
        cells = db.execute("SELECT count(*) FROM cells WHERE run_id = ?", (first,)).fetchone()[0]
        trials = db.execute("SELECT count(*) FROM trials t JOIN cells c ON c.id = t.cell_id "
                            "WHERE c.run_id = ? AND t.phase = 'trial'", (first,)).fetchone()[0]
    assert len(export.cells) == cells and sum(len(c.trials) for c in export.cells) == trials
    measured = [c for c in export.cells if c.figure]
    assert measured and all(c.figure.ci_low <= c.figure.median <= c.figure.ci_high for c in measured)


def test_the_published_json_schema_is_the_one_the_code_writes():
    with open(os.path.join(ROOT, "docs", "export-schema-v1.json"), encoding="utf-8") as f:
        assert f.read() == schema_json(), "regenerate: python -m accessbench.export > docs/export-schema-v1.json"


def test_csv_export_has_a_row_per_cell_or_per_trial(two_runs, tmp_path):
    store, (first, _), _, _ = two_runs
    out = tmp_path / "cells.csv"
    assert cli(store, "export", first, "--format", "csv", "--out", str(out)).returncode == 0
    rows = list(csv.DictReader(out.open()))
    data = json.loads(cli(store, "export", first).stdout)
    assert len(rows) == len(data["cells"])
    by_key = {(c["step"], c["method"]): c for c in data["cells"]}
    for row in rows:
        cell = by_key[(row["step"], row["method"])]
        assert row["run_id"] == first and row["schema_version"] == "1"
        if cell["figure"]:
            assert float(row["median"]) == pytest.approx(cell["figure"]["median"])
    trials = list(csv.DictReader(io.StringIO(cli(store, "export", first, "--format", "csv", "--trials").stdout)))
    assert len(trials) == sum(len(c["trials"]) for c in data["cells"])
    assert {"elapsed_ns", "n", "user_ns"} <= set(trials[0])


def test_report_writes_one_self_contained_file_for_a_stored_run(two_runs, tmp_path):
    store, (_, second), _, _ = two_runs
    result = cli(store, "report", second, "--out", str(tmp_path / "out"), "--view", "best")
    assert result.returncode == 0, result.stderr
    path = tmp_path / "out" / f"accessbench-{second}.html"
    assert f"wrote {path}" in result.stdout
    html = path.read_text()
    assert "best of the trials (study S1's rule)" in unescape(html)
    assert "<script src" not in html and "https://" not in html.split("<pre")[0]


def test_what_was_not_compared_is_one_line_unless_all_is_asked():
    from accessbench.report.compare import render_comparison

    unmatched = [f"m{i} @ sqlite/inproc · connect" for i in range(10)]
    short = render_comparison([], "A", "B", [], unmatched).splitlines()
    assert short == ["not compared (10): m0 @ sqlite/inproc · connect; m1 @ sqlite/inproc · connect; "
                     "m2 @ sqlite/inproc · connect; … and 7 more (--all lists them)"]
    every = render_comparison([], "A", "B", [], unmatched, show_all=True).splitlines()
    assert every == ["not compared (10):"] + [f"  {line}" for line in unmatched]


def test_exports_carry_the_digits_measured_and_no_float_noise(sqlite_store):
    exported = accessbench("export", f"{sqlite_store}:last")
    assert exported.returncode == 0, exported.stderr

    def floats(value):
        if isinstance(value, float):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from floats(v)
        elif isinstance(value, list):
            for v in value:
                yield from floats(v)
    found = list(floats(json.loads(exported.stdout)))
    assert found and all(float(f"{v:.6g}") == v for v in found)  # six significant digits, no more
    csv_text = accessbench("export", f"{sqlite_store}:last", "--format", "csv").stdout
    assert "9999999" not in csv_text and "0000001" not in csv_text
