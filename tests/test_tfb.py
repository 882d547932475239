"""TechEmpower's database tests as the tier's pages (docs/tier.md, TechEmpower's tests): the
suite is its schema and its four tests; a page's answer is held to the test's rules (pure
logic); and the PHP, Python, Node, Ruby and Perl pages run under real app servers over real databases,
every read verified."""

from __future__ import annotations

import json
import socket
import sqlite3

import pytest

from accessbench.protocol import generators
from accessbench.suite.loader import SuiteError, builtin_text, load, parse
from accessbench.tier import tfb

from .conftest import accessbench
from .test_tier import _cells, _needs

FORTUNES = load("tfb").variants[0].tables[2]


def fortunes_read() -> list[tuple[int, str]]:
    """The rows a fortunes page shows: the table's, the added one, sorted by message."""
    specs = [c.gen.wire(1) for c in FORTUNES.columns]
    return sorted([*generators.rows(specs, FORTUNES.rows), (0, tfb.ADDED)], key=lambda r: r[1])


def test_the_tfb_suite_is_techempowers_schema_and_its_four_tests_at_its_concurrency_levels():
    suite = load("tfb")
    world, copy, fortune = suite.variants[0].tables
    assert (world.name, world.rows, [c.name for c in world.columns]) == ("world", 10_000, ["id", "randomnumber"])
    assert (copy.rows, copy.columns) == (10_000, world.columns)
    messages = [m for _, m in generators.rows([c.gen.wire(1) for c in fortune.columns], fortune.rows)]
    assert len(messages) == 12 and messages[0] == "fortune: No such file or directory"
    assert "<script>" in messages[10] and messages[11] == "フレームワークのベンチマーク"
    steps = suite.variants[0].steps
    assert {s.page for s in steps} == set(tfb.PAGES) and suite.methods == ["web/load=wrk"]
    assert {s.clients for s in steps} == {16, 32, 64, 128, 256}
    assert {s.queries for s in steps if s.page in ("queries", "updates")} == {1, 5, 10, 15, 20}
    assert all(s.reads_rows and s.kind == "page" and s.mode is None for s in steps)


def test_web_with_a_setting_is_every_tier_method_so_and_a_wrong_value_is_refused():
    from accessbench.errors import InputError
    from accessbench.methods import catalog, select

    tier = [m.name for m in catalog() if m.web]
    chosen = select(["web/load=wrk"])
    assert [m.name for m in chosen] == [f"{n}/load=wrk" for n in tier]
    assert all(m.tier and m.command()[-1] == m.name for m in chosen)
    assert [m.name for m in select(["node-http-pg/load=wrk"])] == ["node-http-pg/load=wrk"]
    with pytest.raises(InputError, match=r"--method web/load=siege: php-apache-pgsql/load takes ab or wrk, not 'siege'"):
        select(["web/load=siege"])


def test_a_list_generator_fills_a_tables_column_in_order_and_is_refused_as_a_steps_parameter():
    assert generators.rows([{"kind": "list", "values": ["a", "b"], "seed": 9}], 3) == [("a",), ("b",), ("a",)]
    text = load_text().replace('params = [{ kind = "uniform", lo = 1, hi = 10000 }]',
                               'params = [{ kind = "list", values = [1, 2] }]', 1)
    with pytest.raises(SuiteError, match=r"tfb\.toml:\d+: steps\.0\.params\.0: a list generator is for a "
                                         r"table's columns only"):
        parse(text, "tfb.toml")


def load_text() -> str:
    from accessbench.suite.loader import builtin_text

    return builtin_text("tfb")


@pytest.mark.parametrize("old, new, message", [
    ('write = "UPDATE world_updated SET randomnumber = ? WHERE id = ?"\n', "", "the updates page needs write"),
    ('page = "db"\n', 'page = "db"\nqueries = 5\n', "queries applies to the queries and updates pages only, not db"),
    ('sql = "SELECT id, message FROM fortune"\n', 'sql = "SELECT id, message FROM fortune WHERE id = ?"\n'
     'params = [{ kind = "uniform", lo = 1, hi = 12 }]\n', "the fortunes page takes no params"),
    ('UPDATE world_updated SET randomnumber = ? WHERE id = ?', 'UPDATE world_updated SET randomnumber = 1 WHERE id = ?',
     "write has 1 '\\?' markers: it takes two"),
    ('page = "db"\n', 'page = "db"\nreset = ["SELECT 1"]\n', "not reset"),
])
def test_a_page_of_techempowers_tests_takes_what_its_test_runs_and_nothing_else(old, new, message):
    with pytest.raises(SuiteError, match=message):
        parse(load_text().replace(old, new, 1), "tfb.toml")


def test_a_fortunes_page_must_show_every_row_and_the_added_one_escaped_and_sorted():
    rows = fortunes_read()
    page = tfb.html_page(rows).encode()
    assert tfb.problem("fortunes", 200, "text/html; charset=UTF-8", page, fortunes=rows) is None
    raw = page.decode().replace("&lt;script&gt;", "<script>").replace("&lt;/script&gt;", "</script>").encode()
    assert "not escaped" in tfb.problem("fortunes", 200, tfb.HTML_TYPE, raw, fortunes=rows)
    unsorted = tfb.html_page(sorted(rows)).encode()  # by id
    assert "row 1 is ['0'" in tfb.problem("fortunes", 200, tfb.HTML_TYPE, unsorted, fortunes=rows)
    without = [r for r in rows if r[0] != 0]
    assert "every fortune and the added one" in tfb.problem("fortunes", 200, tfb.HTML_TYPE,
                                                            tfb.html_page(without).encode(), fortunes=without)
    assert "not 'text/html; charset=utf-8'" in tfb.problem("fortunes", 200, "text/html", page, fortunes=rows)
    assert "answered 500: boom" in tfb.problem("fortunes", 500, "text/plain", b"boom\n", fortunes=rows)


@pytest.mark.parametrize("page, body, queries, message", [
    ("db", b'{"id":7,"randomNumber":9}', 1, None),
    ("db", b'[{"id":7,"randomNumber":9}]', 1, "not an object of id and randomNumber alone"),
    ("db", b'{"id":7,"randomNumber":9,"x":1}', 1, "not an object of id and randomNumber alone"),
    ("db", b'{"id":"7","randomNumber":9}', 1, "answered id '7': an integer from 1 to 10000 was due"),
    ("db", b'{"id":7,"randomNumber":10001}', 1, "randomNumber 10001"),
    ("queries", b'[{"id":1,"randomNumber":2},{"id":3,"randomNumber":4}]', 2, None),
    ("queries", b'[{"id":1,"randomNumber":2}]', 2, "answered 1 rows for queries=2"),
    ("updates", b'{"id":1,"randomNumber":2}', 1, "a JSON dict, not an array"),
    ("queries", b'[{"id":1,', 1, "not JSON"),
])
def test_a_json_page_answers_techempowers_objects_of_id_and_random_number(page, body, queries, message):
    found = tfb.problem(page, 200, "application/json", body, queries)
    assert found is None if message is None else message in found


@pytest.mark.server
def test_php_python_node_ruby_and_perl_pages_pass_each_test_on_postgresql_and_mariadb_reading_the_same_rows(tmp_path, workdir):
    # under wrk, as the suite runs them (and so by names of their own: test_tier.py, which may run at
    # the same time, looks for its tier methods' processes by name)
    methods = [f"{m}/load=wrk" for m in ("php-apache-pdo-pgsql", "py-gunicorn-psycopg", "node-http-pg", "rb-puma-pg",
                                         "pl-starman-pg", "php-apache-mysqli", "py-gunicorn-mysqlclient",
                                         "node-http-mysql2", "rb-puma-mysql2", "pl-starman-mariadb")]
    _needs(*methods)
    store = str(tmp_path / "tfb.db")
    # the built-in suite with each trial one second long at --quick, wrk's shortest (its 15 s
    # scale to 1.5 s, which wrk rounds up to 2): the pages are what this checks, not the load
    suite = tmp_path / "tfb.toml"
    suite.write_text(builtin_text("tfb").replace('duration = "15s"', 'duration = "10s"'))
    assert "15s" not in suite.read_text()
    steps = "db-c16,queries-5-c16,fortunes-c16,updates-5-c16"
    result = accessbench("--store", store, "run", "--suite", str(suite), "--quick", "--method", ",".join(methods),
                         "--target", "postgresql,mariadb", "--step", steps, "--trials", "1", "--warmup", "0",
                         "--precision", "0", "--workdir", workdir, "--no-report", timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    cells = _cells(store)
    assert len(cells) == 40 and all(c["status"] == "ok" for c in cells.values()), cells
    for step in steps.split(","):  # the same keys, data and numbers: the same reads in each language, on either DBMS
        assert len({c["checksum"] for (t, m, s), c in cells.items() if s == step}) == 1
    # every page said where each request's time went, read on one of the load's connections: the
    # database's time inside the page's, the page's inside the round trip
    with sqlite3.connect(store) as db:
        trials = db.execute("SELECT c.method, c.step, t.n, t.sampled FROM trials t JOIN cells c ON c.id = t.cell_id"
                            " WHERE t.phase = 'trial'").fetchall()
    assert len(trials) == 40
    for method, step, n, text in trials:
        sampled = json.loads(text)
        assert 0 < sampled["n"] < n, (method, step, sampled)  # one connection of 16, counted in the trial's requests
        assert 0 < sampled["db_ns"] <= sampled["app_ns"] < sampled["latency_ns"], (method, step, sampled)
    shown = accessbench("--store", store, "show", "last", "--full", "--width", "200")
    assert "Where each request's time went on postgresql" in shown.stdout and "database %" in shown.stdout


@pytest.mark.parametrize("header, parts", [
    ("db;dur=0.412, app;dur=1.500", (412_000, 1_500_000)),
    ('app;dur=2;desc="page", cache;desc=hit, db;dur=1', (1_000_000, 2_000_000)),  # any order, others ignored
    ("db;dur=0.412", None),
    ("db;dur=x, app;dur=1", None),
    (None, None),
])
def test_a_pages_server_timing_gives_its_database_and_whole_page_times_or_nothing(header, parts):
    assert tfb.read_timing(header) == parts
    if parts:
        assert tfb.read_timing(tfb.server_timing(*parts)) == parts  # as the pages write it, to the microsecond


@pytest.mark.parametrize("answer, status, after", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer-Timing: db;dur=1, app;dur=2\r\n\r\nhelloHTTP", 200, b"HTTP"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\nnext", 200, b"next"),
    (b"HTTP/1.0 500 Oops\r\nConnection: close\r\n\r\nto the end", 500, b""),
])
def test_the_sampling_connection_reads_an_answer_by_its_length_its_chunks_or_its_end(answer, status, after):
    from accessbench.tier.sampler import _read_answer

    mine, server = socket.socketpair()
    with mine, server:
        for i in range(0, len(answer), 7):  # in pieces, as a socket may deliver it
            server.sendall(answer[i:i + 7])
        server.shutdown(socket.SHUT_WR)
        got, headers, rest, close = _read_answer(mine, b"")
    assert (got, rest, close) == (status, after, status == 500)
    assert headers.get(b"server-timing", b"db;dur=1, app;dur=2") == b"db;dur=1, app;dur=2"


def test_a_cells_sampled_requests_pool_over_its_trials_into_parts_that_add_up_to_their_round_trip():
    from accessbench.stats.requests import parts
    from accessbench.store.model import Trial

    trials = [Trial(cell_id=1, seq=i, n=n, rows=0, elapsed_ns=1_000_000_000, sampled=s) for i, (n, s) in enumerate([
        (1600, {"n": 100, "db_ns": 100_000_000, "app_ns": 150_000_000, "latency_ns": 900_000_000}),
        (3200, {"n": 300, "db_ns": 100_000_000, "app_ns": 250_000_000, "latency_ns": 700_000_000}),
        (1000, None)])]  # a trial that sampled nothing weighs nothing
    p = parts(trials, clients=16)
    assert (p.n, p.trials) == (400, 2)
    assert (p.db_ns, p.page_ns, p.latency_ns) == (500_000, 500_000, 4_000_000)  # each request weighs the same
    assert p.load_ns == 16 * 2e9 / 4800  # the load's round trip: Little's law over the same trials, C × t / n
    assert p.db_ns + p.page_ns + p.outside_ns == p.load_ns and p.db_share == 500_000 / p.load_ns
    assert parts(trials[2:], clients=16) is None
