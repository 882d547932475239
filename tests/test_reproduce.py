"""`accessbench reproduce`: every claim of the five studies has its row, judged by the rule
beside it, on runs made and stored like any other."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from accessbench.methods import select
from accessbench.stats.cells import CellResult
from accessbench.stats.compare import compare
from accessbench.stats.summary import summarize
from accessbench.studies import RECIPES, resolve
from accessbench.studies import newest_runs, shown
from accessbench.studies.claims import (CLAIMS, NOT_MEASURED, NOT_REPRODUCED, REPRODUCED, REVERSED, UNTESTABLE,
                                        Cells, StudyRun, band, evaluate, judge_ratio)
from accessbench.store import Store
from accessbench.store.model import Cell, Run
from accessbench.suite.loader import load
from accessbench.errors import InputError

from .conftest import accessbench


def cell(rates, method="a", path="unix") -> CellResult:
    rates = np.asarray(rates, dtype=float)
    r = CellResult(Cell(**{"method": method, "target": "postgresql", "path": path, "step": "s", "step_index": 0,
                    "variant": "", "status": "ok", "kind": "exec", "mode": "prepared"}), "ops")
    r.rates, r.rate, r.unit_ns = rates, summarize(rates), summarize(1e9 / rates)
    return r


FAST, SLOW = [400, 402, 399, 401, 398], [100, 101, 99, 102, 100]


def test_a_ratio_claim_is_reproduced_in_its_direction_and_order_of_magnitude():
    assert judge_ratio(compare(cell(FAST), cell(SLOW)), published=4.2) == REPRODUCED
    assert judge_ratio(compare(cell(FAST), cell(SLOW)), published=30) == REPRODUCED  # 4× is within 10× of 30×


def test_a_ratio_claim_the_other_way_is_reversed_and_one_ten_times_off_is_not_reproduced():
    assert judge_ratio(compare(cell(SLOW), cell(FAST)), published=4.2) == REVERSED
    assert judge_ratio(compare(cell(FAST), cell(SLOW)), published=100) == NOT_REPRODUCED


def test_no_significant_difference_does_not_reproduce_a_claimed_one():
    assert judge_ratio(compare(cell([100, 101, 99, 100, 100]), cell([100, 100, 101, 99, 100])), 4.2) == NOT_REPRODUCED


def test_a_scaled_ratio_is_judged_after_scaling():
    # a procedure call runs 1,000 statements: 30 calls/s against 1,000 statements/s is 30× the loop
    calls, loop = cell([30, 30.2, 29.9, 30.1, 29.8]), cell([1000, 1001, 999, 1002, 1000])
    assert judge_ratio(compare(calls, loop), 12.5, scale=1000) == REPRODUCED


def test_a_band_claim_is_reproduced_only_when_the_costs_interval_meets_the_published_band():
    def verdict(plain, tls):
        claim = band("t", "TLS costs 7–10%", "7–10%", 0.07, 0.10, Cells(("a",), "s", "postgresql", "tcp"),
                     Cells(("a",), "s", "postgresql", "tcp+tls"))
        runs = {"t": StudyRun("r", None, [cell(plain, path="tcp"), cell(tls, path="tcp+tls")])}
        return claim.evaluate(runs).verdict

    plain = [1000, 1002, 998, 1001, 999]
    assert verdict(plain, [915, 917, 913, 916, 914]) == REPRODUCED      # 8.5% slower
    assert verdict(plain, [600, 602, 598, 601, 599]) == NOT_REPRODUCED  # 40%: far outside the band
    assert verdict(plain, [1200, 1202, 1198, 1201, 1199]) == REVERSED   # TLS faster
    assert verdict(plain, plain) == NOT_REPRODUCED                      # no significant cost


def test_every_study_has_its_claims_and_an_untestable_one_says_why():
    per_study = {s: [c for c in CLAIMS if c.study == s] for s in RECIPES}
    assert {s: len(cs) for s, cs in per_study.items()} == {"s1": 6, "s2": 5, "s3": 3, "s4": 6, "s5": 6,
                                                           "hostage": 7, "tfb": 2, "connections": 4, "orm": 1,
                                                           "upgrade": 3}
    assert {f.verdict for f in evaluate({})} == {NOT_MEASURED}  # no run: nothing judged, nothing invented
    empty = {s: StudyRun("r", load(r.suite), []) for s, r in RECIPES.items()}
    findings = evaluate(empty)
    for f in findings:  # runs without the cells a claim needs: it says which, and invents no figure
        assert not f.today and f.verdict in (NOT_MEASURED, UNTESTABLE)
        assert (f.where if f.verdict == NOT_MEASURED else f.rule)
    assert sum(f.verdict == UNTESTABLE for f in findings) == 7  # PgBouncer 1.21's, the paper's other DBMSs, TechEmpower's figures


def test_a_full_reproduction_of_s4_runs_the_cli_program_three_long_trials_without_an_extra_warm_up():
    from argparse import Namespace

    from accessbench.studies import run_arguments

    given = Namespace(store="s.db", timeout=None, report_dir=None, width=None, quick=False)
    full = run_arguments(RECIPES["s4"], given)
    assert (full.method, full.trials, full.warmup, full.precision, full.timeout) == (["c-odbc"], 4, 0, 0.0, 1800.0)
    quick = run_arguments(RECIPES["s4"], Namespace(**{**vars(given), "quick": True}))
    assert (quick.trials, quick.warmup, quick.quick) == (5, None, True)  # --quick: the run's defaults
    s1 = run_arguments(RECIPES["s1"], given)
    assert (s1.method, s1.trials, s1.precision) == (["all"], 5, None)  # every method, the precision target


def test_hostage_runs_the_papers_grid_in_full_and_its_corners_with_quick_each_point_plain_and_compressed():
    from argparse import Namespace

    from accessbench.studies import run_arguments

    given = Namespace(store="s.db", timeout=None, report_dir=None, width=None, quick=False)
    full = run_arguments(RECIPES["hostage"], given)
    assert (full.trials, full.warmup, full.timeout) == (4, 0, 1800.0)
    assert {"wire-floor", "py-psycopg/scan=copy-binary", "py-adbc"} <= set(full.method)  # --method transfer
    assert {"tcp", "tcp+compress", "tcp+100us@10mbit", "tcp+100ms@1gbit+compress", "inproc"} <= set(full.path)
    assert len(full.path) == 2 + 2 * 4 * 3 + 1
    quick = run_arguments(RECIPES["hostage"], Namespace(**{**vars(given), "quick": True}))
    assert quick.path == ["tcp", "tcp+compress", "tcp+100us@1gbit", "tcp+100us@100mbit", "tcp+100ms@1gbit",
                          "tcp+100ms@100mbit", "tcp+100us@1gbit+compress", "tcp+100us@100mbit+compress",
                          "tcp+100ms@1gbit+compress", "tcp+100ms@100mbit+compress"]
    assert quick.target == ["postgresql", "mariadb"] and "wire-floor" in quick.method
    mine = run_arguments(RECIPES["hostage"], Namespace(**{**vars(given), "quick": True, "path": ["tcp"]}))
    assert mine.path == ["tcp"]  # --path as `run` takes it: the user's own
    servers = run_arguments(RECIPES["hostage"], Namespace(**{**vars(given), "target": ["postgresql", "mariadb"]}))
    assert servers.path == full.path[:-1]  # the study's in-process reads left out where only servers are named
    # --quick measures the servers; on an embedded target alone it reads in process
    assert "inproc" not in quick.path
    embedded = run_arguments(RECIPES["hostage"], Namespace(**{**vars(given), "quick": True, "target": ["duckdb"]}))
    assert embedded.path == ["inproc"]
    assert "py-duckdb" in embedded.method  # the claims' methods reach no DuckDB: the study's own, quick-sized
    assert run_arguments(RECIPES["hostage"], Namespace(**{**vars(given), "quick": True, "target": ["postgresql"]})
                         ).method == quick.method


def test_show_reads_the_newest_complete_reproduction_not_a_later_interrupted_one():
    newest_first = [Run(id=id, status=status, started_at="", suite="s", suite_source="", suite_text="", settings={},
                        environment={}, version="") for id, status in (("c", "interrupted"), ("b", "complete"),
                                                                        ("a", "complete"))]
    assert shown(newest_first)["id"] == "b"
    assert shown(newest_first[:1])["id"] == "c"  # nothing completed: the interrupted run, which says so
    assert shown([]) is None


def test_an_unknown_study_is_one_clear_line():
    with pytest.raises(InputError, match=r"^reproduce s9: no such study \(choose from s1, s2, s3, s4, s5, hostage, tfb, "
                                         r"connections, orm, upgrade or all\)$"):
        resolve(["s9"])
    result = accessbench("reproduce", "s9")
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0 and "no such study" in result.stderr


def test_all_is_the_five_seed_studies_and_connections_is_asked_by_name():
    assert [r.study for r in resolve(["all"])] == ["s1", "s2", "s3", "s4", "s5"]
    assert [r.study for r in resolve(["connections"])] == ["connections"]


def test_the_table_is_headed_by_the_studies_it_holds():
    from accessbench.report.studies import heading
    from accessbench.studies.claims import Finding

    def of(*studies):
        return [Finding(s, "a claim", "", "", "reproduced", "") for s in studies]

    assert heading(of("s1", "s2", "s3", "s4", "s5")) == "The five studies today"
    assert heading(of("connections", "connections")) == "CONNECTIONS today"
    assert heading(of("s4", "connections")) == "S4 and CONNECTIONS today"


def test_show_without_a_stored_reproduction_says_so(tmp_path):
    result = accessbench("--store", str(tmp_path / "empty.db"), "reproduce", "s4", "--show")
    assert result.returncode == 2 and "holds no run of s4-roundtrip" in result.stderr


@pytest.mark.server
def test_reproducing_s4_quick_stores_its_run_and_judges_each_of_its_claims(tmp_path):
    if select(["c-libpq"])[0].missing():
        pytest.skip("the C worker is not built")
    store = str(tmp_path / "studies.db")
    result = accessbench("--store", store, "reproduce", "s4", "--quick", "--report-dir", str(tmp_path / "html"),
                         "--width", "400", cwd=tmp_path, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert re.search(r"reproducing 1 study \(--quick\): expected ", out)
    assert "study S4, local vs remote access" in out and "A remote call costs about four local ones" in out
    with Store(store) as s:
        runs = newest_runs(s, resolve(["s4"]))
    findings = [f for f in evaluate(runs) if f.study == "s4"]
    judged = [f for f in findings if f.verdict != UNTESTABLE]
    assert len(judged) == 5 and all(f.verdict in (REPRODUCED, NOT_REPRODUCED, REVERSED) for f in judged), judged
    assert all(re.match(r"\d", f.today) for f in judged)  # a figure, with its interval where it has one
    assert (tmp_path / "html" / "accessbench-studies.html").exists()
    again = accessbench("--store", store, "reproduce", "s4", "--show", "--report-dir", str(tmp_path / "html"),
                        "--width", "400")
    assert again.returncode == 0 and "A remote call costs about four local ones" in again.stdout
    assert "reproducing 1 study" not in again.stdout  # --show measures nothing
    assert "reproduce s4" in accessbench("--store", store, "runs").stdout
    markdown = accessbench("--store", store, "reproduce", "s4", "--show", "--markdown", "--report-dir", str(tmp_path / "html"))
    assert markdown.stdout.startswith("| study | claim |") and "HTML studies report" not in markdown.stdout
    assert "HTML studies report" in markdown.stderr  # the Markdown alone on stdout, to paste


def _on(target: str, path: str, rates=FAST, method="c-libpq") -> CellResult:
    r = cell(rates, method=method, path=path)
    r.cell = Cell(**{**{k: getattr(r.cell, k) for k in ("method", "path", "step", "step_index", "variant", "status",
                                                        "kind", "mode")}, "target": target})
    return r


def test_a_claim_is_judged_on_its_own_target_first_then_on_any_of_that_dbms():
    user = "postgresql://me@db.example:5432/app"
    own, theirs = _on("postgresql", "unix"), _on(user, "unix", SLOW)
    assert Cells(("c-libpq",), "s", "postgresql", "unix").find([theirs, own]) is own
    assert Cells(("c-libpq",), "s", "postgresql", "unix").find([theirs]) is theirs  # reproduce --target URL
    assert Cells(("c-libpq",), "s", "mariadb", "unix").find([theirs]) is None


def test_s4s_remote_call_is_tcp_to_a_server_named_by_url_else_the_latency_proxy():
    from accessbench.studies.claims import REMOTE

    user = "postgresql://me@remote.example:5432/app"
    proxied, real = _on("postgresql", "tcp+250us"), _on(user, "tcp", SLOW)
    local_tcp = _on("postgresql", "tcp")
    assert Cells(("c-libpq",), "s", "postgresql", REMOTE).find([proxied, real, local_tcp]) is real
    assert Cells(("c-libpq",), "s", "postgresql", REMOTE).find([proxied, local_tcp]) is proxied
    assert Cells(("c-libpq",), "s", "postgresql", REMOTE).find([local_tcp]) is None  # loopback is not remote


def read(method, target, path, rates) -> CellResult:
    """A whole-table read of the hostage study (lineitem), rates in reads per second."""
    r = cell(rates, method, path)
    r.cell = replace(r.cell, target=target, step="lineitem", kind="scan")
    r.floor = method == "wire-floor"
    return r


def hostage(*cells) -> dict:
    return {f.claim: f for f in evaluate({"hostage": StudyRun("r", None, list(cells))}) if f.study == "hostage"}


def test_hostage_sets_each_protocol_against_the_wires_floor_on_loopback_the_floor_read_though_never_ranked():
    floor, odbc = read("wire-floor", "postgresql", "tcp", [100, 101, 99, 100, 102]), read("c-odbc", "postgresql", "tcp", [8, 8.1, 7.9, 8, 8])
    assert not floor.ranked
    found = hostage(floor, odbc)["PostgreSQL's client protocol takes about twenty times the wire's time over loopback"]
    assert found.verdict == REPRODUCED and found.today.startswith("12.5×") and "c-odbc" in found.where


def test_compression_pays_on_the_narrowest_link_and_today_says_up_to_which_bandwidth():
    cells = [read("c-libmariadb", "mariadb", f"tcp+100us@{link}{packed}", rates)
             for link, plain, compressed in [("10mbit", [1, 1.01, 0.99, 1, 1], [3, 3.02, 2.98, 3, 3]),
                                              ("100mbit", [8, 8.1, 7.9, 8, 8], [9, 9.1, 8.9, 9, 9]),
                                              ("1gbit", [20, 20.2, 19.8, 20, 20], [10, 10.1, 9.9, 10, 10])]
             for packed, rates in [("", plain), ("+compress", compressed)]]
    found = hostage(*cells)["…and pays once the network narrows"]
    assert found.verdict == REPRODUCED
    assert "on 100 µs each way at 10 Mbit/s" in found.today and "pays up to 100 Mbit/s" in found.today


def test_the_protocols_cost_over_the_floor_falls_as_latency_grows_or_the_claim_says_it_did_not():
    def run(far_rate):
        return [read("wire-floor", "postgresql", "tcp+100us@1gbit", [100, 101, 99, 100, 100]),
                read("c-libpq", "postgresql", "tcp+100us@1gbit", [10, 10.1, 9.9, 10, 10]),
                read("wire-floor", "postgresql", "tcp+100ms@1gbit", [2, 2.02, 1.98, 2, 2]),
                read("c-libpq", "postgresql", "tcp+100ms@1gbit", far_rate)]
    claim = "As latency grows the network's time dominates: each protocol's × the wire falls"
    falls = hostage(*run([1.6, 1.61, 1.59, 1.6, 1.6]))[claim]      # 10× near, 1.25× far
    assert falls.verdict == REPRODUCED and "c-libpq @ postgresql: 10× at 100 µs → 1.25× at 100 ms, 1,000 Mbit/s" in falls.today
    assert hostage(*run([0.2, 0.201, 0.199, 0.2, 0.2]))[claim].verdict == NOT_REPRODUCED  # 10× both
    assert hostage()[claim].verdict == NOT_MEASURED


def test_the_hostage_grid_lays_each_targets_reads_out_by_delay_and_bandwidth_each_beside_its_paths_floor():
    from accessbench.report.studies import render_studies, render_studies_markdown
    from accessbench.report.transfer import grid_tables

    cells = [read(method, "mariadb", f"tcp+{delay}@{link}{packed}", [rate * k for k in (1, 1.01, 0.99, 1, 1)])
             for delay in ("100us", "100ms") for link, rate in (("1gbit", 10), ("100mbit", 1))
             for method, packed, rate in (("wire-floor", "", rate * 10), ("c-libmariadb", "", rate),
                                          ("c-libmariadb", "+compress", rate * 2))]
    cells += [read("wire-floor", "mariadb", "tcp", [100] * 5), read("c-libmariadb", "mariadb", "tcp", [10] * 5)]
    (grid,) = grid_tables(cells)
    assert grid.columns == ["method", "one-way delay", "1,000 Mbit/s", "100 Mbit/s"]
    rows = {(r.method, r.delay_us): grid.cells(r) for r in grid.rows}
    assert set(rows) == {(m, d) for m in ("c-libmariadb", "c-libmariadb+compress") for d in (100.0, 100_000.0)}
    assert rows[("c-libmariadb", 100.0)][2].endswith("(10×)") and rows[("c-libmariadb+compress", 100.0)][3].endswith("(5×)")
    assert grid_tables(cells[-2:]) == []  # loopback alone is no grid
    text = render_studies(list(hostage(*cells).values()),
                          {"hostage": StudyRun("r", None, cells)}, width=200)
    assert "HOSTAGE: each read beside the wire's floor — beside the paper" in text and "netcat 10.25 s" in text
    assert "Grid: lineitem on mariadb" in text
    # the path-by-path table keeps loopback only: the grid shows the proxied paths
    assert "Transfer: lineitem" in text and "tcp+100us@1gbit" not in text.split("Grid:")[0].split("Transfer:")[1]
    # --markdown: the claims, then the same tables to paste into a README
    markdown = render_studies_markdown(list(hostage(*cells).values()), {"hostage": StudyRun("r", None, cells)})
    assert markdown.startswith("| study | claim |") and "#### Grid: lineitem on mariadb" in markdown
    assert "| c-libmariadb | 100 µs | " in markdown and "#### Transfer: lineitem" in markdown


def test_the_studies_page_draws_the_hostage_grid_as_the_wires_floor_against_the_delay(tmp_path):
    from accessbench.report.studies import write_studies_html

    cells = [read(method, "postgresql", f"tcp+{delay}@1gbit", [rate] * 5)
             for delay, rate in (("100us", 10), ("100ms", 2)) for method, rate in (("wire-floor", rate * 10),
                                                                                    ("c-libpq", rate))]
    run = StudyRun("r", SimpleNamespace(name="transfer"), cells)
    page = open(write_studies_html(list(hostage(*cells).values()), {"hostage": run}, str(tmp_path))).read()
    assert "Grid: lineitem on postgresql" in page and page.count('class="chart chart-floor-delay"') == 1
    assert "c-libpq at 1,000 Mbit/s" in page


def page(method, step, rates) -> CellResult:
    """A tfb cell: a page under load, rates in requests per second."""
    r = cell(rates, method, "tcp")
    r.cell = replace(r.cell, step=step, kind="page")
    r.per_op_ns = 1e9 / r.rate.median
    return r


def tfb(*cells) -> dict:
    return {f.claim: f for f in evaluate({"tfb": StudyRun("r", load("tfb", quick=True), list(cells))})
            if f.study == "tfb"}


def test_tfb_judges_the_multiple_queries_convergence_for_every_tier_method_at_the_most_connections_both_pages_have():
    claim = "Multiple queries: at 20 queries a request every framework converges toward zero requests/s"
    php = [page("php-apache-pdo-pgsql/load=wrk", "queries-1-c16", FAST), page("php-apache-pdo-pgsql/load=wrk", "queries-20-c16", FAST),
           page("php-apache-pdo-pgsql/load=wrk", "queries-1-c256", FAST), page("php-apache-pdo-pgsql/load=wrk", "queries-20-c256", SLOW)]
    found = tfb(*php)[claim]
    assert found.verdict == REPRODUCED and found.today.startswith("php-apache-pdo-pgsql/load=wrk @ postgresql: 0.25×")
    assert "at 256 connections" in found.today and found.ratio[0] == pytest.approx(0.25, rel=0.02)
    node = [page("node-http-pg/load=wrk", "queries-1-c256", FAST), page("node-http-pg/load=wrk", "queries-20-c256", FAST)]
    assert tfb(*php, *node)[claim].verdict == NOT_REPRODUCED  # one framework whose rate did not fall
    assert tfb(*php[:2])[claim].verdict == NOT_REPRODUCED     # only at 16 connections, where they did not differ
    assert tfb(page("node-http-pg/load=wrk", "db-c256", FAST))[claim].verdict == NOT_MEASURED


def test_the_tfb_studys_tables_begin_with_its_suites_requests_per_second_per_test_and_their_ratios():
    from accessbench.report.studies import render_studies_markdown, study_tables

    method = "php-apache-pdo-pgsql/load=wrk"
    cells = [page(method, "queries-1-c64", FAST), page(method, "queries-20-c64", SLOW)]
    run = StudyRun("r", load("tfb", quick=True), cells)
    ((study, tables),) = study_tables({"tfb": run})
    assert study == "tfb" and tables[0].title.startswith("TechEmpower's Framework Benchmarks, database tests")
    (today,) = [row for row in tables[0].rows if row[0].startswith(method)]
    texts = dict(zip(tables[0].columns, tables[0].cells(today)))
    assert (texts["1 query"], texts["20 queries"], texts["20 queries / 1"]) == ("400", "100", "0.25×")
    markdown = render_studies_markdown(list(tfb(*cells).values()), {"tfb": run})
    assert "#### TechEmpower's Framework Benchmarks, database tests" in markdown and "| 0.25× |" in markdown
    # the hostage study's reads are its own tables: no suite table repeats them
    hostage_run = StudyRun("h", load("transfer", quick=True), [read("wire-floor", "postgresql", "tcp", [100] * 5),
                                                               read("c-libpq", "postgresql", "tcp", [10] * 5)])
    ((_, theirs),) = study_tables({"hostage": hostage_run})
    assert [t.title.split(":")[0] for t in theirs] == ["Transfer"]


def test_tfb_quick_runs_each_page_language_at_64_connections_on_postgresql_and_the_full_one_every_step():
    from argparse import Namespace

    from accessbench.studies import run_arguments

    given = Namespace(store="s.db", timeout=None, report_dir=None, width=None, quick=True)
    quick = run_arguments(RECIPES["tfb"], given)
    assert quick.method == ["php-apache-pdo-pgsql/load=wrk", "py-gunicorn-psycopg/load=wrk", "node-http-pg/load=wrk",
                            "rb-puma-pg/load=wrk", "pl-starman-pg/load=wrk"]
    assert quick.target == ["postgresql"] and all(s.endswith("-c64") for s in quick.step)
    assert quick.warmup == 3  # 4.5 s of load before a cell's first trial, as TechEmpower primes a test
    steps = {s.name for s in load("tfb", quick=True).variants[0].steps}
    assert set(quick.step) <= steps  # every step --quick names is the suite's
    full = run_arguments(RECIPES["tfb"], Namespace(**{**vars(given), "quick": False}))
    assert (full.step, full.trials) == (None, 4)  # every step, four trials of 15 s
    assert {"php-apache-pgsql/load=wrk", "php-apache-mysqli/load=wrk", "py-gunicorn-mysqlclient/load=wrk",
            "node-http-mysql2/load=wrk"} <= set(full.method)  # every tier method, under wrk


def test_the_expected_time_is_the_last_runs_the_reference_machines_or_for_tfb_more_than_the_given_methods_trials_last(tmp_path):
    from accessbench.studies import expected_time, fixed_seconds

    # --quick: 5 methods × (5 trials + 3 warm-ups) × 5 steps of 1.5 s
    assert fixed_seconds(RECIPES["tfb"], True) == pytest.approx(5 * 8 * 5 * 1.5)
    assert fixed_seconds(RECIPES["hostage"], False) is None  # a read lasts as long as it takes
    # the user's --method is what the run will measure, and so what the time counts
    one = SimpleNamespace(target=None, path=None, method=["php-apache-pgsql/load=wrk"])
    assert fixed_seconds(RECIPES["tfb"], True, one) == pytest.approx(1 * 8 * 5 * 1.5)
    with Store(str(tmp_path / "s.db")) as store:
        full = expected_time(store, [RECIPES["tfb"]], quick=False)
        assert full.startswith("reproducing 1 study: expected over ") and "tfb over " in full
        assert "servers, loads and verification come on top" in full
        assert expected_time(store, [RECIPES["s4"]], quick=False).startswith("reproducing 1 study: expected about 59:41")
        unknown = expected_time(store, [RECIPES["tfb"], RECIPES["hostage"]], quick=False)
        assert "expected time not known" in unknown
        # the full grid, read as long as it reads, says how to have it estimated
        assert "hostage not known (a `reproduce hostage --quick` first, about 7:54 on the reference machine" in unknown


def test_an_estimate_missing_some_methods_reads_over_and_says_how_to_store_them(tmp_path, monkeypatch):
    from accessbench import studies
    from accessbench.studies.estimate import Estimate

    monkeypatch.setattr(studies, "estimated", lambda *a, **k: Estimate(seconds=3600.0, cells=10, unknown=3, source="r1"))
    with Store(str(tmp_path / "s.db")) as store:
        text = studies.expected_time(store, [RECIPES["hostage"]], quick=False)
    assert text.startswith("reproducing 1 study: expected over 1:00:00 — hostage over 1:00:00‡")
    assert "estimated from run r1" in text and "3 of its 10 cells not estimated" in text
    assert "a `reproduce hostage --quick` with the same --target and --method stores them" in text


def test_a_full_grids_reads_are_estimated_from_each_methods_pace_and_bytes_per_row_in_a_stored_run():
    from types import SimpleNamespace

    from accessbench.studies.estimate import estimate, rates

    def cell(method, path, per_op_ns=None, rows=100_000, bytes_per_row=None, round_trips=None, status="ok"):
        return SimpleNamespace(cell=SimpleNamespace(target="mariadb", method=method, path=path, status=status),
                               verified=status == "ok", rows_per_op=rows, per_op_ns=per_op_ns,
                               bytes_per_row=bytes_per_row, round_trips_per_op=round_trips)

    measured = rates([
        cell("c-libmariadb", "tcp", per_op_ns=200e6),                                   # 2 µs a row on loopback
        cell("c-libmariadb", "tcp+100us@100mbit", per_op_ns=900e6, bytes_per_row=125, round_trips=3),
        cell("c-libmariadb", "tcp+compress", per_op_ns=500e6),                          # 5 µs a row, compressing
        cell("c-libmariadb", "tcp+100us@100mbit+compress", per_op_ns=600e6, bytes_per_row=25, round_trips=3),
        cell("py-connectorx", "tcp+compress", status="unsupported"),
        # decimals at another scale: a mismatch, whose reads take as long as they take
        cell("py-connectorx", "tcp", per_op_ns=300e6, status="mismatch"),
        cell("py-connectorx", "tcp+100us@100mbit", per_op_ns=1000e6, bytes_per_row=125, status="mismatch"),
    ])
    one = lambda path, method="c-libmariadb": estimate([("mariadb", method, path)], 1_000_000, 4, measured, "r")  # noqa: E731
    # 10 Mbit/s: 125 MB at 1.25 MB/s = 100 s, over the 2 s the method takes itself; 3 round trips of 2 × 100 ms
    assert one("tcp+100ms@10mbit").seconds == pytest.approx(4 * (100 + 0.6))
    assert one("tcp+100us@1gbit").seconds == pytest.approx(4 * (2 + 0.0006))  # 1 s on the wire: the method's 2 s
    assert one("tcp+1ms@10mbit+compress").seconds == pytest.approx(4 * (20 + 0.006))  # compressed: 25 MB
    assert one("tcp").seconds == pytest.approx(8)
    assert one("tcp+compress", "py-connectorx").seconds == 0 and one("tcp+compress", "py-connectorx").unknown == 0
    assert one("tcp+100us@1gbit", "py-connectorx").seconds == pytest.approx(4 * 3)
    missing = one("tcp+1ms@10mbit", "c-odbc")  # a method the stored run did not read: not estimated, and said so
    assert (missing.seconds, missing.unknown, missing.cells) == (0, 1, 1)


def test_a_stored_run_is_a_studys_reproduction_by_its_label_and_suite_so_a_resumed_one_says_where_its_claims_are():
    from accessbench.studies import study_of

    run = lambda suite, label: SimpleNamespace(suite=suite, settings={"label": label} if label else {})  # noqa: E731
    assert study_of(run("transfer", "reproduce hostage")) == "hostage"
    assert study_of(run("tfb", "reproduce tfb")) == "tfb"
    assert study_of(run("quick", "reproduce hostage")) is None  # another suite under the label: not the study's
    assert study_of(run("transfer", None)) is None and study_of(run("transfer", "mine")) is None
