"""The regression gate (`compare --fail-on`): a CI job's script that makes a base run, an A/A
run and a run slowed on purpose over a latency path, and the gate's exit status for each; the
rules as written; and a cell that reads other rows than its reference."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from accessbench.stats.compare import Pair, compare
from accessbench.stats.gate import Rule, parse_rule, trips
from accessbench.stats.cells import CellResult
from accessbench.stats.summary import summarize
from accessbench.store.model import Cell

from .conftest import accessbench

SCRIPT = Path(__file__).parent / "ci" / "gate.sh"


@pytest.mark.server
def test_the_ci_script_fails_the_gate_on_the_slowed_run_and_passes_it_on_an_a_a_pair(tmp_path):
    os.chmod(tmp_path, 0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["ACCESSBENCH"] = str(Path(sys.executable).parent / "accessbench")
    result = subprocess.run([str(SCRIPT), str(tmp_path)], capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "A/A gate: exit 0; slowed gate: exit 1" in result.stdout
    assert "gate passed: no cell trips slower>50%, mismatch (1 pair compared)" in result.stdout
    assert "gate failed: 1 cell trips slower>50%, mismatch (1 pair compared):" in result.stdout
    assert "slower>50%: py-psycopg @ postgresql/tcp+10ms · sel1-prepared: " in result.stdout
    slowed = (tmp_path / "slowed.md").read_text()
    assert slowed.startswith("## accessbench regression gate: failed\n")
    assert "| `slower>50%` | py-psycopg @ postgresql/tcp+10ms | sel1-prepared |" in slowed
    assert "× slower [" in slowed
    assert (tmp_path / "aa.md").read_text().startswith("## accessbench regression gate: passed\n")


def test_rules_read_as_written_and_a_wrong_one_says_what_a_rule_is():
    assert parse_rule("slower>5%") == Rule("slower", 0.05)
    assert parse_rule(" Faster > 12.5% ") == Rule("faster", 0.125)
    assert parse_rule("width>10%") == Rule("width", 0.10)
    assert parse_rule("mismatch") == Rule("mismatch", None)
    assert str(parse_rule("slower>5%")) == "slower>5%"
    for wrong in ("slower>5", "slower<5%", "mismatch>1%", "slowr>5%", ""):
        with pytest.raises(ValueError, match="is not a rule"):
            parse_rule(wrong)


def _result(checksum: str, rates: list[float], rows: int = 1) -> CellResult:
    cell = Cell(variant="", step="sel1", target="sqlite", path="inproc", method="py-sqlite3", status="ok",
                checksum=checksum, verify_rows=rows)
    result = CellResult(cell, "ops", rates=np.array(rates))
    result.rate = summarize(result.rates)
    return result


def test_a_cell_that_reads_other_rows_than_its_reference_trips_mismatch_and_no_speed_rule():
    before, after = _result("abc", [100, 101, 99, 100, 102]), _result("abd", [100, 100, 101, 99, 100])
    pair = Pair(before, after, compare(after, before))
    tripped = trips([parse_rule("mismatch"), parse_rule("slower>5%"), parse_rule("faster>5%")], [pair], [after])
    assert [(str(t.rule), t.what) for t in tripped] == [
        ("mismatch", "reads otherwise: checksum abd where py-sqlite3 @ sqlite/inproc has abc")]


def test_a_significant_slowdown_trips_slower_only_beyond_its_limit():
    before, after = _result("abc", [100, 101, 99, 100, 102]), _result("abc", [80, 81, 79, 80, 80])
    pair = Pair(before, after, compare(after, before))
    assert pair.comparison.significant
    assert [str(t.rule) for t in trips([parse_rule("slower>10%")], [pair], [after])] == ["slower>10%"]
    assert trips([parse_rule("slower>30%"), parse_rule("faster>1%")], [pair], [after]) == []


def test_a_wrong_rule_or_a_summary_without_rules_is_one_line_and_exit_2(sqlite_store):
    wrong = accessbench("--store", sqlite_store, "compare", "last", "last", "--fail-on", "slowr>5%")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.strip() == ("accessbench: compare: argument --fail-on: 'slowr>5%' is not a rule (slower>PCT, "
                                    "faster>PCT, width>PCT or mismatch; e.g. slower>5%) (see accessbench compare --help)")
    alone = accessbench("--store", sqlite_store, "compare", "last", "last", "--summary", "gate.md")
    assert alone.returncode == 2 and len(alone.stderr.splitlines()) == 1
    assert "--summary: it writes the gate's verdict; give the rules with --fail-on" in alone.stderr


def test_a_run_against_itself_passes_every_rule_but_width_where_a_cell_is_loose(sqlite_store, tmp_path):
    summary = tmp_path / "gate.md"
    same = accessbench("--store", sqlite_store, "compare", "last", "last", "--fail-on", "slower>0%",
                       "--fail-on", "faster>0%,mismatch", "--summary", str(summary))
    assert same.returncode == 0, same.stderr
    assert "gate passed: no cell trips slower>0%, faster>0%, mismatch (" in same.stdout
    assert summary.read_text().startswith("## accessbench regression gate: passed\n")
    loose = accessbench("--store", sqlite_store, "compare", "last", "last", "--fail-on", "width>0%")
    assert loose.returncode == 1
    assert "width>0%: py-sqlite3 @ sqlite/inproc · " in loose.stdout and "its median is known within ±" in loose.stdout
