"""PostgreSQL: a managed throwaway server, or an external one given by URL.

Either way accessbench works only inside its own schema ``accessbench``; on a managed
server it also owns the database and the whole cluster, which it removes when it stops.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

import psycopg

from ..protocol import sqltext
from ..suite.model import Table
from .base import Target, TargetUnavailable, column_ddl, index_ddl, server_can_enter

SCHEMA = "accessbench"
DATABASE = "accessbench"
USER = "accessbench"
_TYPES = {"double": "double precision", "bytes": "bytea"}
_SETTINGS = (
    "server_version", "shared_buffers", "work_mem", "fsync", "synchronous_commit", "wal_level",
    "max_connections", "jit", "password_encryption",
)


def _pg_type(neutral: str) -> str:
    return _TYPES.get(neutral, neutral)


def find_bindir() -> str:
    """The newest installed server's bin directory (Debian keeps them out of PATH)."""
    override = os.environ.get("ACCESSBENCH_PG_BINDIR")
    candidates = [override] if override else sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True
    )
    if not override and shutil.which("initdb"):
        candidates.append(os.path.dirname(shutil.which("initdb")))
    for bindir in candidates:
        if os.path.exists(os.path.join(bindir, "initdb")) and os.path.exists(os.path.join(bindir, "pg_ctl")):
            return bindir
    raise TargetUnavailable(
        "no PostgreSQL server binaries (initdb, pg_ctl): install postgresql-15 (make setup does) "
        "or set ACCESSBENCH_PG_BINDIR"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresTarget(Target):
    dbms = "postgresql"
    paths = ("unix", "tcp")

    def __init__(self) -> None:
        self.admin: psycopg.Connection | None = None

    # the runner's own connection: schema, data, reset, check
    def _open_admin(self, **kwargs) -> None:
        self.admin = psycopg.connect(**kwargs, autocommit=True)
        self.admin.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        self.admin.execute(f"SET search_path TO {SCHEMA}")

    def _close_admin(self, drop_schema: bool) -> None:
        if self.admin is None:
            return
        if drop_schema and not self.admin.closed:
            self.admin.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        self.admin.close()
        self.admin = None

    def describe(self) -> dict[str, Any]:
        names = dict.fromkeys([*_SETTINGS, *self.server_settings])  # and whatever the suite set
        settings = {name: self.admin.execute("SELECT current_setting(%s)", [name]).fetchone()[0] for name in names}
        return {"server_version": settings.pop("server_version"), "settings": settings}

    def create(self, tables: list[Table]) -> None:
        for table in tables:
            self.admin.execute(f"DROP TABLE IF EXISTS {SCHEMA}.{table.name}")
            self.admin.execute(column_ddl(table, _pg_type).replace("CREATE TABLE ", f"CREATE TABLE {SCHEMA}.", 1))
            for ddl in index_ddl(table):
                self.admin.execute(ddl.replace(" ON ", f" ON {SCHEMA}.", 1))

    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        names = ", ".join(c.name for c in table.columns)
        with self.admin.cursor() as cur:
            with cur.copy(f"COPY {SCHEMA}.{table.name} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        # Fresh statistics and a visibility map, as a settled production table has.
        self.admin.execute(f"VACUUM ANALYZE {SCHEMA}.{table.name}")

    def execute(self, sql: str) -> None:
        self.admin.execute(sql)

    def changes(self, sql: str, params: tuple = ()) -> int:
        return self.admin.execute(sqltext.convert(sql, "format"), params).rowcount

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        if params:
            return self.admin.execute(sqltext.convert(sql, "format"), params).fetchall()
        return self.admin.execute(sql).fetchall()


class ManagedPostgres(PostgresTarget):
    """initdb into the work directory; runs as the ``postgres`` OS user when started as root
    (the server refuses to run as root); trust on the unix socket, SCRAM over TCP."""

    name = "postgresql"
    managed = True
    local_server = True

    def __init__(self) -> None:
        super().__init__()
        self.bindir = find_bindir()
        self.datadir: str | None = None
        self.port = 0
        self.password = secrets.token_urlsafe(18)
        self.started = False

    def _as_server_user(self) -> dict[str, Any]:
        if os.geteuid() != 0:
            return {}
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise TargetUnavailable("running as root needs a 'postgres' OS user to run the server") from None
        return {"user": "postgres", "group": "postgres", "extra_groups": []}

    def _run(self, args: list[str], what: str) -> None:
        result = subprocess.run(
            args, capture_output=True, text=True, start_new_session=True, **self._as_server_user()
        )
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise TargetUnavailable(f"{what} failed: {detail[-1] if detail else result.returncode}")

    def start(self, workdir: str) -> None:
        if os.geteuid() == 0:
            server_can_enter(workdir, "postgres")
        base = os.path.join(workdir, "postgresql")
        self.datadir, self.sockdir = os.path.join(base, "data"), os.path.join(base, "run")
        os.makedirs(self.sockdir)
        pwfile = os.path.join(base, "pw")
        with open(os.open(pwfile, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.password + "\n")
        if os.geteuid() == 0:
            os.chmod(workdir, 0o755)
            server = pwd.getpwnam("postgres")
            for path in (base, self.sockdir, pwfile):
                os.chown(path, server.pw_uid, server.pw_gid)
        try:
            self._run(
                [f"{self.bindir}/initdb", "-D", self.datadir, "-U", USER, "-E", "UTF8", "--locale=C",
                 "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}"],
                "initdb",
            )
        finally:
            os.remove(pwfile)
        self.port = free_port()
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as conf:
            conf.write(
                "\n# accessbench managed server\n"
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.sockdir}'\nmax_connections = 200\n"
            )
            for name, value in self.server_settings.items():  # the suite's [server.postgresql]
                text = ("on" if value else "off") if isinstance(value, bool) else str(value)
                conf.write(f"{name} = '{text}'\n")
        self._run(
            [f"{self.bindir}/pg_ctl", "-D", self.datadir, "-l", os.path.join(base, "server.log"),
             "-w", "-t", "60", "start"],
            "starting PostgreSQL",
        )
        self.started = True
        with psycopg.connect(host=self.sockdir, port=self.port, user=USER, dbname="postgres", autocommit=True) as c:
            c.execute(f"CREATE DATABASE {DATABASE}")
        self._open_admin(host=self.sockdir, port=self.port, user=USER, dbname=DATABASE)

    def listen_on(self, address: str, network: str) -> None:
        """Also accept connections on ``address`` (a netem link's host end) from ``network``,
        with SCRAM as on loopback; restarts the server, so it is done before any worker."""
        self.addresses = [*getattr(self, "addresses", ["127.0.0.1"]), address]
        self.admin.execute(f"ALTER SYSTEM SET listen_addresses = '{','.join(self.addresses)}'")
        with open(os.path.join(self.datadir, "pg_hba.conf"), "a") as hba:
            hba.write(f"host all all {network} scram-sha-256\n")
        self._close_admin(drop_schema=False)
        # -l as at start: the new postmaster must not inherit (and hold open) our pipes
        self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-l", os.path.join(os.path.dirname(self.datadir), "server.log"),
                   "-m", "fast", "-w", "restart"], "restarting PostgreSQL")
        self._open_admin(host=self.sockdir, port=self.port, user=USER, dbname=DATABASE)

    def behind_pooler(self) -> dict[str, Any]:
        """What PgBouncer needs to serve this server. The schema becomes the role's default in
        the database, since PgBouncer drops the startup packet's search_path."""
        self.admin.execute(f"ALTER ROLE {USER} IN DATABASE {DATABASE} SET search_path = {SCHEMA}")
        return {"socket_dir": self.sockdir, "port": self.port, "user": USER, "password": self.password}

    def stop(self) -> None:
        try:
            self._close_admin(drop_schema=False)  # the whole cluster goes
        except psycopg.Error:
            pass
        if self.started:
            self.started = False
            try:
                self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-m", "fast", "-w", "stop"], "stopping PostgreSQL")
            except TargetUnavailable:
                self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-m", "immediate", "-w", "stop"], "stopping PostgreSQL")
        if self.datadir:
            shutil.rmtree(os.path.dirname(self.datadir), ignore_errors=True)

    def endpoint(self, path: str) -> dict[str, Any]:
        common = {
            "dbms": "postgresql", "port": self.port, "database": DATABASE, "user": USER, "schema": SCHEMA,
            "sslmode": "disable",  # the managed server offers no TLS; nobody probes for it
        }
        if path == "unix":
            return {**common, "host": self.sockdir}
        return {**common, "host": "127.0.0.1", "password": self.password}

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["settings"]["auth"] = "unix: trust; tcp: scram-sha-256"
        info["settings"]["tls"] = "off (clients use sslmode=disable)"
        return info


class ExternalPostgres(PostgresTarget):
    """A server the user runs: only the ``accessbench`` schema is created and dropped."""

    managed = False

    def __init__(self, url: str) -> None:
        super().__init__()
        parts = urlsplit(url)
        self.url = url
        netloc = parts.netloc.rsplit("@", 1)
        user = netloc[0].split(":", 1)[0] + "@" if len(netloc) == 2 else ""
        self.name = urlunsplit((parts.scheme, user + netloc[-1], parts.path, "", ""))  # no password
        self.info = psycopg.conninfo.conninfo_to_dict(url)
        self.info.setdefault("password", os.environ.get("PGPASSWORD"))
        host = self.info.get("host") or "/var/run/postgresql"
        self.paths = ("unix",) if host.startswith("/") else ("tcp",)

    def start(self, workdir: str) -> None:
        try:
            self._open_admin(**{k: v for k, v in self.info.items() if v is not None})
        except psycopg.Error as e:
            raise TargetUnavailable(f"cannot connect to {self.name}: {str(e).strip().splitlines()[0]}") from None

    def stop(self) -> None:
        try:
            self._close_admin(drop_schema=True)
        except psycopg.Error:
            pass

    def endpoint(self, path: str) -> dict[str, Any]:
        info = self.admin.info
        return {
            "dbms": "postgresql", "host": info.host, "port": info.port, "database": info.dbname,
            "user": info.user, "password": self.info.get("password"), "schema": SCHEMA,
            "sslmode": self.info.get("sslmode", "prefer"),
        }
