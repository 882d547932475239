"""Study S1 whole: records per second beside the study's, each layer over its API, and the
crossover by result size."""

from __future__ import annotations

import numpy as np
import pytest

from accessbench.report.model import build
from accessbench.stats.sizes import size_sweeps
from accessbench.stats.cells import CellResult
from accessbench.store.model import Cell
from accessbench.stats.summary import summarize
from accessbench.store import Store
from accessbench.suite.loader import SuiteError, builtin_text, load, parse

from .conftest import accessbench


def test_s1_rps_reads_webtemp2_and_sweeps_result_sizes_from_one_row_to_100k_in_two_modes():
    variant = load("s1-rps").variants[0]
    tables = {t.name: t.rows for t in variant.tables}
    assert tables["webhits"] == 6071 and len(next(t for t in variant.tables if t.name == "webhits").columns) == 8
    sweep = [s for s in variant.steps if s._sweep]
    assert {s._sweep[0] for s in sweep} == {"rows-${rows}-${mode}"}  # one sweep, however many entries
    assert sorted({int(s.name.split("-")[1]) for s in sweep}) == [1, 10, 100, 1000, 6071, 100000]
    assert {s.mode for s in sweep} == {"extended", "prepared"}
    for s in sweep:  # each reads the table of its size
        assert tables[s.sql.rsplit(" ", 1)[-1]] == int(s.name.split("-")[1])


def _cell(method: str, size: int, mode: str, rows_per_s: list[float]) -> CellResult:
    """A measured read of ``size`` rows per operation (pure logic: the analysis of a sweep)."""
    ops = np.array(rows_per_s) / size
    r = CellResult(Cell(method=method, target="postgresql", path="unix", variant="", status="ok",
                        sweep="rows-${rows}-${mode}", sweep_series=f"mode={mode}", clients=1, rate=None,
                        step=f"rows-{size}-{mode}"), "ops", rate=summarize(ops), rates=ops)
    r.rows_per_op, r.row_rate, r.per_op_ns = float(size), summarize(rows_per_s), 1e9 / float(np.median(ops))
    return r


def _trials(centre: float) -> list[float]:
    return [centre * f for f in (0.99, 1.0, 1.01, 0.995, 1.005, 0.998, 1.002, 0.997)]


def test_a_crossover_is_named_where_the_leading_curve_changes_with_result_size():
    cells = []
    for size, (prepared, extended) in {1: (30_000, 10_000), 100: (300_000, 200_000),
                                       10_000: (500_000, 900_000)}.items():
        cells += [_cell("c-libpq", size, "prepared", _trials(prepared)), _cell("c-libpq", size, "extended", _trials(extended))]
    (sweep,) = size_sweeps(cells)
    assert [label for _, label in sweep.leaders] == ["c-libpq @ unix · mode=prepared"] * 2 + ["c-libpq @ unix · mode=extended"]
    assert sweep.verdicts[0] == ("fastest: crosses over — c-libpq @ unix · mode=prepared leads from 1 row to 100 rows; "
                                 "then c-libpq @ unix · mode=extended leads at 10,000 rows")
    assert sweep.verdicts[1] == ("c-libpq @ unix: crosses over — prepared faster from 1 row to 100 rows; "
                                 "then extended faster at 10,000 rows")


def test_no_crossover_is_claimed_when_one_curve_leads_at_every_size_or_none_clearly():
    cells = [_cell(m, size, "prepared", _trials(v * size)) for size in (1, 1000) for m, v in (("a", 2.0), ("b", 1.0))]
    (sweep,) = size_sweeps(cells)
    assert sweep.verdicts == ("fastest: no crossover — a @ unix · mode=prepared leads at every size (1 row to 1,000 rows)",)
    partly = cells[:2] + [_cell(m, 1000, "prepared", _trials(1000.0)) for m in ("a", "b")]
    assert size_sweeps(partly)[0].verdicts == (
        "fastest: no crossover — a @ unix · mode=prepared leads at 1 row, no curve clearly elsewhere",)
    alike = [_cell(m, size, "prepared", _trials(1000.0 * size)) for size in (1, 1000) for m in ("a", "b")]
    assert size_sweeps(alike)[0].verdicts == ("fastest: no clear lead at any size (within noise or not significant)",)


def test_a_method_without_a_crossover_of_its_own_says_so_and_s1s_claim_is_not_reproduced():
    from accessbench.stats.sizes import method_verdict
    from accessbench.studies.claims import CLAIMS, NOT_REPRODUCED, StudyRun

    cells = []
    for size in (1, 100, 10_000):  # prepared ahead at every size: no crossover, but measured
        cells += [_cell("c-libpq", size, "prepared", _trials(3.0 * size)), _cell("c-libpq", size, "extended", _trials(size))]
    (sweep,) = size_sweeps(cells)
    assert len(sweep.verdicts) == 1  # the report names crossovers only
    assert method_verdict(list(sweep.curves), "c-libpq", "unix") == (
        "c-libpq @ unix: no crossover — prepared faster at every size (1 row to 10,000 rows)")
    claim = next(c for c in CLAIMS if "crossover" in c.claim)
    finding = claim.evaluate({"s1": StudyRun("r", load("s1-rps"), cells)})
    assert finding.verdict == NOT_REPRODUCED and finding.today.startswith("no crossover — prepared faster")


@pytest.mark.parametrize("figure, error", [
    ('label = "x"\nstep = "rps"\nview = "best"', 'view = "best" goes with per = "unit"'),
    ('label = "x"\nstep = "rps"\nrelative_to = "over"', "relative_to goes with ratio"),
])
def test_a_study_figure_that_cannot_be_computed_is_refused_with_its_line(figure, error):
    broken = builtin_text("s1-rps").replace('[[study.figures]]\nlabel = "client best"', f'[[study.figures]]\n{figure}\n\n'
                                                                     '[[study.figures]]\nlabel = "client best"', 1)
    with pytest.raises(SuiteError) as e:
        parse(broken, "s1.toml")
    assert error in str(e.value) and str(e.value).startswith("s1.toml:")


def test_s1_rps_gives_records_per_second_beside_the_study_and_each_layer_over_its_api(tmp_path):
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--suite", "s1-rps", "--quick", "--target", "sqlite", "--method",
                         "py-sqlite3,py-sqlalchemy-core+sqlite3", "--trials", "3", "--precision", "0", "--no-report",
                         cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    shown = accessbench("--store", store, "show", "last", "--full", "--width", "100", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "Study S1, records per second by access method" in text and "6,266/s" in text and "54,205/s" in text
    assert "Result size: rows-${rows}-${mode} on sqlite, rows/s (median)" in text and "100,000 rows" in text
    assert all(len(line) <= 100 for line in text.splitlines())
    with Store(store) as s:
        report = build(s.load(s.resolve("last")))
    today = {label.split(" @ ")[0]: dict(zip(report.study.columns, texts)) for label, texts in report.study.today}
    layer, driver = today["py-sqlalchemy-core+sqlite3"], today["py-sqlite3"]
    best = {name: float(t["beside best"].removesuffix("/s").replace(",", "")) for name, t in today.items()}
    over = best["py-sqlalchemy-core+sqlite3"] / best["py-sqlite3"]  # of the rounded rates shown: within 1%
    assert float(layer["over its API"].removesuffix("×")) == pytest.approx(over, rel=0.01)
    assert driver["over its API"] == "" and driver["client best"] == ""  # no network side on SQLite: not 0
    (sweep,) = report.sizes
    assert {round(x) for c in sweep.curves for x, _ in c.points} == {1, 10, 100, 1000, 6071, 100000}
    assert len(sweep.curves) == 4 and sweep.verdicts[0].startswith("fastest: ")
    html = accessbench("--store", store, "report", "last", "--out", str(tmp_path / "html"), cwd=tmp_path)
    assert html.returncode == 0, html.stderr
    (page,) = (tmp_path / "html").glob("accessbench-*.html")
    assert "Rows per second vs result size" in page.read_text()
