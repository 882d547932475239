"""MariaDB: a managed throwaway server, or an external one given by URL.

Either way accessbench works only inside its own database ``accessbench``, which it creates
and drops; on a managed server it also owns the data directory, removed when it stops.
MariaDB's description (``MARIADB``: its limits, its storage engines' rules on a table) is at
the end.
"""

from __future__ import annotations

import datetime as dt
import decimal
import ipaddress
import os
import pwd
import re
import secrets
import shutil
import subprocess
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable
from ..errors import InputError, first_line
from ..net import on_a_free_port
from ..protocol import sqltext
from . import url as urls
from .base import (MARK, OWNED_NAME, Leftover, Target, TargetUnavailable, column_ddl, declared, index_ddl, is_marked,
                   TLS_SERVED, mark, owned_name, server_can_enter, server_owner)
from .registry import DBMS, Conformance, DBMSLimits, Login, register

if TYPE_CHECKING:
    from ..suite.model import Table

SCHEMES = ("mariadb", "mysql")  # of an external server's URL
DATABASE = "accessbench"
USER = "accessbench"
LOGIN = "accessbench_login"  # the workers' user on a server whose login is the question (?auth=)
PLUGINS = {"native": "mysql_native_password", "ed25519": "ed25519"}  # ?auth= → the authentication plugin
_TYPES = {"double": "DOUBLE", "real": "FLOAT", "bytes": "LONGBLOB", "timestamp": "DATETIME(6)"}
# The settings that decide results, recorded with every run (SHOW GLOBAL VARIABLES names).
_SETTINGS = (
    "default_storage_engine", "innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "autocommit",
    "innodb_buffer_pool_size", "innodb_doublewrite", "innodb_flush_method", "aria_pagecache_buffer_size",
    "key_buffer_size", "max_connections", "tx_isolation", "thread_handling", "character_set_server",
    "collation_server", "query_cache_type",
)
START_TIMEOUT_S = 60


def _maria_type(neutral: str) -> str:
    return _TYPES.get(neutral, neutral.upper())


def _first_error(log: str) -> str:
    """The line that says why MariaDB stopped: its first [ERROR] other than 'Aborting', or the
    installer's own ``ERROR: code message`` line."""
    errors = [line.split("[ERROR]", 1)[1].strip() if "[ERROR]" in line else line.strip()
              for line in log.splitlines() if "[ERROR]" in line or line.startswith("ERROR:")]
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return next((e for e in errors if e != "Aborting"), lines[-1] if lines else "no output")


def _option(value: Any) -> str:
    return ("ON" if value else "OFF") if isinstance(value, bool) else str(value)


def _tsv(value: Any) -> str:
    """One value in LOAD DATA's default text format (tab separated, backslash escapes)."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()  # loaded through UNHEX: the text format has no binary escape
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, float):
        return repr(value)
    text = str(value) if not isinstance(value, decimal.Decimal) else format(value, "f")
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def find_mariadbd() -> str | None:
    """The server Debian installs (in /usr/sbin, which a user's PATH may not hold)."""
    return shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None)


def installed_versions() -> dict[str, str]:
    """The server installed here by its major.minor version, as ``--target mariadb@VERSION``
    writes it ("10.11") → its mariadbd, where ``mariadbd --version`` says. Asked only for a
    spec with '@': reading the version runs the server's binary."""
    mariadbd = find_mariadbd()
    if mariadbd is None:
        return {}
    try:
        out = subprocess.run([mariadbd, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    m = re.search(r"\bVer (\d+\.\d+)\.", out)  # "mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu …"
    return {m.group(1): mariadbd} if m else {}


class MariaDBTarget(Target):
    dbms = "mariadb"
    paths = ("unix", "tcp")
    serves_by_thread = True  # one thread per connection; workers report its OS thread id (TID)

    database = DATABASE

    def __init__(self) -> None:
        self.admin = None
        self.workdir: str | None = None

    def _connect(self, **kwargs):
        import pymysql

        from pymysql.constants import CLIENT

        # FOUND_ROWS: an UPDATE's count is the rows it matched, as on PostgreSQL and SQLite,
        # not only those whose values it changed (every MariaDB method sets it)
        return pymysql.connect(**kwargs, autocommit=True, local_infile=True, charset="utf8mb4",
                               client_flag=CLIENT.FOUND_ROWS)

    def _open_admin(self, **kwargs) -> None:
        self.admin = self._connect(**kwargs, database=self.database)

    def refuses_statement(self, sql: str, params: tuple) -> str | None:
        import pymysql

        try:  # planned, not run
            with self.admin.cursor() as cur:
                cur.execute("EXPLAIN " + sqltext.convert(sql, "format"), params)
        except pymysql.Error as e:
            return first_line(e)
        return None

    def _close_admin(self) -> None:
        if self.admin is None:
            return
        try:
            self.admin.close()
        except Exception:  # a server already gone
            pass
        self.admin = None

    bound_s = 0.0  # the suite's statements on the runner's connection; creating and loading tables are not

    def bound(self, seconds: float) -> None:
        self.bound_s = seconds
        self.execute(f"SET SESSION max_statement_time = {seconds:.3f}")

    @contextmanager
    def _unbounded(self):
        self.execute("SET SESSION max_statement_time = 0")
        try:
            yield
        finally:
            self.execute(f"SET SESSION max_statement_time = {self.bound_s:.3f}")

    def _cancel_on(self, conn, user: str, tids: set[int] | None = None) -> None:
        """KILL QUERY the run's statements still executing: every one of ``user`` (a user only the
        run logs in as), or, where the login is shared with sessions that are not the run's, only
        those served by ``tids`` among them; then the connections of any still running."""
        where = "ID <> CONNECTION_ID() AND COMMAND = 'Query' AND USER = %s"
        if tids is not None:
            where += f" AND TID IN ({', '.join(map(str, map(int, tids))) or 'NULL'})"
        with conn.cursor() as cur:
            cur.execute(f"SELECT ID FROM information_schema.PROCESSLIST WHERE {where}", (user,))
            ids = [r[0] for r in cur.fetchall()]
            for query_id in ids:
                cur.execute(f"KILL QUERY {int(query_id)}")
            deadline = time.monotonic() + 2
            while ids and time.monotonic() < deadline:
                time.sleep(0.05)
                cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND ID IN "
                            f"({', '.join(map(str, ids))})")
                ids = [r[0] for r in cur.fetchall()]
            for query_id in ids:
                cur.execute(f"KILL CONNECTION {int(query_id)}")

    @contextmanager
    def round_trips(self, endpoint: dict[str, Any]):
        conn = self._connect(host=endpoint["host"], port=int(endpoint["port"]), user=endpoint["user"],
                             password=endpoint.get("password") or "", database=endpoint["database"])
        try:
            with conn.cursor() as cur:
                yield lambda: (cur.execute("SELECT 1"), cur.fetchall())
        finally:
            conn.close()

    def describe(self) -> dict[str, Any]:
        names = list(dict.fromkeys([*_SETTINGS, *self.server_settings]))  # and whatever the suite set
        rows = dict(self.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({', '.join('?' * len(names))})",
                               tuple(names)))
        version = self.query("SELECT VERSION()")[0][0]
        return {"server_version": version, "settings": {name: rows.get(name) for name in names}}

    def create(self, tables: list[Table]) -> None:
        with self._unbounded():
            self._create(tables)

    def _create(self, tables: list[Table]) -> None:
        for table in tables:
            self.execute(f"DROP TABLE IF EXISTS {table.name}")
            ddl = column_ddl(table, _maria_type)
            if table.engine:
                ddl += f" ENGINE={table.engine}"
            self.execute(ddl)
            for index in index_ddl(table):
                self.execute(index)

    def load(self, table: Table, rows: Iterable[tuple]) -> None:
        with self._unbounded():
            self._load(table, rows)

    def _load(self, table: Table, rows: Iterable[tuple]) -> None:
        """LOAD DATA LOCAL INFILE from a text file in the work directory: MariaDB's fast path."""
        path = os.path.join(self.workdir or "/tmp", f"load-{table.name}.tsv")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for row in rows:
                f.write("\t".join(map(_tsv, row)) + "\n")
        names, sets = [], []
        for c in table.columns:
            if c.type == "bytes":
                names.append(f"@{c.name}")
                sets.append(f"{c.name} = UNHEX(@{c.name})")
            else:
                names.append(c.name)
        sql = (f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table.name} CHARACTER SET utf8mb4 "
               f"({', '.join(names)})" + (f" SET {', '.join(sets)}" if sets else ""))
        try:
            self.execute(sql)
        finally:
            os.remove(path)
        self.execute(f"ANALYZE TABLE {table.name}")

    def execute(self, sql: str) -> None:
        with self.admin.cursor() as cur:
            cur.execute(sql)
            if cur.description:
                cur.fetchall()

    def changes(self, sql: str, params: tuple = ()) -> int:
        with self.admin.cursor() as cur:
            return cur.execute(sqltext.convert(sql, "format"), params)

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.admin.cursor() as cur:
            if params:
                cur.execute(sqltext.convert(sql, "format"), params)
            else:
                cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]

    def connection_room(self) -> int:
        # Threads_connected counts every client (the process list shows a user only its own)
        return int(self.query("SELECT @@max_connections - VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                              "WHERE VARIABLE_NAME = 'THREADS_CONNECTED'")[0][0])


class ManagedMariaDB(MariaDBTarget):
    """mariadb-install-db into the work directory; mariadbd on its own socket and a free
    loopback port, as the ``mysql`` OS user when started as root; a password for the
    ``accessbench`` user on both paths (mysql_native_password)."""

    name = "mariadb"
    managed = True
    local_server = True
    helps = frozenset({"netem", "tls"})  # the server is ours: it can listen on another network too, serve TLS

    def __init__(self, version: str | None = None, login: Login | None = None) -> None:
        """The server installed, or the one of ``version`` (major.minor, one of
        ``installed_versions``), then named ``mariadb@VERSION``; with ``login``, its clients
        log in by that plugin (``mariadb?auth=ed25519``)."""
        super().__init__()
        self.mariadbd = find_mariadbd() if version is None else installed_versions().get(version)
        if version is not None and self.mariadbd is None:
            raise TargetUnavailable(f"MariaDB {version} is not installed here")
        self.identify(version, login)
        self.install_db = shutil.which("mariadb-install-db")
        if not self.mariadbd or not self.install_db:
            raise TargetUnavailable("no MariaDB server binaries (mariadbd, mariadb-install-db): install mariadb-server "
                                    "(make setup does)")
        self.password = secrets.token_urlsafe(18)
        self.process: subprocess.Popen | None = None
        self.base: str | None = None
        self.port = 0

    def _server_user(self) -> dict[str, Any]:
        if os.geteuid() != 0:
            return {}
        try:
            pwd.getpwnam("mysql")
        except KeyError:
            raise TargetUnavailable("running as root needs a 'mysql' OS user to run the server") from None
        return {"user": "mysql", "group": "mysql", "extra_groups": []}

    def start(self, workdir: str) -> None:
        try:
            self._start(workdir)
        except BaseException:
            self.stop()  # nothing left running after a failed start
            raise

    def _start(self, workdir: str) -> None:
        self.workdir = workdir
        if os.geteuid() == 0:
            server_can_enter(workdir, "mysql")
            os.chmod(workdir, 0o755)
        self.base = self.own_directory(workdir)
        datadir, rundir = os.path.join(self.base, "data"), os.path.join(self.base, "run")
        # its own temporary directory: servers installed at once in a shared /tmp collide on the
        # names of their internal temporary tables ("Unknown table 'mysql.tmp_user_sys'")
        tmpdir = os.path.join(self.base, "tmp")
        os.makedirs(rundir)
        os.makedirs(tmpdir)
        if os.geteuid() == 0:
            server = pwd.getpwnam("mysql")
            for path in (self.base, rundir, tmpdir):
                os.chown(path, server.pw_uid, server.pw_gid)
        self.socket = os.path.join(rundir, "mariadb.sock")
        result = subprocess.run(
            [self.install_db, "--no-defaults", f"--datadir={datadir}", "--auth-root-authentication-method=socket",
             "--skip-test-db", "--skip-name-resolve", f"--tmpdir={tmpdir}", *(["--user=mysql"] if os.geteuid() == 0 else [])],
            capture_output=True, text=True, start_new_session=True)
        if result.returncode != 0:
            raise TargetUnavailable(f"mariadb-install-db failed: {_first_error(result.stderr + result.stdout)}")
        tls = []
        if self.authority is not None:  # a TLS path: the run's key, in the directory the server owns
            ca, cert, key = self.authority.install(self.base, server_owner("mysql"))
            tls = [f"--ssl-ca={ca}", f"--ssl-cert={cert}", f"--ssl-key={key}"]
        self.command = [
            self.mariadbd, "--no-defaults", f"--datadir={datadir}", f"--socket={self.socket}",
            f"--tmpdir={tmpdir}", "--bind-address=127.0.0.1", "--skip-name-resolve", f"--pid-file={os.path.join(rundir, 'mariadb.pid')}",
            "--max-connections=300", "--skip-log-bin", "--local-infile=1",
            "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",  # byte order, as PostgreSQL's C locale
            *tls,
            *(f"--{name.replace('_', '-')}={_option(value)}" for name, value in self.server_settings.items()),
            *(["--user=mysql"] if os.geteuid() == 0 else [])]
        # the administrator logs in by unix_socket: root as root, else the OS user's own name
        root = on_a_free_port(self._launch_on)
        with root.cursor() as cur:
            cur.execute(f"CREATE DATABASE {DATABASE}")
            if self.login and self.login.method == "ed25519":
                cur.execute("INSTALL SONAME 'auth_ed25519'")  # a plugin Debian's server has, not loaded by default
            for host in ("localhost", "127.0.0.1"):
                self._add_users(cur, host)
            cur.execute(f"GRANT RELOAD, PROCESS ON *.* TO '{USER}'@'localhost'")
        root.close()
        self._open_admin(unix_socket=self.socket, user=USER, password=self.password)

    def _add_users(self, cur, host: str) -> None:
        """The run's users at ``host``, with every right in the run's database: the runner's (by
        mysql_native_password), and where the login is the question the workers' own, by that
        plugin (its password hashed by the plugin)."""
        cur.execute(f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY %s", (self.password,))
        cur.execute(f"GRANT ALL ON {DATABASE}.* TO '{USER}'@'{host}'")
        if self.login:
            cur.execute(f"CREATE USER '{LOGIN}'@'{host}' IDENTIFIED VIA {PLUGINS[self.login.method]} USING PASSWORD(%s)",
                        (self.password,))
            cur.execute(f"GRANT ALL ON {DATABASE}.* TO '{LOGIN}'@'{host}'")

    @property
    def _worker_user(self) -> str:
        return LOGIN if self.login else USER

    @staticmethod
    def _root() -> str:
        return "root" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def _launch_on(self, port: int):
        """mariadbd started on ``port`` and its administrator's connection; where the port was
        taken, the error says so and net.on_a_free_port starts it again on another."""
        self.port = port
        log = os.path.join(self.base, "server.log")
        if os.path.exists(log):
            os.truncate(log, 0)  # this start's errors alone
        self._launch()
        return self._wait_ready(self._root())

    def _launch(self) -> None:
        log = open(os.path.join(self.base, "server.log"), "ab")
        self.process = subprocess.Popen([*self.command, f"--port={self.port}"], stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=log, start_new_session=True)
        log.close()

    def listen_on(self, address: str, network: str) -> None:
        """Also accept connections on ``address`` from ``network`` (a.b.c.d/len, or "samenet":
        from anywhere the server is reached) for the run's user; restarts the server (cleanly,
        its data kept), so it is done before any worker."""
        hosts = "%" if network == "samenet" else ipaddress.IPv4Network(network).with_netmask
        root = self._connect(unix_socket=self.socket, user=self._root())
        try:
            with root.cursor() as cur:
                self._add_users(cur, hosts)
        finally:
            root.close()
        self._close_admin()
        self.process.terminate()
        self.process.wait(timeout=60)
        bind = next(i for i, part in enumerate(self.command) if part.startswith("--bind-address="))
        self.command[bind] += f",{address}"
        self._launch()
        self._wait_ready(self._root()).close()
        self._open_admin(unix_socket=self.socket, user=USER, password=self.password)

    def holds(self) -> str | None:
        if self.process is None:
            return None
        return f"the managed MariaDB server (pid {self.process.pid}), its files in {self.base}"

    def transport_mark(self) -> Any:
        return self._handshakes()

    def transport(self, mark: Any, server_pid: int | None) -> tuple[bool, str | None] | None:
        """MariaDB shows another session's TLS only through performance_schema, which the managed
        server runs without (it costs every statement): the server's counts of connections and
        of TLS handshakes it accepted tell instead, since the runner's own connection is already
        open and the worker opening now is the only client connecting."""
        connections, encrypted = (now - then for now, then in zip(self._handshakes(), mark))
        if connections == 0 or 0 < encrypted < connections:
            return None  # nothing new to judge, or a mix the counts cannot attribute
        return encrypted == connections, None

    def _handshakes(self) -> tuple[int, int]:
        with self.admin.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Connections', 'Ssl_accepts')")
            counts = {name: int(value) for name, value in cur.fetchall()}
        return counts.get("Connections", 0), counts.get("Ssl_accepts", 0)

    def server_process(self) -> int | None:
        return self.process.pid if self.process is not None and self.process.poll() is None else None

    def alive(self) -> str | None:
        if self.process is not None and self.process.poll() is not None:
            return f"the managed MariaDB server stopped (mariadbd exited with status {self.process.returncode})"
        return None

    def cancel(self, pids: set[int]) -> None:
        self._cancel_on(self.admin, self._worker_user)  # the whole server is the run's; one cell runs at a time

    def _wait_ready(self, user: str):
        """Poll until the server lets its administrator in by the socket; that connection."""
        import pymysql

        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                with open(os.path.join(self.base, "server.log"), errors="replace") as f:
                    why = _first_error(f.read()) or f"exit status {self.process.returncode}"
                given = f" (the suite's [server.mariadb]: {', '.join(self.server_settings)})" if self.server_settings else ""
                raise TargetUnavailable(f"mariadbd did not start: {why}{given}")
            if os.path.exists(self.socket):
                try:
                    return self._connect(unix_socket=self.socket, user=user, connect_timeout=2)
                except pymysql.err.OperationalError:
                    pass
            time.sleep(0.1)
        raise TargetUnavailable(f"mariadbd did not accept connections within {START_TIMEOUT_S} s")

    def stop(self) -> None:
        self._close_admin()  # the whole data directory goes
        if self.process is not None:
            self.process.terminate()  # SIGTERM: a clean shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    def load_data(self, file: str) -> None:
        """The user's dump (mariadb-dump's SQL) into the run's database by the mariadb client,
        stopping at the first error; then the server read-only (``read_only``: no user but its
        administrators writes) and the runner's own session too."""
        client = shutil.which("mariadb") or shutil.which("mysql") or "mariadb"
        with open(file, "rb") as dump:
            result = subprocess.run([client, "--no-defaults", f"--socket={self.socket}", f"--user={self._root()}",
                                     DATABASE], stdin=dump, capture_output=True, text=True)
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise TargetUnavailable(f"--data {file}: loading it into {self.name} failed: "
                                    f"{detail[-1] if detail else result.returncode}")
        with self._connect(unix_socket=self.socket, user=self._root()) as root, root.cursor() as cur:
            cur.execute("SET GLOBAL read_only = ON")
        with self.admin.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION READ ONLY")

    def endpoint(self, path: str) -> dict[str, Any]:
        common = {"dbms": "mariadb", "port": self.port, "database": DATABASE, "user": self._worker_user,
                  "password": self.password, "sslmode": "disable",  # a TLS path (paths/tls.py) sets its own
                  **({"read_only": True} if self.existing else {})}
        if path == "unix":
            return {**common, "host": "localhost", "socket": self.socket}
        return {**common, "host": "127.0.0.1"}

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["settings"]["auth"] = f"{PLUGINS[self.login.method] if self.login else 'mysql_native_password'} on both paths"
        info["settings"]["tls"] = (f"on for TLS paths ({TLS_SERVED}); others connect without it" if self.authority
                                   else "off")
        return info


class ExternalMariaDB(MariaDBTarget):
    """A server the user runs (``mariadb://user:password@host:port/`` or ``mysql://…``, or
    ``?socket=/path``). accessbench creates a database of its own for the run (named and marked
    by its comment) and — where the connecting user may create users — a user for the run with
    rights on that database only: workers and the suite's SQL log in as it. At the end it drops
    only what it created, after checking the name and mark."""

    managed = False

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = urls.parse(url, SCHEMES)
        self.name = self.url.name
        query = self.url.query
        unknown = sorted(set(query) - {"socket", "sslmode", "sslrootcert"})
        if unknown:
            raise InputError(f"--target {self.url.shown}: unknown URL parameter {unknown[0]!r} (socket=PATH, "
                             "sslmode=disable|require|verify-ca|verify-full, sslrootcert=CA-FILE)")
        self.tls = {k: query[k] for k in ("sslmode", "sslrootcert") if query.get(k)}
        if self.tls.get("sslmode", "disable") not in ("disable", "require", "verify-ca", "verify-full"):
            raise InputError(f"--target {self.url.shown}: sslmode={self.tls['sslmode']}: expected disable, require, "
                             "verify-ca or verify-full")
        self.info = {"user": self.url.user or "root",
                     "password": self.url.password if self.url.password is not None else os.environ.get("MYSQL_PWD", ""),
                     "host": self.url.host or "localhost", "port": self.url.port or 3306}
        if query.get("socket"):
            self.info["unix_socket"] = query["socket"]
        if self.tls.get("sslmode", "disable") != "disable":  # the runner's own login as secure as the URL asks
            self.info["ssl"] = _ssl_context(self.tls)
        self.paths = ("unix",) if "unix_socket" in self.info else ("tcp",)
        self.owner = None           # the user's own login: creates and drops the run's objects
        self.user: str | None = None  # the run's user, where one could be made
        self.user_password: str | None = None
        self.database = ""

    def _login(self, **override):
        try:
            return self._connect(**{**self.info, **override}, connect_timeout=10)
        except Exception as e:
            raise TargetUnavailable(f"cannot connect to {self.name}: {self.url.redact(first_line(e))}") from None

    def start(self, workdir: str) -> None:
        import pymysql

        self.workdir = workdir
        if self.existing:  # the user's data as it is: nothing made, the runner's own session read-only
            self.admin = self.owner = self._login(database=self.url.database or None)  # the URL's, if it names one
            with self.admin.cursor() as cur:
                cur.execute("SET SESSION TRANSACTION READ ONLY")  # the server refuses the runner's writes too
            return
        self.owner = self._login()
        name = owned_name(self.run_id)
        with self.owner.cursor() as cur:
            cur.execute("SET SESSION lock_wait_timeout = 10")
            # Held while the run lives: `accessbench clean` leaves a live run's objects alone.
            cur.execute("SELECT GET_LOCK(%s, 0)", (name,))
            try:
                cur.execute(f"CREATE DATABASE `{name}` COMMENT %s", (mark(self.run_id),))
            except pymysql.Error as e:
                raise TargetUnavailable(f"{self.name}: cannot create the run's own database ({first_line(e)}); grant "
                                        f"the user CREATE, e.g. GRANT ALL ON `accessbench\\_%`.* TO …") from None
        self.database = name
        try:
            self._make_user()
        except pymysql.Error as e:
            if self.confine:
                raise TargetUnavailable(
                    f"{self.name}: the run's own user could not be made ({first_line(e)}), so this suite's SQL cannot "
                    "be confined to the run's database; connect as a user with CREATE USER and GRANT OPTION, run a "
                    "built-in suite, or pass --unconfined-sql") from None
        if self.user is None:
            self._open_admin(**self.info)

    def _make_user(self) -> None:
        """The run's user, at localhost (the socket) and at any host (TCP), with every right on the
        run's database and none elsewhere; its password is given as a hash, so that no password
        reaches a server log."""
        import hashlib

        import pymysql

        password = secrets.token_urlsafe(18)
        digest = "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()
        name, made = self.database, []
        try:
            with self.owner.cursor() as cur:
                for host in ("localhost", "%"):
                    # (the host's '%' doubled: the statement has a parameter)
                    cur.execute(f"CREATE USER '{name}'@'{host.replace('%', '%%')}' IDENTIFIED BY PASSWORD %s",
                                (digest,))
                    made.append(host)
                    cur.execute(f"GRANT ALL ON `{name}`.* TO '{name}'@'{host}'")
            self.user, self.user_password = name, password
            self._open_admin(**{**self.info, "user": name, "password": password})
        except pymysql.Error:
            with self.owner.cursor() as cur:
                for host in made:
                    cur.execute(f"DROP USER IF EXISTS '{name}'@'{host}'")
            self.user = self.user_password = None
            raise

    def holds(self) -> str | None:
        if not self.database:
            return None
        return (f"database {self.database}{f' and user {self.user}' if self.user else ''} on {self.name} "
                f"(accessbench clean --target {self.name})")

    def cancel(self, pids: set[int]) -> None:
        if self.admin is None:
            return
        if self.user:  # every session of the run's own user is the run's
            self._cancel_on(self.admin, self.user)
        else:  # the user's own login: only the sessions the run's workers reported
            self._cancel_on(self.admin, self.info["user"], pids)

    def alive(self) -> str | None:
        try:
            self.owner.ping(reconnect=False)
            return None
        except Exception as e:
            return f"lost the connection to {self.name}: {first_line(e)}"

    def stop(self) -> None:
        try:
            if self.user and self.admin is not None:  # the run's sessions first: none may hold a lock
                with self.admin.cursor() as cur:
                    cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = %s AND ID <> CONNECTION_ID()",
                                (self.user,))
                    for (session,) in cur.fetchall():
                        cur.execute(f"KILL CONNECTION {int(session)}")
        except Exception:
            pass
        self._close_admin()
        if self.owner is None:
            return
        try:
            if self.database:
                self._drop(self.database, self.user)
        finally:
            try:
                self.owner.close()  # also releases the run's lock
            except Exception:
                pass
            self.owner = None

    def _drop(self, name: str, user: str | None) -> None:
        import pymysql

        try:
            with self.owner.cursor() as cur:
                cur.execute("SET SESSION max_statement_time = 60")
                cur.execute("SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s", (name,))
                row = cur.fetchone()
                if row is not None and not is_marked(name, row[0]):
                    raise TargetUnavailable(f"{self.name}: database {name} does not carry accessbench's mark; left as it is")
                if user and OWNED_NAME.match(user):  # named as the run's database: users carry no comment
                    for host in ("localhost", "%"):
                        cur.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
                if row is not None:
                    cur.execute(f"DROP DATABASE `{name}`")
        except pymysql.Error as e:
            raise TargetUnavailable(f"{self.name}: left database {name}: {first_line(e)}; remove it later with "
                                    f"`accessbench clean --target {self.name}`") from None

    def leftovers(self) -> list[Leftover]:
        import pymysql

        self.owner = self.owner or self._login()
        found = []
        with self.owner.cursor() as cur:
            cur.execute("SELECT 'database', SCHEMA_NAME, SCHEMA_COMMENT FROM information_schema.SCHEMATA"
                        " WHERE SCHEMA_NAME LIKE 'accessbench\\_%'")
            rows = list(cur.fetchall())
            try:  # users have no comment: the run's carry its database's name, which has the form of the run's
                cur.execute("SELECT DISTINCT User FROM mysql.user WHERE User LIKE 'accessbench\\_%'")
                rows += [("user", u, f"{MARK}user for database {u}") for (u,) in cur.fetchall()]
            except pymysql.Error:
                pass  # no right to read mysql.user: the users go with their database's removal
            for kind, name, comment in rows:
                if not is_marked(name, comment):
                    continue
                cur.execute("SELECT IS_USED_LOCK(%s)", (name,))
                found.append(Leftover(kind, name, comment, in_use=cur.fetchone()[0] is not None))
        return found

    def remove(self, leftover: Leftover) -> None:
        self.owner = self.owner or self._login()
        with self.owner.cursor() as cur:
            cur.execute("SELECT GET_LOCK(%s, 0)", (leftover.name,))
            if not cur.fetchone()[0]:
                raise TargetUnavailable(f"{leftover.name} is in use by a running run; left as it is")
            try:
                self._drop(leftover.name, leftover.name)
            finally:
                cur.execute("SELECT RELEASE_LOCK(%s)", (leftover.name,))

    def endpoint(self, path: str) -> dict[str, Any]:
        # the run's own database; over existing data, the one the URL names (none: statements name theirs)
        database = self.url.database or "" if self.existing else self.database
        endpoint = {"dbms": "mariadb", "host": self.info["host"], "port": self.info["port"], "database": database,
                    "user": self.user or self.info["user"], "password": self.user_password or self.info["password"]}
        if "unix_socket" in self.info:
            endpoint["socket"] = self.info["unix_socket"]
        if self.existing:
            endpoint["read_only"] = True
        return {**endpoint, **self.tls}  # the URL's own TLS, never weakened; none given: each driver's default

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["settings"]["tls"] = (f"the URL's: {', '.join(f'{k}={v}' for k, v in self.tls.items())}" if self.tls
                                   else "as each driver does by default (the URL sets no sslmode)")
        info["settings"]["accessbench's objects"] = (
            "none: the data already there, read in read-only sessions (data = \"existing\")" if self.existing else
            f"database {self.database}" + (f", used as user {self.user} (the suite's SQL and the workers log in as it)"
                                           if self.user else " (as the connecting user: no user could be made)"))
        return info


# What MariaDB refuses in a table beyond its limits: a row's declared width, and keys per
# storage engine — columns per table and bytes per index key (InnoDB with its default DYNAMIC
# rows and 16 KB pages; Aria's 2,000 since MariaDB 10.5).
ROW_BYTES = 65_535  # a row's non-BLOB columns, utf8mb4 counting 4 bytes per character
_ENGINES = {"innodb": (1017, 3072), "myisam": (4096, 1000), "aria": (4096, 2000)}
# Storage per neutral type (its utf8mb4 columns count 4 bytes per character).
_FIXED = {"smallint": 2, "integer": 4, "bigint": 8, "boolean": 1, "double": 8, "real": 4, "date": 3,
          "timestamp": 8, "text": 10, "bytes": 12}  # TEXT and LONGBLOB count their pointer only
_DECIMAL_LEFTOVER = (0, 1, 1, 2, 2, 3, 3, 4, 4)  # bytes for 0–8 digits beyond each 9 (4 bytes)


def _bytes(sql_type: str) -> int:
    base, n, scale = declared(sql_type)
    if base == "char":
        return 4 * n
    if base == "varchar":
        return 4 * n + (1 if 4 * n <= 255 else 2)
    if base == "numeric":
        return sum(d // 9 * 4 + _DECIMAL_LEFTOVER[d % 9] for d in (n - scale, scale))
    return _FIXED.get(base, 8)


def _row_bytes(table: Table) -> int:
    """A row's declared width as MariaDB counts it against 65,535: the columns, a NULL bit
    per nullable column and the delete flag."""
    nullable = sum(1 for c in table.columns if c.name not in table.primary_key)
    return sum(_bytes(c.type) for c in table.columns) + (nullable + 1 + 7) // 8


def table_rule(table: Table, settings: dict[str, Any]) -> tuple[tuple, str] | None:
    """(where in the table, what) for a row wider than MariaDB takes, or a key its storage
    engine (the table's, else the suite's [server.mariadb] default_storage_engine) refuses."""
    width = _row_bytes(table)
    if width > ROW_BYTES:
        return ("columns",), (f"a row of {width:,} bytes (utf8mb4: 4 per character) is above MariaDB's "
                              f"limit of {ROW_BYTES:,} for the columns other than text and bytes")
    engine = table.engine or str(settings.get("default_storage_engine", "InnoDB"))
    columns, key_bytes = _ENGINES.get(engine.lower(), (None, None))
    if columns is not None and len(table.columns) > columns:
        return ("columns",), f"{len(table.columns):,} columns is above {engine}'s limit of {columns:,}"
    types = {c.name: c.type for c in table.columns}
    for loc, key in [(("primary_key",), table.primary_key),
                     *((("indexes", k), cols) for k, cols in enumerate(table.indexes))]:
        blobs = [col for col in key if types[col] in ("text", "bytes")]
        if blobs:
            return loc, (f"{blobs[0]} is {types[blobs[0]]}: MariaDB indexes text and bytes columns only by a "
                         "prefix, which accessbench does not declare (use varchar(n))")
        width = sum(_bytes(types[col]) for col in key)
        if key_bytes is not None and width > key_bytes:
            return loc, (f"a key of {width:,} bytes (utf8mb4: 4 per character) is above {engine}'s limit "
                         f"of {key_bytes:,}")
    return None


MARIADB = register(DBMS(
    name="mariadb",
    title="MariaDB",
    aliases=("mysql",),
    managed=ManagedMariaDB,
    versions=installed_versions,
    logins={"native": "native", "mysql_native_password": "native", "ed25519": "ed25519"},
    schemes=SCHEMES,
    external=ExternalMariaDB,
    # 64 characters; CHAR ≤ 255, VARCHAR ≤ 65,532; DECIMAL precision ≤ 65, scale ≤ 38;
    # 4,096 columns (InnoDB: 1,017, see _ENGINES); 65,535 placeholders; no DATETIME or DATE
    # before 1000-01-01.
    limits=DBMSLimits("MariaDB's", identifier=64, char=255, varchar=65_532, precision=65, scale=38, columns=4096,
                      markers=65_535, earliest=dt.date(1000, 1, 1)),
    storage_engines=True,
    table_rule=table_rule,
    conformance=Conformance(
        # No FLOAT: the binary protocol sends it as a 32-bit float, the text protocol as its
        # shortest text, and no suite reads one from MariaDB yet. BOOLEAN is TINYINT(1): 0 and 1.
        types_ddl="CREATE TABLE conf_types (i2 SMALLINT, i4 INT, i8 BIGINT, num DECIMAL(12,3), f8 DOUBLE, ch CHAR(8),"
                  " vc VARCHAR(40), ts DATETIME(6), d DATE, b BOOLEAN, bl LONGBLOB) CHARACTER SET utf8mb4",  # BY is a keyword
        types_rows=(
            (32767, -2147483648, 9223372036854775807, decimal.Decimal("12345.670"), 0.1, "GET", "héllo wörld ✓ 日本語 \\ ok",
             dt.datetime(2001, 2, 28, 23, 59, 59, 123456), dt.date(2000, 2, 29), 1, b"\x00\xff\x10\\"),
            (-32768, 0, -9223372036854775808, decimal.Decimal("-0.001"), -2.5e-300, "", "",
             dt.datetime(1969, 12, 31, 23, 59, 59), dt.date(1969, 1, 1), 0, b""),
            (None,) * 11,
        ),
        read_only_sqlstate="25006",  # ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION (1792)
    ),
))


def _ssl_context(tls: dict[str, str]):
    """The runner's own TLS to an external server, as the URL's sslmode asks (libpq's words)."""
    import ssl

    context = ssl.create_default_context(cafile=tls.get("sslrootcert"))
    context.check_hostname = tls["sslmode"] == "verify-full"
    if tls["sslmode"] == "require":
        context.verify_mode = ssl.CERT_NONE
    return context
