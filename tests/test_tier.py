"""The web tier (docs/tier.md): drivers in app servers' pages under HTTP load from ab and wrk.
What the load generators print is read exactly (pure logic); the pages run under real app
servers over real databases, verified against the drivers' own checksums, and every app
server and load generator is gone after a run and after Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accessbench.methods import select
from accessbench.suite.loader import SuiteError, load, parse
from accessbench.tier.loadgen import Ab, LoadFailed, Wrk, measured
from accessbench.tier.methods import METHODS, settings_of

from .conftest import SCRATCH, accessbench, processes_mentioning, processes_with_files_in

SUITE = str(Path(__file__).parent / "fixtures" / "web.toml")

AB_OUTPUT = """This is ApacheBench, Version 2.3 <$Revision: 1913912 $>
Server Software:        Apache/2.4.71
Server Hostname:        127.0.0.1
Server Port:            40211

Document Path:          /op.php?step=0123456789abcdef
Document Length:        Variable

Concurrency Level:      10
Time taken for tests:   15.002 seconds
Complete requests:      4711
Failed requests:        3
   (Connect: 0, Receive: 0, Length: 0, Exceptions: 3)
Non-2xx responses:      12
Total transferred:      1030000 bytes
Requests per second:    314.02 [#/sec] (mean)
"""


def test_ab_output_gives_requests_its_own_elapsed_time_failures_and_non_2xx_responses():
    load = Ab(Path(".")).parse(AB_OUTPUT, 10)
    assert (load.requests, load.elapsed_ns, load.failed, load.non_2xx) == (4711, 15_002_000_000, 3, 12)
    assert load.histogram is None  # ab prints a table of percentiles, not the distribution
    assert Ab(Path(".")).parse(AB_OUTPUT.replace("Non-2xx responses:      12\n", ""), 10).non_2xx == 0


def test_ab_durations_are_whole_seconds_rounded_up_since_ab_reads_them_with_atoi():
    for seconds, whole in ((0.2, "1"), (1.5, "2"), (15.0, "15")):
        command = Ab(Path(".")).command("http://127.0.0.1:1/x", 10, seconds)
        assert command[command.index("-t") + 1] == whole and command[command.index("-c") + 1] == "10"


def test_wrk_done_hook_output_becomes_a_histogram_of_every_request():
    line = ('ACCESSBENCH {"requests": 6, "duration_us": 1000123, "connect": 0, "read": 1, "write": 0, "status": 2, '
            '"timeout": 0, "latency": [[120, 3], [250, 2], [90000, 1]]}')
    wrk = Wrk(Path(SCRATCH))
    load = wrk.parse("Running 1s test @ http://127.0.0.1:1/\n" + line + "\n", 3)
    assert (load.requests, load.elapsed_ns, load.failed, load.non_2xx) == (6, 1_000_123_000, 1, 2)
    assert load.histogram.n == 6 and load.histogram.min == 120_000 and load.histogram.max == 90_000_000
    assert abs(load.histogram.percentile(50) - 120_000) <= 120_000 * 0.01  # within the histogram's 1%
    with pytest.raises(Exception, match="no summary"):
        wrk.parse("Running 1s test\n", 3)


def _wrk_corrects(measured: dict[int, int], expected: int) -> dict[int, int]:
    """What wrk's stats_correct makes of a closed loop's latencies (its C, in Python)."""
    data = dict(measured)
    for n in range(expected * 2, max(measured) + 1):
        count, m = measured.get(n, 0), n - expected
        while count and m > expected:
            data[m] = data.get(m, 0) + count
            m -= expected
    return data


def test_wrks_coordinated_omission_correction_is_undone_to_the_requests_it_made():
    real = {100: 40, 180: 30, 260: 5, 1500: 2, 4000: 1}  # µs: count; 78 requests on 2 connections
    duration = 3900  # so e = 3900 // 39 = 100 µs: every value from 200 up adds phantom ones
    shown = _wrk_corrects(real, 100)
    assert sum(shown.values()) > 78  # wrk's histogram holds operations that never ran
    assert measured([[v, c] for v, c in sorted(shown.items())], 78, duration, 2) == real
    with pytest.raises(LoadFailed, match="does not undo to its 79 requests"):
        measured([[v, c] for v, c in sorted(shown.items())], 79, duration, 2)


def test_a_tier_method_is_named_with_its_app_server_and_load_generator():
    php = METHODS["php-apache-pgsql"]
    assert settings_of(php, "") == ({"server": "mod_php", "load": "ab"}, None)
    assert settings_of(php, "server=fpm,load=wrk") == ({"server": "fpm", "load": "wrk"}, None)
    assert "takes mod_php or fpm" in settings_of(php, "server=iis")[1]
    assert "has no setting 'pool'" in settings_of(php, "pool=9")[1]
    web = {m.name for m in select(["web"])}
    assert all(m.tier for m in select(["web"])) and {"php-apache-pgsql", "node-http-pg"} <= web
    assert METHODS["php-apache-pgsql"].page_driver == "php-pgsql" and "php-pgsql" not in web  # the CLI worker's name


def test_s5_web_runs_the_studys_pages_on_the_tier_methods_ten_clients_for_fifteen_seconds():
    suite = load("s5-web")
    steps = {s.name: s for s in suite.variants[0].steps}
    assert {n: (s.kind, s.page, s.policy) for n, s in steps.items()} == {
        "static": ("page", "static", "persistent"), "hello": ("page", "hello", "persistent"),
        "per-request": ("exec", None, "per-request"), "persistent": ("exec", None, "persistent"),
        "pooled": ("exec", None, "pooled")}
    assert all((s.clients, s.duration) == (10, 15.0) for s in steps.values())
    assert steps["static"].paths == ["unix"] and suite.methods == ["web"]
    assert {f.published for f in suite.study.figures} >= {"767.87/s", "560.05/s", "64.54/s", "504.04/s", "7.8×"}


@pytest.mark.parametrize("changes, message", [
    ([('name = "${page}"', 'name = "p"'), ('page = "${page}"\n', ""), ('vary = { page = ["static", "hello"] }\n', "")],
     'a page step needs page = "static", "hello" or one of TechEmpower'),
    ([('page = "${page}"\n', 'page = "${page}"\nsql = "SELECT 1"\n')], "a page step takes no sql or params"),
    ([('mode = "extended"\n', 'mode = "extended"\npage = "static"\n')], "page applies to page steps only, not exec"),
])
def test_a_page_step_names_its_page_and_runs_no_statement(changes, message):
    text = Path(SUITE).read_text()
    for old, new in changes:
        text = text.replace(old, new, 1)
    with pytest.raises(SuiteError, match=message):
        parse(text, "web.toml")


def _needs(*names: str) -> None:
    for m in select(list(names)):
        why = m.missing()
        if why:
            pytest.skip(f"*** SKIPPING: {m.name} unavailable here: {why} ***")


def _cells(store: str) -> dict[tuple[str, str, str], dict]:
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        return {(r["target"], r["method"], r["step"]): dict(r) for r in db.execute("SELECT * FROM cells")}


@pytest.mark.server
def test_php_python_node_ruby_and_perl_pages_read_what_the_drivers_read_and_leave_nothing_running(tmp_path, workdir):
    tier = ["php-apache-pgsql", "php-apache-pdo-pgsql", "php-apache-pdo-mysql", "php-apache-mysqli",
            "py-gunicorn-psycopg", "node-http-pg", "node-http-mysql2", "rb-puma-pg", "rb-puma-mysql2",
            "pl-starman-pg", "pl-starman-mariadb"]
    _needs(*tier, "py-psycopg", "py-mariadb")
    store = str(tmp_path / "web.db")
    # every driver's pages under each connection policy on its DBMS; the static and hello pages,
    # which are the app server's and its language's (no driver's), once per app server
    one_per_server = ["php-apache-pgsql", "py-gunicorn-psycopg", "node-http-pg", "rb-puma-pg", "pl-starman-pg"]
    for methods, targets, steps in ([*tier, "py-psycopg", "py-mariadb"], "postgresql,mariadb", "per-request,persistent,pooled"), \
                                   ([*one_per_server, "py-psycopg"], "postgresql", "static,hello"):
        result = accessbench("--store", store, "run", "--suite", SUITE, "--method", ",".join(methods), "--target", targets,
                             "--step", steps, "--path", "unix", "--trials", "1", "--warmup", "0", "--precision", "0",
                             "--workdir", workdir, "--no-report", timeout=900)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    cells = _cells(store)
    assert {s for _, _, s in cells} == {"static", "hello", "per-request", "persistent", "pooled"}
    for (target, method, step), cell in cells.items():
        if method in ("py-psycopg", "py-mariadb") and step in ("static", "hello"):  # a driver's worker serves no page
            assert cell["status"] == "unsupported" and "no page steps" in cell["message"]
        elif method.startswith(("php-", "rb-", "pl-")) and step == "pooled":  # PHP, Ruby and Perl's DBI have no pool
            assert cell["status"] == "unsupported", cell
        elif method == "py-mariadb" and step == "pooled":
            assert cell["status"] in ("ok", "unsupported"), cell
        else:
            assert cell["status"] == "ok", cell  # verified: the same checksum as every other method
    for target in ("postgresql", "mariadb"):  # every page read what the bare driver read
        sums = {c["checksum"] for (t, m, s), c in cells.items() if t == target and s == "persistent"}
        assert len(sums) == 1 and None not in sums
    assert not processes_with_files_in(workdir) and not os.listdir(workdir)  # the run's directory went with it
    # Only this run's pages: other tests on other xdist workers may be serving theirs right now.
    assert not [p for m in tier for p in processes_mentioning(f"accessbench.tier {m} ")]
    assert not processes_mentioning(workdir)


@pytest.mark.server
def test_ctrl_c_during_a_web_trial_stops_the_app_server_and_the_load_generator(tmp_path, workdir):
    _needs("php-apache-pgsql")
    run = subprocess.Popen([sys.executable, "-m", "accessbench", "--store", str(tmp_path / "s.db"), "run", "--suite",
                            SUITE, "--method", "php-apache-pgsql", "--target", "postgresql", "--path", "unix",
                            "--trials", "20", "--precision", "0", "--workdir", workdir, "--no-report"],
                           cwd=SCRATCH, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while not processes_mentioning(" -c 4 http://127.0.0.1:") and time.monotonic() < deadline:  # ab under way
        time.sleep(0.05)
    assert processes_mentioning(workdir), "the app server never started"
    run.send_signal(signal.SIGINT)
    out, _ = run.communicate(timeout=120)
    assert run.returncode == 130, out[-2000:]
    assert not processes_mentioning(workdir) and not processes_with_files_in(workdir)
    assert not processes_mentioning(" -c 4 http://127.0.0.1:") and not os.listdir(workdir)


def test_a_trial_in_which_no_request_was_answered_fails_its_cell_instead_of_reporting_zero_per_second(tmp_path, monkeypatch):
    # wrk's own trial ends before any of its connections got an answer (TechEmpower's updates
    # on one connection at 256 connections): that is no measurement, not 0 requests/s
    from accessbench.tier import host as tier_host
    from accessbench.tier.loadgen import Load

    class Unanswered(Wrk):
        def run(self, url, clients, seconds):
            return Load(requests=0, elapsed_ns=2_000_000_000, failed=0, non_2xx=0, histogram=None, resolution_ns=1000)

    silent = socket.create_server(("127.0.0.1", 0))  # a page slower than the trial: it never answers

    class Server:
        def url(self, page, query):
            return f"http://127.0.0.1:{silent.getsockname()[1]}/{page}?{query}"

        def cpu_ns(self):
            return (0, 0)

    monkeypatch.setitem(tier_host.GENERATORS, "wrk", Unanswered)
    session = tier_host.Session(METHODS["node-http-pg"], {"server": "node", "load": "wrk"}, "node-http-pg/load=wrk")
    session.server, session.dir = Server(), tmp_path
    with silent, pytest.raises(tier_host.Failed, match=r"no request was answered within the trial's 2 s \(wrk, 256 "
                                                       r"connections\)") as failed:
        # the tier worker's own connection (tier/sampler.py) waits too, and is abandoned when wrk ends
        session._loaded("updates", "step=s", None, {"clients": 256, "duration_ms": 1500})
    assert failed.value.kind == "timeout"


@pytest.mark.server
@pytest.mark.parametrize("kind", ["mod_php", "fpm", "gunicorn", "node-http", "puma", "starman"])
def test_an_app_server_whose_port_is_taken_before_it_binds_starts_again_on_another(kind, port_taken_first):
    # the port free_port chose is taken in between (here on purpose; in a run, by any process's
    # own outgoing connection): the server starts on the next one instead of failing the cell
    import json
    import tempfile
    import urllib.request

    from accessbench import net
    from accessbench.tier.servers import SERVERS
    from accessbench.tier.servers.base import give_to_server

    taken = port_taken_first(net)
    base = Path(tempfile.mkdtemp(prefix="accessbench-tier-port-"))
    os.chmod(base, 0o755)
    pages = base / "pages"
    (pages / "steps").mkdir(parents=True)
    (pages / "endpoint.json").write_text(json.dumps({"method": kind, "settings": {}, "page_driver": "", "endpoint": {}}))
    give_to_server(pages)
    server = SERVERS[kind](base / "server", pages, {"ACCESSBENCH_TIER_DIR": str(pages)}, 1)
    try:
        server.start()
        assert server.port != taken
        with urllib.request.urlopen(server.url("static"), timeout=10) as answer:
            assert answer.status == 200
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", str(base)], check=False)


def test_every_tier_methods_page_language_says_where_its_pages_are_and_how_its_versions_are_read():
    from accessbench.tier.languages import LANGUAGES
    from accessbench.tier.methods import METHODS

    assert {m.language for m in METHODS.values()} == set(LANGUAGES)
