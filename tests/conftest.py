"""Shared fixtures: the accessbench command as a user runs it, and a scratch directory the
managed server's OS user can reach."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import pytest


# A shell that starts the tests in the background without job control ignores SIGINT, and so
# would every process they start (an ignored signal stays ignored across exec): the Ctrl-C
# tests need it delivered, so it gets Python's usual handler back (reset to the default in children).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The quick suite's steps, every kind once: its larger twins (scan-100k, insb-100, upd100)
# measure the same code paths over more rows, and would double a test's time.
QUICK_STEPS = "connect,scan-6k,sel1-literal,sel1-extended,sel1-prepared,ins1,insb-10,upd1,upd10"

# Runs write their HTML report to ./reports: keep the tests' out of the source tree.
SCRATCH = tempfile.mkdtemp(prefix="accessbench-cwd-")
atexit.register(shutil.rmtree, SCRATCH, True)


def accessbench(*args: str, timeout: float = 900, **kwargs) -> subprocess.CompletedProcess:
    """Run the CLI in its own process, as a user would, capturing its output (in a scratch
    working directory unless ``cwd`` says otherwise)."""
    kwargs.setdefault("cwd", SCRATCH)
    # GNU readline (imported by pytest) exports the test terminal's COLUMNS and LINES, which a
    # pipe's report honours: a test's output is 120 wide unless the test sets COLUMNS itself
    kwargs.setdefault("env", {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")})
    return subprocess.run(
        [sys.executable, "-m", "accessbench", *args], capture_output=True, text=True, timeout=timeout, **kwargs
    )


@pytest.fixture
def workdir():
    """A work directory under the system temp dir: when the tests run as root the managed
    server runs as 'postgres', which cannot enter pytest's private tmp_path."""
    path = tempfile.mkdtemp(prefix="accessbench-test-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def postgres(workdir):
    """A managed PostgreSQL for the test alone, stopped and removed after it."""
    from accessbench.targets.postgresql import ManagedPostgres

    server = ManagedPostgres()
    server.start(workdir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def port_taken_first(monkeypatch):
    """``patch(module, …)``: each module's free_port answers next a port already taken (bound by
    the test, not listening, as a client connection's own port is), then free ones, as when
    something on the machine takes the port between its choice and the server's bind."""
    from accessbench import net

    free = net.free_port
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    ports = iter([port])

    def patch(*modules) -> int:
        for module in modules:
            monkeypatch.setattr(module, "free_port", lambda: next(ports, None) or free())
        return port

    yield patch
    taken.close()


@pytest.fixture
def someone_elses_postgres(workdir):
    """A PostgreSQL we start ourselves and treat as someone else's: it already holds their
    table public.customers (two rows) and a schema reporting with a view on it."""
    from accessbench.targets.postgresql import ManagedPostgres

    server = ManagedPostgres()
    server.start(workdir)
    try:
        server.execute("CREATE TABLE public.customers (id integer primary key, name text)")
        server.execute("INSERT INTO public.customers VALUES (1, 'ada'), (2, 'grace')")
        server.execute("CREATE SCHEMA reporting")
        server.execute("CREATE VIEW reporting.names AS SELECT name FROM public.customers")
        yield server
    finally:
        server.stop()


def processes_mentioning(text: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and str(os.getpid()) != pid:
            found.append(f"{pid}: {cmdline}")
    return found


def processes_with_files_in(directory: str) -> list[str]:
    """Processes holding a file under ``directory`` open (a log, even once deleted)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            held = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in fds]
        except OSError:
            continue
        if any(path.startswith(directory.rstrip("/") + "/") for path in held) and str(os.getpid()) != pid:
            found.append(pid)
    return found


@pytest.fixture(scope="session")
def sqlite_store(tmp_path_factory) -> str:
    """A results file holding one real run the report and CLI tests share: SQLite at --quick
    size, Python's sqlite3 and (when built) the C worker, 3 trials."""
    from accessbench.methods import select

    work = tmp_path_factory.mktemp("run")
    methods = "py-sqlite3" if select(["c-sqlite"])[0].missing() else "py-sqlite3,c-sqlite"
    # cwd: whatever the run itself writes (its own report) stays out of the checkout.
    result = accessbench("--store", str(work / "results.db"), "run", "--quick", "--target", "sqlite",
                         "--method", methods, "--trials", "3", "--precision", "0", cwd=work)
    assert result.returncode == 0, result.stderr[-3000:]
    return str(work / "results.db")


@pytest.fixture(scope="session")
def sqlite_run(sqlite_store):
    """The run in ``sqlite_store``, as the reports read it."""
    from accessbench.store import Store

    with Store(sqlite_store) as store:
        return store.load(store.resolve("last"))


def wait_for_trials(store: str, proc: subprocess.Popen, at_least: int = 3) -> int:
    """Poll the store until the run has stored some timed trials (and is not done yet)."""
    deadline, trials = time.monotonic() + 120, 0
    while trials < at_least and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if os.path.exists(store):
            try:
                with sqlite3.connect(store) as db:
                    trials = db.execute("SELECT count(*) FROM trials WHERE phase = 'trial'").fetchone()[0]
            except sqlite3.OperationalError:  # schema not there yet
                pass
    assert trials >= at_least and proc.poll() is None, "the run never stored a trial, or ended first"
    return trials
