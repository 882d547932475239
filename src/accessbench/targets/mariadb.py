"""MariaDB: a managed throwaway server, or an external one given by URL.

Either way accessbench works only inside its own database ``accessbench``, which it creates
and drops; on a managed server it also owns the data directory, removed when it stops.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import pwd
import secrets
import shutil
import subprocess
import time
from typing import Any, Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

from ..protocol import sqltext
from ..suite.model import Table
from .base import Target, TargetUnavailable, column_ddl, index_ddl, server_can_enter
from .postgresql import free_port

DATABASE = "accessbench"
USER = "accessbench"
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
    """The line that says why MariaDB stopped: its first [ERROR] other than 'Aborting'."""
    errors = [line.split("[ERROR]", 1)[1].strip() for line in log.splitlines() if "[ERROR]" in line]
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


class MariaDBTarget(Target):
    dbms = "mariadb"
    paths = ("unix", "tcp")
    serves_by_thread = True  # one thread per connection; workers report its OS thread id (TID)

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
        self.admin = self._connect(**kwargs)
        with self.admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
            cur.execute(f"USE {DATABASE}")

    def _close_admin(self, drop_database: bool) -> None:
        if self.admin is None:
            return
        try:
            if drop_database:
                with self.admin.cursor() as cur:
                    cur.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
            self.admin.close()
        except Exception:  # a server already gone: nothing left to drop
            pass
        self.admin = None

    def describe(self) -> dict[str, Any]:
        names = list(dict.fromkeys([*_SETTINGS, *self.server_settings]))  # and whatever the suite set
        rows = dict(self.query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({', '.join('?' * len(names))})",
                               tuple(names)))
        version = self.query("SELECT VERSION()")[0][0]
        return {"server_version": version, "settings": {name: rows.get(name) for name in names}}

    def create(self, tables: list[Table]) -> None:
        for table in tables:
            self.execute(f"DROP TABLE IF EXISTS {table.name}")
            ddl = column_ddl(table, _maria_type)
            if table.engine:
                ddl += f" ENGINE={table.engine}"
            self.execute(ddl)
            for index in index_ddl(table):
                self.execute(index)

    def load(self, table: Table, rows: Iterable[tuple]) -> None:
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


class ManagedMariaDB(MariaDBTarget):
    """mariadb-install-db into the work directory; mariadbd on its own socket and a free
    loopback port, as the ``mysql`` OS user when started as root; a password for the
    ``accessbench`` user on both paths (mysql_native_password)."""

    name = "mariadb"
    managed = True
    local_server = True

    def __init__(self) -> None:
        super().__init__()
        self.mariadbd = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None)
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
        self.base = os.path.join(workdir, "mariadb")
        datadir, rundir = os.path.join(self.base, "data"), os.path.join(self.base, "run")
        os.makedirs(rundir)
        if os.geteuid() == 0:
            server = pwd.getpwnam("mysql")
            for path in (self.base, rundir):
                os.chown(path, server.pw_uid, server.pw_gid)
        self.socket = os.path.join(rundir, "mariadb.sock")
        result = subprocess.run(
            [self.install_db, "--no-defaults", f"--datadir={datadir}", "--auth-root-authentication-method=socket",
             "--skip-test-db", "--skip-name-resolve", *(["--user=mysql"] if os.geteuid() == 0 else [])],
            capture_output=True, text=True, start_new_session=True)
        if result.returncode != 0:
            raise TargetUnavailable(f"mariadb-install-db failed: {_first_error(result.stderr + result.stdout)}")
        self.port = free_port()
        log = open(os.path.join(self.base, "server.log"), "ab")
        self.process = subprocess.Popen(
            [self.mariadbd, "--no-defaults", f"--datadir={datadir}", f"--socket={self.socket}", f"--port={self.port}",
             "--bind-address=127.0.0.1", "--skip-name-resolve", f"--pid-file={os.path.join(rundir, 'mariadb.pid')}",
             "--max-connections=300", "--skip-log-bin", "--local-infile=1",
             "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",  # byte order, as PostgreSQL's C locale
             *(f"--{name.replace('_', '-')}={_option(value)}" for name, value in self.server_settings.items()),
             *(["--user=mysql"] if os.geteuid() == 0 else [])],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        # the administrator logs in by unix_socket: root as root, else the OS user's own name
        root = self._wait_ready("root" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name)
        with root.cursor() as cur:
            cur.execute(f"CREATE DATABASE {DATABASE}")
            for host in ("localhost", "127.0.0.1"):
                cur.execute(f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY %s", (self.password,))
                cur.execute(f"GRANT ALL ON {DATABASE}.* TO '{USER}'@'{host}'")
            cur.execute(f"GRANT RELOAD, PROCESS ON *.* TO '{USER}'@'localhost'")
        root.close()
        self._open_admin(unix_socket=self.socket, user=USER, password=self.password, database=DATABASE)

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
        self._close_admin(drop_database=False)  # the whole data directory goes
        if self.process is not None:
            self.process.terminate()  # SIGTERM: a clean shutdown
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)

    def endpoint(self, path: str) -> dict[str, Any]:
        common = {"dbms": "mariadb", "port": self.port, "database": DATABASE, "user": USER, "password": self.password}
        if path == "unix":
            return {**common, "host": "localhost", "socket": self.socket}
        return {**common, "host": "127.0.0.1"}

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["settings"]["auth"] = "mysql_native_password on both paths"
        info["settings"]["tls"] = "off"
        return info


class ExternalMariaDB(MariaDBTarget):
    """A server the user runs (``mariadb://user:password@host:port/`` or ``mysql://…``, or
    ``?socket=/path``): only the ``accessbench`` database is created and dropped."""

    managed = False

    def __init__(self, url: str) -> None:
        super().__init__()
        parts = urlsplit(url)
        self.name = urlunsplit((parts.scheme, (f"{unquote(parts.username)}@" if parts.username else "")
                                + (parts.hostname or "") + (f":{parts.port}" if parts.port else ""), "/", "", ""))
        query = dict(q.split("=", 1) for q in parts.query.split("&") if "=" in q)
        self.info = {"user": unquote(parts.username or "root"),
                     "password": unquote(parts.password) if parts.password else os.environ.get("MYSQL_PWD", ""),
                     "host": parts.hostname or "localhost", "port": parts.port or 3306}
        if query.get("socket"):
            self.info["unix_socket"] = query["socket"]
        self.paths = ("unix",) if "unix_socket" in self.info else ("tcp",)

    def start(self, workdir: str) -> None:
        self.workdir = workdir
        try:
            self._open_admin(**self.info)
        except Exception as e:
            raise TargetUnavailable(f"cannot connect to {self.name}: {str(e).strip().splitlines()[0]}") from None

    def stop(self) -> None:
        self._close_admin(drop_database=True)

    def endpoint(self, path: str) -> dict[str, Any]:
        endpoint = {"dbms": "mariadb", "host": self.info["host"], "port": self.info["port"], "database": DATABASE,
                    "user": self.info["user"], "password": self.info["password"]}
        if "unix_socket" in self.info:
            endpoint["socket"] = self.info["unix_socket"]
        return endpoint
