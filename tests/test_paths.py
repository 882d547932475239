"""Path names: the proxied and netem forms, and errors that name the bad one."""

import os
import re
import tempfile

import pytest

from accessbench.errors import InputError
from accessbench.paths import netem_missing, parse


def test_plain_paths_are_their_own_base():
    assert parse("unix").base == "unix" and not parse("tcp").proxied


@pytest.mark.parametrize("name, delay, jitter, bandwidth", [
    ("tcp+250us", 250, 0, None),
    ("tcp+1ms", 1000, 0, None),
    ("tcp+0us", 0, 0, None),
    ("tcp+1.5ms~50us", 1500, 50, None),
    ("tcp+100us@10mbit", 100, 0, 1_250_000),
    ("tcp+100us~5us@1MB", 100, 5, 1_000_000),
])
def test_a_proxied_path_carries_its_delay_jitter_and_bandwidth(name, delay, jitter, bandwidth):
    path = parse(name)
    assert path.proxied and path.base == "tcp"
    assert (path.delay_us, path.jitter_us, path.bandwidth) == (delay, jitter, bandwidth)


def test_netem_paths_parse_and_say_whether_the_kernel_has_netem():
    assert parse("netem:250us").base == "netem" and parse("netem:250us").delay_us == 250
    reason = netem_missing()
    assert reason is None or "netem" in reason


@pytest.mark.parametrize("name", ["tcp+", "tcp+250", "udp", "tcp+5s", "netem:"])
def test_a_malformed_path_is_an_input_error_naming_it(name):
    with pytest.raises(InputError, match=re.escape(f"--path {name}:")):
        parse(name)


@pytest.mark.parametrize("name, kind", [
    ("inproc", "Direct"), ("unix", "Direct"), ("tcp", "Direct"), ("tcp+250us", "Proxied"),
    ("netem:1ms", "Netem"), ("pooler", "Pooler"), ("pooler:session", "Pooler"),
])
def test_each_name_belongs_to_exactly_one_path_kind(name, kind):
    from accessbench.paths import KINDS

    assert [k.__name__ for k in KINDS if k.parse(name) is not None] == [kind]


def test_every_path_kind_rides_on_a_path_targets_offer():
    assert {parse(n).rides_on for n in ("inproc", "unix", "tcp", "tcp+1ms", "netem:1ms", "pooler")} \
        == {"inproc", "unix", "tcp"}


@pytest.mark.server
def test_a_path_that_fails_to_start_ends_the_run_with_why_and_stops_the_paths_started_before_it(workdir):
    from accessbench.paths.proxy import binary

    from .conftest import accessbench, processes_with_files_in

    scratch = tempfile.mkdtemp()
    with open(f"{scratch}/abproxy", "w") as f:  # notes each start, then is the proxy
        f.write(f"#!/bin/sh\necho started >> {scratch}/starts\nexec {binary()} \"$@\"\n")
    with open(f"{scratch}/pgbouncer", "w") as f:  # a PgBouncer that cannot start
        f.write("#!/bin/sh\necho 'FATAL cannot load config' >&2\nexit 1\n")
    for name in ("abproxy", "pgbouncer"):
        os.chmod(f"{scratch}/{name}", 0o755)
    env = {**os.environ, "ACCESSBENCH_PROXY": f"{scratch}/abproxy", "PATH": f"{scratch}:{os.environ['PATH']}"}
    result = accessbench("--store", f"{scratch}/s.db", "run", "--quick", "--no-report", "--target", "postgresql",
                         "--path", "tcp+100us,pooler", "--method", "py-psycopg", "--workdir", workdir, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "PgBouncer exited with status 1" in result.stderr
    assert os.path.exists(f"{scratch}/starts")  # the proxy path was started before the pooler failed
    assert processes_with_files_in(workdir) == []
    assert os.listdir(workdir) == []


def test_a_poolers_log_gives_its_warnings_and_errors_with_their_detail_and_nothing_else():
    from accessbench.paths.pooler import _warnings

    log = ["2026-11-29 07:16:20.529: [unknown] pid 27790: LOG:  statement: SELECT 1",
           "2026-11-29 07:16:20.529: [unknown] pid 27790: DETAIL:  not after a warning",
           "2026-11-29 07:16:20.530: php pid 27790: FATAL:  unable to bind",
           "2026-11-29 07:16:20.530: php pid 27790: DETAIL:  cannot get parse message \"pdo_stmt_1\"",
           "2026-11-29 07:16:20.533: main pid 27784: WARNING:  child process with pid: 27790 was terminated by "
           "segmentation fault",
           "2026-11-29 07:16:21.000 UTC [1234] WARNING C-0x5555: db/user@127.0.0.1:40000 pooler error: query_wait_timeout"]
    assert _warnings(log) == ["unable to bind", 'cannot get parse message "pdo_stmt_1"',
                              "child process with pid: 27790 was terminated by segmentation fault",
                              "C-0x5555: db/user@127.0.0.1:40000 pooler error: query_wait_timeout"]


@pytest.mark.server
@pytest.mark.parametrize("pooler", ["pgbouncer", "pgpool"])
def test_a_pooler_whose_port_is_taken_before_it_binds_starts_again_on_another(pooler, postgres, workdir,
                                                                              port_taken_first):
    # the port free_port chose is taken in between (here on purpose; in a run, by any process's
    # own outgoing connection): the pooler starts on the next one instead of failing the path
    import psycopg

    from accessbench import net
    from accessbench.paths.pgpool import Pgpool
    from accessbench.paths.pooler import PgBouncer

    taken = port_taken_first(net)
    server = postgres.behind_pooler()
    directory = os.path.join(workdir, pooler)
    make = {"pgbouncer": lambda port: PgBouncer("session", server, directory, port),
            "pgpool": lambda port: Pgpool(server, directory, port)}[pooler]
    running = None
    try:
        running = net.on_a_free_port(make)
        assert running.port != taken
        with psycopg.connect(host="127.0.0.1", port=running.port, user=server["user"], password=server["password"],
                             dbname=server.get("dbname", "accessbench")) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
    finally:
        if running is not None:
            running.stop()
