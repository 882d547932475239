"""TLS as part of a path (``tcp+tls``, ``tcp+250us+tls1.2``, ``pooler+tls`` …) and pgpool-II as a
path kind. The managed servers serve TLS with an authority made for the run; every worker
connects with its own driver's TLS settings, and the runner checks on the server that each
connection it can see is encrypted as its path says. The servers and poolers are real."""

from __future__ import annotations

import glob
import os
import sqlite3

import pytest

from accessbench import paths, targets
from accessbench.errors import InputError
from accessbench.methods import select
from accessbench.paths.tls import Authority, Tls
from accessbench.worker_process import WorkerProcess, worker_environment

from .conftest import accessbench, processes_mentioning

QUICK = ["sel1-literal", "sel1-prepared", "connect", "scan-6k"]


def one_line_refusal(*args: str) -> str:
    result = accessbench("run", "--quick", "--no-report", *args, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def quick_run(tmp_path, workdir: str, methods: str, targets_: str, paths_: str, trials: int) -> str:
    """The quick suite, --quick, on those paths: the store it wrote, after checking it ran."""
    store = str(tmp_path / "run.db")
    result = accessbench("--store", store, "run", "--suite", "quick", "--quick", "--method", methods, "--target", targets_,
                         "--path", paths_, "--trials", str(trials), "--warmup", "0", "--precision", "0",
                         "--workdir", workdir, "--no-report", timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return store


def test_a_tls_attribute_composes_with_each_tcp_path_kind():
    assert paths.parse("tcp+tls").tls == Tls()
    proxied = paths.parse("tcp+250us+tls1.2:require")
    assert (proxied.delay_us, proxied.tls, proxied.plain) == (250.0, Tls("require", "TLSv1.2"), "tcp+250us")
    assert paths.parse("pooler:session+tls").pool_mode == "session"
    assert paths.parse("pgpool+tls").plain == "pgpool"
    assert paths.parse("tcp+tls:direct").tls.direct
    assert paths.parse("tcp+compress").compress and paths.parse("tcp+compress").tls is None


@pytest.mark.parametrize("name, says", [
    ("unix+tls", "TLS rides on TCP"),
    ("tcp+tls1.1", "TLS version 1.1: expected 1.2 or 1.3"),
    ("tcp+tls:loose", "TLS option 'loose'"),
    ("tcp+tls+tls", "+tls given twice"),
    ("inproc+compress", "nothing crosses a wire"),
])
def test_a_malformed_tls_path_is_an_input_error_naming_it(name, says):
    with pytest.raises(InputError, match=says.replace("+", r"\+").replace(".", r"\.")):
        paths.parse(name)


def test_a_tls_path_on_a_target_that_cannot_have_it_is_one_line_and_exit_2():
    assert "offers paths inproc" in one_line_refusal("--target", "sqlite", "--path", "tcp+tls")
    assert one_line_refusal("--target", "postgresql", "--path", "tcp+compress").endswith(
        "+compress is the MariaDB protocol's compression; postgresql's protocol has none")
    assert "sslnegotiation=direct needs PostgreSQL 17 or later" in one_line_refusal(
        "--target", "postgresql@15", "--path", "tcp+tls:direct")
    assert "TLS paths need a server accessbench manages" in one_line_refusal(
        "--target", "postgresql://me@127.0.0.1:1/app?sslmode=require", "--path", "tcp+tls")


def test_an_external_mariadb_urls_tls_is_checked_and_its_password_never_shown():
    result = accessbench("run", "--target", "mariadb://me:s3cret@127.0.0.1:1/?sslmode=maybe", "--no-report",
                         timeout=120)
    assert result.returncode == 2 and "sslmode=maybe: expected disable, require, verify-ca or verify-full" in result.stderr
    assert "s3cret" not in result.stdout + result.stderr


def test_the_runs_authority_signs_a_server_certificate_for_localhost(tmp_path):
    from cryptography import x509

    authority = Authority(str(tmp_path / "tls"))
    with open(authority.cert, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert os.stat(authority.key).st_mode & 0o077 == 0  # the key is the owner's alone
    authority.remove()
    assert not os.path.exists(authority.directory)


@pytest.mark.server
def test_what_tls_adds_is_written_without_an_exponent_however_many_times_the_twin_it_is():
    from accessbench.report.twins import _percent

    assert [_percent(v) for v in (0.463, 14.54, -0.0211)] == ["+46.3%", "+1,454%", "−2.11%"]


def test_tls_cells_verify_beside_their_plain_twins_and_leave_no_key_behind(tmp_path, workdir):
    store = quick_run(tmp_path, workdir, "py-psycopg,py-pymysql", "postgresql,mariadb", "tcp,tcp+tls,tcp+tls1.2", 2)
    with sqlite3.connect(store) as db:
        cells = db.execute("SELECT target, method, path, step, status, message FROM cells").fetchall()
        settings = [s for (s,) in db.execute("SELECT settings FROM run_targets")]
        stored = "\n".join(str(row) for table in ("runs", "run_targets", "run_methods", "cells")
                           for row in db.execute(f"SELECT * FROM {table}"))
    ran = [c for c in cells if c[3] in QUICK]
    assert ran and all(c[4] in ("ok", "unsupported") for c in ran), [c for c in ran if c[4] not in ("ok", "unsupported")]
    assert {c[2] for c in ran if c[4] == "ok"} == {"tcp", "tcp+tls", "tcp+tls1.2"}
    assert all("on for TLS paths" in s for s in settings)
    assert "PRIVATE KEY" not in stored and "BEGIN CERTIFICATE" not in stored
    assert not os.listdir(workdir)  # the authority, the servers' copies of its key: gone with the run
    shown = accessbench("--store", store, "show", "last", "--full")
    assert "What TLS adds on postgresql" in shown.stdout and "What TLS adds on mariadb" in shown.stdout


@pytest.mark.server
@pytest.mark.parametrize("dbms, method, says", [
    ("postgresql", "py-psycopg", "certificate verify failed"),
    ("mariadb", "py-pymysql", "CERTIFICATE_VERIFY_FAILED"),
])
def test_a_server_certificate_of_another_authority_fails_the_open_with_the_drivers_message(workdir, dbms, method,
                                                                                            says):
    target = targets.make(dbms)
    target.authority = Authority(os.path.join(workdir, "tls"))
    stranger = Authority(os.path.join(workdir, "stranger"))
    target.start(workdir)
    worker = WorkerProcess(select([method])[0].command(), os.path.join(workdir, "worker.log"),
                           worker_environment(workdir))
    try:
        endpoint = paths.parse("tcp+tls").endpoint(target)
        assert worker.request({"op": "open", "endpoint": endpoint, "options": {}, "clients": 1}, 60)["ok"]
        assert worker.request({"op": "close"}, 60)["ok"]
        answer = worker.request({"op": "open", "endpoint": {**endpoint, "sslrootcert": stranger.ca}, "options": {},
                                 "clients": 1}, 60)
        assert not answer["ok"] and answer["error"]["kind"] != "unsupported"
        assert says in answer["error"]["message"]
    finally:
        worker.close(timeout=5)
        target.stop()


@pytest.mark.server
def test_pgpool_cells_verify_and_pgpool_is_gone_after_the_run(tmp_path, workdir):
    store = quick_run(tmp_path, workdir, "py-psycopg", "postgresql?auth=md5", "tcp,pgpool,pgpool+tls", 1)
    with sqlite3.connect(store) as db:
        statuses = db.execute("SELECT path, status, message FROM cells").fetchall()
        (setting,) = db.execute("SELECT json_extract(settings, '$.pgpool') FROM run_targets").fetchone()
    assert {p for p, s, _ in statuses if s == "ok"} == {"tcp", "pgpool", "pgpool+tls"}
    assert all(s == "ok" for p, s, _ in statuses), [x for x in statuses if x[1] != "ok"]
    assert "pgpool-II version 4" in setting and "by md5" in setting
    assert not processes_mentioning(workdir) and not glob.glob(os.path.join(workdir, "*"))
