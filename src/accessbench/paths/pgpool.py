"""``pgpool``: pgpool-II (Debian's package) in its connection-pooling mode (``connection_cache =
on``) between the workers and a managed PostgreSQL, started and stopped with the run.

It runs in streaming-replication mode with the server as its one, always primary, backend —
how it stands before a primary in production — not in raw mode: there pgpool-II 4.3 wraps an
autocommitted extended-protocol INSERT, UPDATE or DELETE in a BEGIN of its own and leaves that
transaction open after the client's Sync (pgpool2 issue #172, still open in 4.8devel), so the
row is never committed. Load balancing, health and replication checks and failover are off.

pgpool-II pools per client process: each of its ``num_init_children`` processes serves one
client connection at a time and keeps its backend connection (per user and database) open
after the client leaves, for the next client of that process — session pooling, with
``reset_query_list`` (``ABORT; DISCARD ALL``) run between clients, so a prepared statement
never outlives its client's session. Clients reach it over loopback TCP by the login the
server takes there (SCRAM, or the target's ``?auth=``; its pool_hba.conf and pool_passwd); it
reaches the server over its unix socket.

A driver that sends ``COPY … TO STDOUT`` by the extended protocol (ADBC's and ConnectorX's
readers do, for every result) loses pgpool-II 4.3.5's child process (a segmentation fault):
the driver sees only a closed connection, and the cell's error carries pgpool-II's own log line
(``Path.said_since``), as every cell that fails through a pooler does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from ..net import free_port, on_a_free_port
from ..targets.base import file_safe
from .base import PathRun
from .pooler import PoolerPath, PoolerProcess

CHILDREN = 64   # client connections at once: more than any suite's clients
MAX_POOL = 4    # cached backend connections per child (per user and database)


def _binary() -> str:
    return shutil.which("pgpool") or "/usr/sbin/pgpool"


def missing() -> str | None:
    if not os.path.exists(_binary()):
        return "pgpool-II is not installed (Debian: apt-get install pgpool2; make setup installs it)"
    return None


class PgpoolPath(PoolerPath):
    forms = "pgpool"
    help = "pgpool (pgpool-II in connection-pooling mode before a managed PostgreSQL)"
    setting = "pgpool"
    runs = "pgpool-II"
    needs = "pgpool paths need a managed PostgreSQL (accessbench starts pgpool-II in front of it)"
    missing_pooler = staticmethod(missing)

    @classmethod
    def parse(cls, name: str) -> PgpoolPath | None:
        return cls(name, "pgpool") if name == "pgpool" else None

    @property
    def capacity(self) -> int:
        """Each child serves one client at a time; a client beyond them waits for one."""
        return CHILDREN

    @property
    def server_connections(self) -> int:
        return CHILDREN  # one cached backend per child: the run has one user and database

    def describe(self) -> str:
        return (f"{self.name}: streaming-replication mode, one always-primary backend, connection_cache = on, "
                f"num_init_children = {CHILDREN}, max_pool = {MAX_POOL}, reset_query_list = 'ABORT; DISCARD ALL', "
                f"clients over TCP{' with TLS (the run’s key)' if self.tls else ''} by {self.running.auth}, "
                "server over its unix socket")

    def start(self, target: Any, run: PathRun) -> None:
        server = target.behind_pooler()  # a target that cannot be pooled says so
        run.progress.note(f"starting pgpool-II for {target.name}{', clients over TLS' if self.tls else ''} (path {self.name})")
        directory = os.path.join(run.workdir, f"{file_safe(self.name)}-{target.file_name}")
        self.running = on_a_free_port(lambda port: Pgpool(server, directory, port, target.authority if self.tls else None))


class Pgpool(PoolerProcess):
    name = "pgpool-II"

    def __init__(self, server: dict[str, Any], directory: str, port: int, authority: Any = None) -> None:
        super().__init__(directory, port)
        self.auth = server["auth"]
        passwords = self.private("pool_passwd", f"{server['user']}:TEXT{server['password']}\n")  # made for this run
        hba = os.path.join(directory, "pool_hba.conf")
        with open(hba, "w") as f:
            f.write(f"host all all 127.0.0.1/32 {self.auth}\n")
        pcp = self.private("pcp.conf", "")  # no pcp users: its port listens on nothing but a socket
        tls = ""
        if authority is not None:
            ca, cert, key = authority.install(directory)
            tls = f"ssl = on\nssl_key = '{key}'\nssl_cert = '{cert}'\nssl_ca_cert = '{ca}'\n"
        config = os.path.join(directory, "pgpool.conf")
        with open(config, "w") as f:
            f.write(
                "backend_clustering_mode = 'streaming_replication'\n"
                f"listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{directory}'\n"
                f"pcp_listen_addresses = ''\npcp_port = {free_port()}\npcp_socket_dir = '{directory}'\n"
                f"backend_hostname0 = '{server['socket_dir']}'\nbackend_port0 = {server['port']}\nbackend_weight0 = 1\n"
                "backend_flag0 = 'ALWAYS_PRIMARY'\n"
                f"enable_pool_hba = on\npool_passwd = '{passwords}'\n"
                f"num_init_children = {CHILDREN}\nmax_pool = {MAX_POOL}\nconnection_cache = on\n"
                "load_balance_mode = off\nhealth_check_period = 0\nsr_check_period = 0\n"
                "failover_on_backend_error = off\n"
                # Its own catalog lookups (is the table temporary? unlogged?) serve its query
                # routing, which one backend does not need; sent inside a client's extended-query
                # sequence they leave the backend in a transaction the client never began.
                "check_temp_table = none\ncheck_unlogged_table = off\nmemory_cache_enabled = off\ninsert_lock = off\n"
                f"log_destination = 'stderr'\nlogdir = '{directory}'\npid_file_name = '{directory}/pgpool.pid'\n"
                + tls
            )
        self.launch([_binary(), "-n", "-f", config, "-F", pcp, "-a", hba])

    def version(self) -> str:
        done = subprocess.run([_binary(), "--version"], capture_output=True, text=True)
        out = (done.stdout or done.stderr).strip()  # pgpool-II says its version on stderr
        return out.splitlines()[0] if out else "pgpool-II"
