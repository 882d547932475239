"""`accessbench history`: each cell followed over the store's runs, oldest first, with the run
where it changed significantly marked; filters; and a filter that matches nothing is one line."""

from __future__ import annotations

import sqlite3

import pytest

from .conftest import accessbench

STEPS = "sel1-prepared,scan-6k"


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory) -> tuple[str, list[str]]:
    """Three real runs of two steps on SQLite; the third one's sel1-prepared trials then made a hundred
    times the second run's in the store — a stand-in for a driver release that slowed it, so that
    the change is known for certain whatever the machine's noise (two real runs of one setting
    differ only by noise, and a busy machine's trials may spread by several times)."""
    store = str(tmp_path_factory.mktemp("history") / "results.db")
    for _ in range(3):
        result = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--method", "py-sqlite3",
                             "--step", STEPS, "--trials", "5", "--precision", "0", "--no-report")
        assert result.returncode == 0, result.stderr[-3000:]
    with sqlite3.connect(store) as db:
        runs = [r[0] for r in db.execute("SELECT id FROM runs ORDER BY started_at, id")]
        db.execute("UPDATE trials SET elapsed_ns = 100 * (SELECT t.elapsed_ns FROM trials t JOIN cells c ON c.id = "
                   "t.cell_id WHERE c.run_id = ? AND c.step = 'sel1-prepared' AND t.phase = trials.phase AND t.seq = "
                   "trials.seq) WHERE cell_id IN (SELECT id FROM cells WHERE run_id = ? AND step = 'sel1-prepared')",
                   (runs[1], runs[2]))
    return store, runs


def test_a_cell_is_followed_over_every_run_oldest_first_and_the_slowdown_is_marked_at_its_run(three_runs):
    store, runs = three_runs
    result = accessbench("--store", store, "history", "--step", "sel1-prepared", "--noise", "25%")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "sel1-prepared · py-sqlite3 @ sqlite/inproc (suite quick)" in out
    assert [out.index(r) for r in runs] == sorted(out.index(r) for r in runs)  # oldest first
    last = next(line for line in out.splitlines() if runs[-1] in line)
    assert "▼ 100.00× slower [" in last, last  # each trial a hundred times the second run's
    summary = " ".join(out.split()).split("changed significantly")[-1]  # the A/A run may be called too, on a noisy host
    assert "py-sqlite3 @ sqlite/inproc · sel1-prepared at " in summary and summary.rstrip().endswith(runs[-1])


def test_only_the_cells_asked_for_and_with_changes_only_those_that_changed(three_runs):
    store, runs = three_runs
    both = accessbench("--store", store, "history", "--method", "py-sqlite3", "--noise", "25%")
    assert both.returncode == 0, both.stderr
    assert "scan-6k · py-sqlite3" in both.stdout and "sel1-prepared · py-sqlite3" in both.stdout
    assert "2 cells over 3 runs" in both.stdout
    changed = accessbench("--store", store, "history", "--changes", "--noise", "25%")
    assert "sel1-prepared · py-sqlite3" in changed.stdout
    assert "scan-6k · py-sqlite3" not in changed.stdout or "▼" in changed.stdout.split("scan-6k")[1]


def test_a_filter_that_matches_nothing_is_one_line_and_exit_2(three_runs):
    store, _ = three_runs
    result = accessbench("--store", store, "history", "--method", "py-nosuch")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().endswith("no verified cell in " + store + " matches --method py-nosuch")


def test_report_history_writes_a_page_of_each_cells_history_that_the_reports_cells_link_to(three_runs, tmp_path):
    import re

    store, runs = three_runs
    result = accessbench("--store", store, "report", "last", "--history", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    report = (tmp_path / f"accessbench-{runs[-1]}.html").read_text()
    history = (tmp_path / f"accessbench-{runs[-1]}-history.html").read_text()
    links = set(re.findall(rf'href="accessbench-{runs[-1]}-history\.html#(cell-[0-9a-f]+)"', report))
    assert len(links) == 2  # py-sqlite3's two cells
    assert all(f'id="{anchor}"' in history for anchor in links)
    assert history.count("<svg") == 2 and all(run in history for run in runs)
    assert "▼ " in history and "× slower [" in history
