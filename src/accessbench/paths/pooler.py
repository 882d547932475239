"""``pooler`` (``pooler:transaction``) and ``pooler:session``: PgBouncer (Debian's package) in
that pool mode between the workers and a managed PostgreSQL, started and stopped with the run.

Clients reach PgBouncer over loopback TCP with SCRAM, as they reach the server directly on
`tcp`; PgBouncer reaches the server over its unix socket. Startup parameters PgBouncer does not
track (`options`, `search_path`, `extra_float_digits`) are ignored by it, so the schema is set
for the role in the database instead (the managed server is accessbench's own)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from typing import Any

from ..net import free_port
from .base import Path, PathRun

MODES = ("transaction", "session")
POOL_SIZE = 20  # server connections per user and database: more than any suite's clients


def _binary() -> str:
    return shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"  # sbin: often not on a user's PATH


def missing() -> str | None:
    if not os.path.exists(_binary()):
        return "PgBouncer is not installed (Debian: apt-get install pgbouncer; make setup installs it)"
    return None


class Pooler(Path):
    forms = "pooler or pooler:session"
    help = "pooler / pooler:session (PgBouncer in transaction / session mode before a managed PostgreSQL)"
    setting = "pooler"
    runs = "PgBouncer"
    needs = "pooler paths need a managed PostgreSQL (accessbench starts PgBouncer in front of it)"
    server_cpu_known = False  # the backend pid a client is told is PgBouncer's own

    @classmethod
    def parse(cls, name: str) -> Pooler | None:
        if name not in ("pooler", "pooler:transaction", "pooler:session"):
            return None
        path = cls(name, "pooler")
        path.pool_mode = name.partition(":")[2] or "transaction"
        return path

    @property
    def rides_on(self) -> str:
        return "tcp"

    def missing(self) -> str | None:
        return missing()

    @classmethod
    def start_all(cls, paths: list[Path], target: Any, run: PathRun) -> dict[str, Any]:
        super().start_all(paths, target, run)
        return {cls.setting: f"{paths[0].running.version()}; " + "; ".join(
            f"{p.name}: pool_mode={p.pool_mode}, default_pool_size={POOL_SIZE}, clients over TCP with SCRAM, "
            "server over its unix socket" for p in paths)}

    def start(self, target: Any, run: PathRun) -> None:
        server = target.behind_pooler()  # a target that cannot be pooled says so
        run.progress.note(f"starting PgBouncer ({self.pool_mode} pooling) for {target.name}")
        directory = os.path.join(run.workdir, f"pgbouncer-{self.pool_mode}-{target.file_name}")
        self.running = PgBouncer(self.pool_mode, server["socket_dir"], server["port"], server["user"],
                                 server["password"], directory, free_port())

    def endpoint(self, target: Any) -> dict[str, Any]:
        return {**target.endpoint("tcp"), "host": "127.0.0.1", "port": self.running.port}


class PgBouncer:
    def __init__(self, mode: str, server_socket_dir: str, server_port: int, user: str, password: str,
                 directory: str, port: int) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown pool mode {mode!r}")
        self.mode, self.port, self.directory = mode, port, directory
        os.makedirs(directory, exist_ok=True)
        config = os.path.join(directory, "pgbouncer.ini")
        users = os.path.join(directory, "userlist.txt")
        self.log = os.path.join(directory, "pgbouncer.log")
        with open(os.open(users, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(f'"{user}" "{password}"\n')  # a throwaway password made for this run
        with open(config, "w") as f:
            f.write(
                "[databases]\n"
                f"* = host={server_socket_dir} port={server_port}\n"
                "[pgbouncer]\n"
                f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
                f"auth_type = scram-sha-256\nauth_file = {users}\n"
                f"pool_mode = {mode}\ndefault_pool_size = {POOL_SIZE}\nmax_client_conn = 2000\n"
                "ignore_startup_parameters = extra_float_digits,options,search_path\n"
                f"logfile = {self.log}\npidfile = {os.path.join(directory, 'pgbouncer.pid')}\n"
                "log_connections = 0\nlog_disconnections = 0\nlog_pooler_errors = 1\n"
            )
        args = [_binary(), config]
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            server = pwd.getpwnam("postgres")
            for path in (directory, config, users):
                os.chown(path, server.pw_uid, server.pw_gid)
            args += ["-u", "postgres"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"PgBouncer exited with status {self.proc.returncode}: {self._last_log_line()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"PgBouncer did not listen on port {self.port} within {timeout:g} s")

    def _last_log_line(self) -> str:
        try:
            with open(self.log) as f:
                lines = f.read().strip().splitlines()
            return lines[-1] if lines else "no log"
        except OSError:
            return "no log"

    def version(self) -> str:
        out = subprocess.run([_binary(), "--version"], capture_output=True, text=True).stdout
        return out.splitlines()[0] if out else "PgBouncer"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
