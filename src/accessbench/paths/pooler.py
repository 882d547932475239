"""``pooler`` (``pooler:transaction``) and ``pooler:session``: PgBouncer (Debian's package) in
that pool mode between the workers and a managed PostgreSQL, started and stopped with the run.

Clients reach PgBouncer over loopback TCP by the login the server takes there (SCRAM, or the
target's ``?auth=``); PgBouncer reaches the server over its unix socket. Startup parameters
PgBouncer does not track (`options`, `search_path`, `extra_float_digits`) are ignored by it, so
the schema is set for the role in the database instead (the managed server is accessbench's own)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from typing import Any

from ..errors import Fault
from ..net import PORT_TAKEN, on_a_free_port
from ..targets.base import file_safe, server_owner
from .base import Path, PathRun

MODES = ("transaction", "session")
POOL_SIZE = 20  # server connections per user and database: more than any suite's clients
# (in session mode also the clients served at once: the runner measures in batches that fit)
_LEVEL = re.compile(r"\b(WARNING|ERROR|FATAL|PANIC|DETAIL):?\s+(.*)$")  # a pooler's log line, from its level on


def _warnings(lines: list[str]) -> list[str]:
    """A log's warnings and errors, each with the DETAIL line that follows it (pgpool-II's)."""
    said: list[str] = []
    kept = False  # the line before was one kept
    for line in lines:
        m = _LEVEL.search(line)
        kept = m is not None and (m.group(1) != "DETAIL" or kept)
        if kept:
            said.append(" ".join(m.group(2).split()))
    return said


def _binary() -> str:
    return shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"  # sbin: often not on a user's PATH


def missing() -> str | None:
    if not os.path.exists(_binary()):
        return "PgBouncer is not installed (Debian: apt-get install pgbouncer; make setup installs it)"
    return None


class PoolerPath(Path):
    """What every pooler kind shares: it rides on the server's TCP side, needs its program
    installed, and says how each of its paths runs (``describe``) in the target's settings."""

    server_cpu_known = False  # the backend pid a client is told is the pooler's own, or its cached one's
    missing_pooler: Any = None  # why the pooler cannot run here (a function), or None

    @property
    def rides_on(self) -> str:
        return "tcp"

    def missing(self) -> str | None:
        return type(self).missing_pooler()

    def describe(self) -> str:
        raise NotImplementedError

    def reach(self, target: Any) -> dict[str, Any]:
        """Clients reach the pooler on its loopback port, with the target's TCP login."""
        return {**target.endpoint("tcp"), "host": "127.0.0.1", "port": self.running.port}

    def log_mark(self) -> Any:
        return self.running.log_size() if self.running else None

    def said_since(self, mark: Any) -> str | None:
        return self.running.said_since(mark) if self.running and mark is not None else None

    @classmethod
    def start_all(cls, paths: list[Path], target: Any, run: PathRun) -> dict[str, Any]:
        super().start_all(paths, target, run)
        return {cls.setting: f"{paths[0].running.version()}; " + "; ".join(p.describe() for p in paths)}


class Pooler(PoolerPath):
    forms = "pooler or pooler:session"
    help = "pooler / pooler:session (PgBouncer in transaction / session mode before a managed PostgreSQL)"
    setting = "pooler"
    runs = "PgBouncer"
    needs = "pooler paths need a managed PostgreSQL (accessbench starts PgBouncer in front of it)"
    missing_pooler = staticmethod(missing)

    @classmethod
    def parse(cls, name: str) -> Pooler | None:
        if name not in ("pooler", "pooler:transaction", "pooler:session"):
            return None
        path = cls(name, "pooler")
        path.pool_mode = name.partition(":")[2] or "transaction"
        return path

    @property
    def capacity(self) -> int | None:
        """Session pooling gives each client a server connection until it leaves: a client
        beyond the pool waits until one does. Transaction pooling serves every client."""
        return POOL_SIZE if self.pool_mode == "session" else None

    @property
    def server_connections(self) -> int:
        return POOL_SIZE

    def describe(self) -> str:
        return (f"{self.name}: pool_mode={self.pool_mode}, default_pool_size={POOL_SIZE}, clients over TCP"
                f"{' with TLS (client_tls_sslmode=require, the run’s key)' if self.tls else ''} by "
                f"{self.running.auth}, server over its unix socket")

    def start(self, target: Any, run: PathRun) -> None:
        server = target.behind_pooler()  # a target that cannot be pooled says so
        run.progress.note(f"starting PgBouncer ({self.pool_mode} pooling) for {target.name}"
                          f"{', clients over TLS' if self.tls else ''} (path {self.name})")
        directory = os.path.join(run.workdir, f"pgbouncer-{file_safe(self.name)}-{target.file_name}")
        self.running = on_a_free_port(lambda port: PgBouncer(self.pool_mode, server, directory, port,
                                                             target.authority if self.tls else None))


class PoolerProcess:
    """A pooler's process, started in its own directory as the server's OS user (poolers refuse
    root), ready once it accepts TCP on ``port``; stopped by SIGTERM. Its error is its log's
    last line."""

    name = "the pooler"

    def __init__(self, directory: str, port: int) -> None:
        self.directory, self.port = directory, port
        os.makedirs(directory, exist_ok=True)
        self.log = os.path.join(directory, "pooler.log")

    def private(self, name: str, text: str) -> str:
        """A file of the pooler's own that holds a secret (mode 0600, the pooler's user's)."""
        path = os.path.join(self.directory, name)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(text)
        return path

    def launch(self, args: list[str], as_user_flag: list[str] | None = None) -> None:
        """Start ``args``; as root the files go to the postgres user first, and the pooler runs as
        it (by its own flag, or by being started as that user)."""
        owner = server_owner("postgres")
        extra: dict[str, Any] = {}
        if owner is not None:
            for name in [self.directory, *(os.path.join(self.directory, f) for f in os.listdir(self.directory))]:
                os.chown(name, *owner)
            if as_user_flag is not None:
                args = args + as_user_flag
            else:
                extra = {"user": owner[0], "group": owner[1], "extra_groups": []}
        self.launched_at = self.log_size()  # what this start logs comes after
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **extra)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Fault(f"{self.name} exited with status {self.proc.returncode}: {self._last_log_line(PORT_TAKEN)}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise Fault(f"{self.name} did not listen on port {self.port} within {timeout:g} s")

    def log_size(self) -> int:
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def said_since(self, mark: int, wait: float = 0.3) -> str | None:
        """Its warnings and errors logged after ``mark`` (a size of its log), in one line. A
        pooler may log what it did a moment after the client saw it (its main process reports
        a child that died): it is given ``wait`` seconds to."""
        deadline = time.monotonic() + wait
        while True:
            try:
                with open(self.log, "rb") as f:
                    f.seek(mark)
                    text = f.read(65536).decode("utf-8", "replace")
            except OSError:
                return None
            said = list(dict.fromkeys(_warnings(text.splitlines())))
            if said or time.monotonic() >= deadline:
                return f"{self.name}'s log: {'; '.join(said[:3])}" if said else None
            time.sleep(0.05)

    def _last_log_line(self, rather: re.Pattern | None = None) -> str:
        """Its log's last line since it was started (the last one ``rather`` finds, when one does)."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self.launched_at)
                lines = f.read().decode("utf-8", "replace").strip().splitlines()
            found = [line for line in lines if rather and rather.search(line)]
            return (found or lines or ["no log"])[-1]
        except OSError:
            return "no log"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class PgBouncer(PoolerProcess):
    name = "PgBouncer"

    def __init__(self, mode: str, server: dict[str, Any], directory: str, port: int, authority: Any = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown pool mode {mode!r}")
        super().__init__(directory, port)
        self.mode, self.auth = mode, server["auth"]
        users = self.private("userlist.txt", f'"{server["user"]}" "{server["password"]}"\n')  # made for this run
        tls = ""
        if authority is not None:  # clients reach PgBouncer over TLS with the run's key; it reaches the server as before
            ca, cert, key = authority.install(directory)
            tls = (f"client_tls_sslmode = require\nclient_tls_ca_file = {ca}\nclient_tls_cert_file = {cert}\n"
                   f"client_tls_key_file = {key}\n")
        config = os.path.join(directory, "pgbouncer.ini")
        with open(config, "w") as f:
            f.write(
                "[databases]\n"
                f"* = host={server['socket_dir']} port={server['port']}\n"
                "[pgbouncer]\n"
                f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
                f"auth_type = {server['auth']}\nauth_file = {users}\n"
                f"pool_mode = {mode}\ndefault_pool_size = {POOL_SIZE}\nmax_client_conn = 2000\n"
                "ignore_startup_parameters = extra_float_digits,options,search_path\n"
                f"pidfile = {os.path.join(directory, 'pgbouncer.pid')}\n"
                "log_connections = 0\nlog_disconnections = 0\nlog_pooler_errors = 1\n" + tls
            )
        self.launch([_binary(), config], ["-u", "postgres"])  # PgBouncer drops root itself

    def version(self) -> str:
        out = subprocess.run([_binary(), "--version"], capture_output=True, text=True).stdout
        return out.splitlines()[0] if out else "PgBouncer"
