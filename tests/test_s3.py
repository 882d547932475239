"""Study S3 whole: APIBench's ten query types on 2,500 employees, every pair the study made
(ODBC against the native API, a wire-protocol driver against the vendor's library) as S3's
table, with the study's tallies."""

from __future__ import annotations

import pytest

from accessbench.methods import select
from accessbench.report.model import build
from accessbench.store import Store
from accessbench.suite.loader import SuiteError, builtin_text, load, parse

from .conftest import accessbench

TYPES = ["INS", "SEL1", "SEL2", "SEL3", "SEL4", "SEL5", "UPD1", "UPD2", "DEL1", "DEL2"]


def test_s3_apibench_has_the_studys_ten_query_types_on_2500_employees_and_a_department_table():
    suite = load("s3-apibench")
    tables = {t.name: t.rows for t in suite.variants[0].tables}
    assert tables["employee"] == 2500 and tables["department"] == 25
    assert [f.label for f in suite.study.figures] == TYPES
    steps = {s.name: s for s in suite.variants[0].steps}
    # one execution per trial: the row-at-a-time types reach every employee once
    assert {n: steps[n].iterations for n in ("ins", "sel5", "upd2", "del2")} == dict.fromkeys(
        ("ins", "sel5", "upd2", "del2"), 2500)
    assert all(steps[n].iterations == 1 for n in ("sel1", "sel2", "sel3", "sel4", "upd1", "del1"))


def test_a_pair_naming_a_method_that_does_not_exist_is_refused_where_it_is_written():
    text = builtin_text("s3-apibench").replace('candidates = ["c-odbc"]', 'candidates = ["c-odbcc"]')
    with pytest.raises(SuiteError, match=r"^mine\.toml:\d+: no method 'c-odbcc'"):
        parse(text, "mine.toml")


@pytest.fixture(scope="module")
def s3_run(tmp_path_factory):
    """S3 at --quick size on SQLite, ODBC against the native API from C and from Python."""
    if select(["c-odbc"])[0].missing():
        pytest.skip("the C worker is not built")
    work = tmp_path_factory.mktemp("s3")
    store = str(work / "s3.db")
    result = accessbench("--store", store, "run", "--full", "--suite", "s3-apibench", "--quick", "--target", "sqlite",
                         "--method", "c-odbc,c-sqlite,py-pyodbc,py-sqlite3", "--trials", "4", "--precision", "0",
                         "--report-dir", str(work / "html"), cwd=work)
    assert result.returncode == 0, result.stderr[-3000:]
    with Store(store) as s:
        stored = s.load(s.resolve("last"))
    return result, build(stored), work


def test_every_method_reads_and_writes_the_same_employees_but_pyodbc_its_sqlite_aggregates(s3_run):
    _, report, _ = s3_run
    # SQLite's ODBC driver types an aggregate's column as text: pyodbc hands SEL4's counts over
    # as strings, and the run says so instead of ranking them
    mismatched = {(c["method"], c["step"]) for c in report.stored.cells if c["status"] != "ok"}
    assert mismatched == {("py-pyodbc", "sel4")}


def test_s3s_table_pairs_odbc_with_the_native_api_per_type_with_the_studys_tally(s3_run):
    result, report, _ = s3_run
    titles = [p.title for p in report.pairs]
    assert titles == ["ODBC vs the native API, from C: c-odbc vs c-sqlite @ sqlite/inproc",
                      "ODBC vs the native drivers, from Python: py-pyodbc vs py-sqlite3 @ sqlite/inproc"]
    pair = report.pairs[0]
    assert [r.label for r in pair.rows] == TYPES
    assert [r.label for r in report.pairs[1].rows] == [t for t in TYPES if t != "SEL4"]  # not ranked: not paired
    assert pair.tally.startswith("ODBC faster in ") and "of 10 types by the mean" in pair.tally
    assert "native ahead by more than 10% in " in pair.tally
    # the study's own R% beside today's where it published both means (SEL3: 0.03 / 0.14)
    assert {r.label: r.published_r for r in pair.rows}["SEL3"] == "21%"
    assert pair.published_tally == ("published (Oracle 9i, wire-protocol ODBC vs Oracle 9i, native (OCI)): "
                                    "ODBC faster in 5 of 6 types; native ahead by more than 10% in 0")
    for row in pair.rows:  # each side: mean (min–max), then the median and its CI
        assert " (" in row.reference[0] and row.reference[1].startswith("median ")
    assert "c-odbc vs c-sqlite" in result.stdout and "study R%" in result.stdout


def test_the_study_table_shows_the_mean_execution_of_each_type_beside_oracle_9i(s3_run):
    _, report, work = s3_run
    study = report.study
    assert study.columns == TYPES
    assert [label for label, _ in study.published] == ["Oracle 9i, native (OCI)", "Oracle 9i, wire-protocol ODBC"]
    today = dict(study.today)
    assert all(text.endswith("s") for text in today["c-odbc @ sqlite/inproc"])  # a time for every type
    (page,) = (work / "html").glob("accessbench-*.html")
    html = page.read_text()
    assert "c-odbc vs c-sqlite" in html and "ODBC faster in " in html
