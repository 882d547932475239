"""Moving a result out of the DBMS: DuckDB as a target, bulk (COPY) and columnar (Arrow, data
frame) readers verified like every method, the worker's peak memory, bytes per row, and the
wire's floor — the result as CSV moved raw along the same path — that the transfer table sets
every reader against."""

from __future__ import annotations

import re
import sqlite3
from importlib import resources

import pytest

from accessbench.methods import catalog, select
from accessbench.paths.floor import Sender, name_of, write_csv
from accessbench.pyworker.drivers.uri import uri
from accessbench.stats.cells import FLOORS
from accessbench.suite.loader import load, parse

from .conftest import accessbench


def small_transfer(tmp_path, rows: int = 1500, paths: str = '["tcp", "tcp+1ms@100mbit", "inproc"]') -> str:
    """The built-in transfer suite with a table of ``rows`` rows, as a file."""
    text = (resources.files("accessbench") / "suites" / "transfer.toml").read_text()
    text = text.replace("rows = 1_000_000\nquick_rows = 100_000", f"rows = {rows}")
    text = re.sub(r"(?m)^paths = .*$", f"paths = {paths}", text)
    path = tmp_path / "transfer.toml"
    path.write_text(text)
    return str(path)


def cells(store: str) -> dict[tuple[str, str, str], tuple[str, str | None]]:
    with sqlite3.connect(store) as db:
        return {(m, t, p): (s, msg) for m, t, p, s, msg in
                db.execute("SELECT method, target, path, status, message FROM cells")}


def test_the_transfer_suite_reads_a_lineitem_shaped_table_of_a_million_rows_and_a_tenth_of_it_under_quick():
    full, quick = load("transfer"), load("transfer", quick=True)
    table = full.variants[0].tables[0]
    assert (table.name, len(table.columns), table.rows) == ("lineitem", 16, 1_000_000)
    assert quick.variants[0].tables[0].rows == 100_000
    assert full.paths == ["tcp", "tcp+150us@1gbit", "tcp+12ms@100mbit", "inproc"]
    assert [s.kind for s in full.variants[0].steps] == ["scan"]


def test_a_table_keeps_every_row_under_quick_unless_it_gives_its_own_quick_size():
    text = """
[suite]
name = "t"
[[tables]]
name = "a"
rows = 50
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]
[[tables]]
name = "b"
rows = 50
quick_rows = 5
columns = [{ name = "id", type = "integer", gen = { kind = "seq" } }]
[[steps]]
name = "s"
kind = "scan"
sql = "SELECT * FROM a"
iterations = 1
"""
    assert [t.rows for t in parse(text, "t.toml", quick=True).variants[0].tables] == [50, 5]
    assert [t.rows for t in parse(text, "t.toml").variants[0].tables] == [50, 50]
    # --rows sizes only the table whose size is the reader's to choose, with or without --quick
    assert [t.rows for t in parse(text, "t.toml", rows=7).variants[0].tables] == [50, 7]
    assert [t.rows for t in parse(text, "t.toml", quick=True, rows=7).variants[0].tables] == [50, 7]


def test_a_run_at_rows_reads_the_table_at_that_size_and_its_resume_keeps_it(tmp_path):
    store = str(tmp_path / "t.db")
    result = accessbench("--store", store, "run", "--suite", "transfer", "--rows", "300", "--target", "sqlite",
                         "--method", "c-sqlite", "--path", "inproc", "--trials", "1", "--warmup", "0",
                         "--precision", "0", "--no-report")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "--rows 300" in result.stdout  # the report's header says the size it read
    with sqlite3.connect(store) as db:
        (settings,), = db.execute("SELECT settings FROM runs").fetchall()
        verified = db.execute("SELECT verify_rows FROM cells").fetchall()
    assert '"rows": 300' in settings and verified == [(300,)]
    again = accessbench("--store", store, "run", "--resume", "last", "--trials", "2", "--rows", "400")
    assert again.returncode == 2 and "--rows 400 differs from the run's 300" in again.stderr, again.stderr
    more = accessbench("--store", store, "run", "--resume", "last", "--trials", "2", "--no-report")
    assert more.returncode == 0, more.stdout[-2000:] + more.stderr[-2000:]
    with sqlite3.connect(store) as db:  # the added trial read the run's own size
        assert db.execute("SELECT count(*), min(rows), max(rows) FROM trials WHERE phase = 'trial'").fetchall() == \
            [(2, 300, 300)]
    fixed = accessbench("--store", store, "run", "--quick", "--target", "sqlite", "--rows", "10")
    assert fixed.returncode == 2, fixed.stderr
    assert fixed.stderr.strip().splitlines()[-1].endswith(
        "--rows 10: suite quick has no table whose size is the reader's to choose (a table with quick_rows, as the "
        "transfer suite's lineitem): its sizes are its own")


def test_the_transfer_group_is_the_default_methods_with_every_bulk_and_columnar_reader_and_the_floor():
    chosen = {m.name for m in select(["transfer"])}
    assert {m.name for m in catalog() if m.default and not m.tier} <= chosen
    assert {"py-psycopg/scan=copy-binary", "py-adbc", "py-connectorx", "py-polars", "py-duckdb/result=arrow",
            "wire-floor"} <= chosen
    assert not any(m.tier for m in select(["transfer"]))
    assert FLOORS == tuple(m.name for m in catalog() if m.reads == "floor")


def test_a_connection_uri_quotes_every_part_and_names_the_unix_socket_as_a_parameter():
    pg = {"dbms": "postgresql", "host": "/run/pg dir", "port": 5433, "database": "d b", "user": "u@x",
          "password": "p:w@/?", "schema": "s1", "sslmode": "disable"}
    text = uri(pg)
    assert text.startswith("postgresql://u%40x:p%3Aw%40%2F%3F@localhost:5433/d%20b?")
    assert "host=%2Frun%2Fpg%20dir" in text and "options=-c%20search_path%3Ds1" in text
    assert uri({"dbms": "mariadb", "host": "127.0.0.1", "port": 3307, "database": "d", "user": "u"}) == \
        "mysql://u@127.0.0.1:3307/d?prefer_socket=false"
    assert uri({"dbms": "sqlite", "file": "/tmp/x.db"}) == "sqlite:////tmp/x.db"


def test_the_floor_sender_serves_a_result_as_csv_by_its_statements_name(tmp_path):
    import socket

    rows, size = write_csv(str(tmp_path / name_of("SELECT 1")), [(1, "a,b", None), (2, "x", b"\x01")])
    assert rows == 2 and (tmp_path / name_of("SELECT 1")).read_text() == '1,"a,b",\n2,x,\\x01\n'
    sender = Sender(str(tmp_path))
    try:
        with socket.create_connection(("127.0.0.1", sender.port)) as s:
            s.sendall((name_of("SELECT 1") + "\n").encode())
            got = b"".join(iter(lambda: s.recv(65536), b""))
        assert len(got) == size and got.count(b"\n") == 2
        with socket.create_connection(("127.0.0.1", sender.port)) as s:  # a name it does not have: nothing
            s.sendall(b"../etc/passwd\n")
            assert s.recv(10) == b""
        # what it served stays in memory until it stops (a host may page out a file left unread)
        held = sender.server.held.files[str(tmp_path / name_of("SELECT 1"))]
        assert held.address is not None and held.size == size
    finally:
        sender.stop()
    assert not sender.server.held.files and held.address is None


def test_a_served_file_is_mapped_with_every_page_resident_and_locked_where_the_kernel_allows(tmp_path):
    import mmap
    import resource

    from accessbench.paths.floor import Resident

    path = tmp_path / "f"
    path.write_bytes(b"x" * (3 * mmap.PAGESIZE + 1))
    held = Resident(str(path))
    try:
        with open(f"/proc/self/smaps") as f:  # the mapping's own entry: every page resident (and locked)
            lines = f.read().split("\n")
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{held.address:x}-"))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("VmFlags"))
        fields = dict(line.split(":", 1) for line in lines[start + 1:end])
        assert int(fields["Rss"].split()[0]) * 1024 == 4 * mmap.PAGESIZE
        soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        if held.locked or soft == resource.RLIM_INFINITY:
            assert held.locked and int(fields["Locked"].split()[0]) * 1024 == 4 * mmap.PAGESIZE
    finally:
        held.release()
    (tmp_path / "empty").write_bytes(b"")
    assert Resident(str(tmp_path / "empty")).address is None  # nothing to map: served as it is


def test_duckdb_serves_reads_to_read_only_workers_and_refuses_steps_that_write(tmp_path):
    suite = tmp_path / "rw.toml"
    suite.write_text("""
[suite]
name = "rw"
[[tables]]
name = "t"
rows = 500
primary_key = ["id"]
columns = [
  { name = "id", type = "integer", gen = { kind = "seq" } },
  { name = "price", type = "numeric(10,2)", gen = { kind = "decimal", lo = 0, hi = 99999, scale = 2 } },
  { name = "day", type = "date", gen = { kind = "date", start = "2020-01-01" } },
]
[[steps]]
name = "read"
kind = "exec"
mode = "extended"
sql = "SELECT price, day FROM t WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 500 }]
iterations = 50
[[steps]]
name = "scan"
kind = "scan"
sql = "SELECT * FROM t"
iterations = 2
[[steps]]
name = "write"
kind = "exec"
mode = "extended"
sql = "UPDATE t SET price = 1 WHERE id = ?"
params = [{ kind = "uniform", lo = 1, hi = 500 }]
iterations = 20
reset = ["UPDATE t SET price = 0 WHERE id = 0"]
""")
    store = str(tmp_path / "r.db")
    result = accessbench("--store", store, "run", "--suite", str(suite), "--target", "duckdb", "--method",
                         "py-duckdb,py-duckdb/result=arrow", "--trials", "2", "--warmup", "0", "--precision", "0",
                         "--width", "200")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    with sqlite3.connect(store) as db:
        statuses = dict(db.execute("SELECT step || ' ' || method, status || ': ' || coalesce(message, '') FROM cells"))
    for step in ("read", "scan"):
        for method in ("py-duckdb", "py-duckdb/result=arrow"):
            assert statuses[f"{step} {method}"] == "ok: ", statuses
    assert statuses["write py-duckdb"].startswith("unsupported: DuckDB: a file has one writer or many readers")


def test_columnar_readers_read_what_the_row_drivers_read_on_sqlite_and_duckdb(tmp_path):
    store = str(tmp_path / "t.db")
    methods = "py-sqlite3,c-sqlite,py-adbc,py-connectorx,py-polars,py-polars/engine=adbc,py-duckdb,py-duckdb/result=arrow"
    result = accessbench("--store", store, "run", "--full", "--suite", small_transfer(tmp_path), "--target", "sqlite,duckdb",
                         "--method", methods, "--trials", "2", "--warmup", "0", "--precision", "0", "--width", "200")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    got = cells(store)
    measured = {k: v for k, v in got.items() if v[0] != "unsupported"}
    assert len(measured) == 8 and all(status == "ok" for status, _ in measured.values()), got
    with sqlite3.connect(store) as db:  # every trial knows the worker's memory, its peak above its start
        memory = db.execute("SELECT start_rss_bytes, peak_rss_bytes FROM trials WHERE phase = 'trial'").fetchall()
    assert memory and all(0 < start <= peak for start, peak in memory)
    assert "peak memory" in result.stdout


@pytest.mark.server
def test_every_reader_is_set_against_the_floor_of_its_path_on_postgresql(tmp_path):
    if select(["c-libpq"])[0].missing():
        pytest.skip("the C worker is not built")
    store = str(tmp_path / "p.db")
    methods = ("wire-floor,c-libpq,c-libpq/scan=copy-binary,c-libpq/scan=copy-text,py-psycopg,py-psycopg/scan=copy-binary,"
               "py-psycopg/scan=copy-text,py-adbc,py-connectorx")
    result = accessbench("--store", store, "run", "--full", "--suite", small_transfer(tmp_path), "--target", "postgresql",
                         "--method", methods, "--trials", "3", "--warmup", "0", "--precision", "0", "--width", "250")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    got = cells(store)
    for path in ("tcp", "tcp+1ms@100mbit"):
        for method in ("wire-floor", "c-libpq", "c-libpq/scan=copy-binary", "c-libpq/scan=copy-text",
                       "py-psycopg/scan=copy-binary", "py-psycopg/scan=copy-text", "py-adbc"):
            assert got[(method, "postgresql", path)][0] == "ok", got
    out = result.stdout
    assert "writing lineitem's result on postgresql as CSV, the wire's floor" in out and "1,500 rows" in out
    table = out[out.index("Transfer: lineitem"):]
    assert re.search(r"c-libpq\s+postgresql\s+\S+ [µm]?s \([\d.,]+×\)\s+\S+ [µm]?s \([\d.,]+×\)", table), table[:2000]
    with sqlite3.connect(store) as db:  # the floor's bytes crossed its own proxy: about the CSV's size each read
        floor = db.execute("SELECT t.bytes_to_client, t.n, t.rows FROM trials t JOIN cells c ON c.id = t.cell_id"
                           " WHERE c.method = 'wire-floor' AND c.path = 'tcp+1ms@100mbit' AND t.phase = 'trial'").fetchall()
    assert floor and all(rows == 1500 and sent > 100 * rows for sent, n, rows in floor)
    # the floor is no method: never ranked, never the summary's fastest
    summary = out[out.index("Summary"):]
    assert "wire-floor" not in summary


def test_a_driver_error_that_quotes_the_connection_uri_is_answered_without_its_password():
    from urllib.parse import quote

    from accessbench.pyworker.drivers.wire_floor import Driver
    from accessbench.pyworker.host import Session

    secret = "pa:ss@w/rd s3cret"
    session = Session(Driver())
    session.on_open({"endpoint": {"dbms": "postgresql", "password": secret, "floor": {"host": "127.0.0.1", "port": 1}}})
    for error in (RuntimeError(f"cannot reach postgresql://me:{quote(secret, safe='')}@db:5432/x"),
                  RuntimeError(f"password {secret!r} refused")):
        message = session.failure(error)["error"]["message"]
        assert secret not in message and quote(secret, safe="") not in message and "***" in message, message


def test_a_float32_reads_as_postgresql_prints_it_the_shortest_decimal_that_reads_back_of_those_the_closest():
    import struct

    from accessbench.protocol.checksum import float4_value

    as32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]  # noqa: E731
    assert float4_value(as32(2.0 ** -96)) == 1.2621775e-29  # not the nearest 8 digits, 1.2621774e-29
    assert float4_value(as32(0.1)) == 0.1 and float4_value(as32(-2.5)) == -2.5
    assert float4_value(as32(3.4028235e38)) == 3.4028235e38  # the largest: no neighbour above
    assert float4_value(as32(1e-45)) == 1e-45 and float4_value(0.0) == 0.0


def test_columnar_results_are_checksummed_in_canonical_form_where_the_column_type_says_what_a_value_is():
    import decimal

    import pyarrow as pa

    from accessbench.pyworker.drivers.columnar import arrow_rows

    numeric = pa.opaque(pa.string(), type_name="numeric", vendor_name="PostgreSQL")
    table = pa.table({"r": pa.array([0.1, None], pa.float32()),
                      "n": pa.ExtensionArray.from_storage(numeric, pa.array(["12.50", None])),
                      "s": pa.array(["12.50", "x"])})
    assert arrow_rows(table) == [(0.1, decimal.Decimal("12.50"), "12.50"), (None, None, "x")]


def test_a_trial_can_read_a_process_high_water_mark_above_where_it_started():
    import subprocess
    import sys

    from accessbench.runner import memory

    child = subprocess.Popen([sys.executable, "-c", "import sys\nsys.stdin.readline()\nx = bytearray(64 << 20)\n"
                              "print('grown', flush=True)\ndel x\nsys.stdin.readline()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        start = memory.start(child.pid)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "grown\n"  # it allocated, and has freed it again by now or soon
        assert start is not None and memory.peak(child.pid, start) - start >= 60 << 20
    finally:
        child.stdin.write("end\n")
        child.stdin.flush()
        child.wait()
