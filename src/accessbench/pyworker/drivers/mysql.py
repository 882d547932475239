"""What the MariaDB drivers share: connection settings (TLS and compression in each driver's
own words among them), the serving thread, and the text-protocol driver shape of PyMySQL and
mysqlclient."""

from __future__ import annotations

import atexit
import itertools
import os
import tempfile
from typing import Any, Callable

from ..base import Driver, Op, Unsupported, cursor_scan, cursor_text
from ..association import BY_HAND
from .tls import CONTEXT_SETTING, Ask, ssl_context

# A read_only endpoint's session: the server refuses every write (error 1792, SQLSTATE 25006).
READ_ONLY = "SET SESSION TRANSACTION READ ONLY"


def connect_kwargs(endpoint: dict) -> dict:
    """The unix path names a socket file; tcp a host and port. Autocommit is set by each
    driver (PEP 249 says off; accessbench runs every statement in autocommit, as on
    PostgreSQL, with explicit transactions where a step asks for them)."""
    kwargs = {"user": endpoint["user"], "database": endpoint["database"]}
    if endpoint.get("password"):
        kwargs["password"] = endpoint["password"]
    if endpoint.get("socket"):
        kwargs["unix_socket"] = endpoint["socket"]
    else:
        kwargs.update(host=endpoint["host"], port=int(endpoint["port"]))
    if endpoint.get("read_only"):  # the driver runs it first on every connection it makes
        kwargs["init_command"] = READ_ONLY
    return kwargs


def read_only_setting(how: str) -> str:
    """``hello``'s ``read_only`` for a MariaDB driver that runs READ_ONLY as ``how``."""
    return (f"endpoint read_only: {how}, so every connection (open's, a connect step's, each client's, a pool's) "
            "is a read-only session and the server refuses writes (error 1792, SQLSTATE 25006); absent or false: "
            "no such statement")


INIT_COMMAND_READ_ONLY = read_only_setting(f"init_command='{READ_ONLY}', which the driver runs right after it "
                                           "connects, before anything else")


# TLS and compression, in each MariaDB driver's own settings. The C drivers (mysqlclient,
# Connector/Python, Connector/ODBC in odbc.py) run on libmariadb (Connector/C 3.3), which checks
# the server's chain whenever it is given a CA (ssl_ca) and the host name only when asked to
# verify the server's certificate (MYSQL_OPT_SSL_VERIFY_SERVER_CERT), and which uses TLS only
# when asked: verify-ca is a CA without that flag, verify-full a CA with it, require TLS with
# neither.

def ask(endpoint: dict) -> Ask:
    """The endpoint's TLS ask, with what MariaDB has none of refused."""
    asked = Ask.of(endpoint).check()
    if asked.direct:
        raise Unsupported("MariaDB has no direct TLS negotiation: sslnegotiation=direct is PostgreSQL's (17 and later)")
    return asked


def libmariadb_ask(endpoint: dict, driver: str) -> Ask:
    asked = ask(endpoint)
    if asked.mode == "verify-ca" and not asked.ca:
        raise Unsupported(f"{driver}: verify-ca needs sslrootcert: libmariadb checks the chain only against a CA it is "
                          "given, and checking it against the system's authorities means verifying the host name too")
    return asked


def mysqlclient_tls(endpoint: dict) -> dict:
    """mysqlclient's arguments for the endpoint's TLS and compression. Against libmariadb,
    mysqlclient emulates ssl_mode (MYSQL_OPT_SSL_MODE is MySQL's): DISABLED and PREFERRED turn
    TLS off (SSL_ENFORCE 0), REQUIRED turns it on, VERIFY_CA and VERIFY_IDENTITY also set
    VERIFY_SERVER_CERT, which in libmariadb checks the host name too — so verify-ca is REQUIRED
    with ssl={'ca': …} (libmariadb checks the chain against a CA it is given). It has no TLS
    version argument: a pinned version goes in a libmariadb option file (read_default_file,
    [client] tls-version=…), written once per process."""
    asked = libmariadb_ask(endpoint, "mysqlclient")
    kwargs: dict[str, Any] = {}
    if asked.mode == "disable":
        kwargs["ssl_mode"] = "DISABLED"
    elif asked.encrypted:
        kwargs["ssl_mode"] = "VERIFY_IDENTITY" if asked.mode == "verify-full" else "REQUIRED"
        if asked.verifies and asked.ca:
            kwargs["ssl"] = {"ca": asked.ca}
        if asked.version:
            kwargs["read_default_file"] = option_file(f"[client]\ntls-version={asked.version}\n")
    if asked.compress:
        kwargs["compress"] = True
    return kwargs


MYSQLCLIENT_TLS = ("ssl_mode='DISABLED' for disable (mysqlclient then sets SSL_ENFORCE off); nothing for prefer or "
                   "none (mysqlclient's default, PREFERRED, which against libmariadb also leaves TLS off); require = "
                   "ssl_mode='REQUIRED'; verify-ca = ssl_mode='REQUIRED' with ssl={'ca': sslrootcert} (libmariadb "
                   "checks the chain against a CA it is given, not the host name: mysqlclient's VERIFY_CA sets "
                   "VERIFY_SERVER_CERT, which in libmariadb checks the host name too); verify-full = "
                   "ssl_mode='VERIFY_IDENTITY' with ssl={'ca': sslrootcert}; tls_version = a libmariadb option file "
                   "([client] tls-version=…, read_default_file; mysqlclient has no TLS version argument), written "
                   "once per process; libmariadb reads the CA and makes its TLS context inside every connect")
MYSQLCLIENT_COMPRESS = "compress=True: MYSQL_OPT_COMPRESS and CLIENT_COMPRESS (zlib)"


def connector_python_tls(endpoint: dict) -> dict:
    """MariaDB Connector/Python's arguments for the endpoint's TLS and compression."""
    asked = libmariadb_ask(endpoint, "MariaDB Connector/Python")
    kwargs: dict[str, Any] = {}
    if asked.mode == "disable":
        kwargs["ssl"] = False
    elif asked.encrypted:
        kwargs["ssl"] = True
        if asked.verifies and asked.ca:
            kwargs["ssl_ca"] = asked.ca
        if asked.mode == "verify-full":
            kwargs["ssl_verify_cert"] = True
        if asked.version:
            kwargs["tls_version"] = asked.version
    if asked.compress:
        kwargs["compress"] = True
    return kwargs


CONNECTOR_PYTHON_TLS = ("ssl=False for disable (no TLS option set: Connector/C 3.3 uses TLS only when asked); nothing "
                        "for prefer or none; require = ssl=True; verify-ca = ssl=True, ssl_ca=sslrootcert (libmariadb "
                        "checks the chain against a CA it is given); verify-full = also ssl_verify_cert=True (the host "
                        "name); tls_version = tls_version (MARIADB_OPT_TLS_VERSION: the only version allowed); "
                        "libmariadb reads the CA and makes its TLS context inside every connect")
CONNECTOR_PYTHON_COMPRESS = "compress=True: MYSQL_OPT_COMPRESS (zlib)"


def pymysql_tls(endpoint: dict) -> dict:
    """PyMySQL's arguments for the endpoint's TLS. PyMySQL tries TLS whenever the server offers
    it unless told not to (ssl_disabled=True), and has no protocol compression."""
    asked = ask(endpoint)
    if asked.compress:
        raise Unsupported("PyMySQL has no protocol compression (its compress argument is not supported)")
    if asked.mode == "disable":
        return {"ssl_disabled": True}
    return {} if asked.default else {"ssl": ssl_context(asked)}


PYMYSQL_TLS = ("ssl_disabled=True for disable (PyMySQL otherwise tries TLS whenever the server offers it); nothing "
               "for prefer or none (PyMySQL's default: TLS when offered, unverified, a new default context per "
               "connection); for require, verify-ca and verify-full ssl=" + CONTEXT_SETTING)
PYMYSQL_COMPRESS = "unsupported: PyMySQL has no protocol compression"


_option_files: dict[str, str] = {}


def option_file(text: str) -> str:
    """A libmariadb option file holding ``text``: made once per process (and content), private
    to the user, removed when the process exits."""
    path = _option_files.get(text)
    if path is None:
        fd, path = tempfile.mkstemp(prefix="accessbench-", suffix=".cnf")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        atexit.register(_remove, path)
        _option_files[text] = path
    return path


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


TEXT_PROTOCOL_LOAD = (BY_HAND + "; cursor.execute(sql, params), the driver interpolating the values into the text on "
                      "the client, as every statement it sends with values")


# The serving thread's OS id, so the runner can read its CPU time (one thread per connection).
SERVER_TID = "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"


def sqlstate(error: BaseException) -> str | None:
    """The SQLSTATE the server sent: Connector/Python's and PyMySQL's errors carry it, and so do
    MySQLdb's on py_mysqlclient's Connection (MySQLdb's own hold only the error number)."""
    return getattr(error, "sqlstate", None) or None


# HANDLER … READ NEXT returns this many records per round trip in a record-level scan.
HANDLER_ROWS = 1000
_handlers = itertools.count(1)
RECORD_SETTING = (f"HANDLER table OPEN before the loop (untimed); per operation HANDLER … READ index = (key), or for "
                  f"a scan READ FIRST then READ NEXT, LIMIT {HANDLER_ROWS} records per round trip; CLOSE after the step")


class Handlers:
    """MariaDB's HANDLER statements as record-level access: the table is opened (untimed)
    when the op is built and closed at the end of the step; keyed reads are HANDLER … READ
    index = (key), scans READ FIRST then READ NEXT, HANDLER_ROWS records at a time."""

    def record_op(self, kind: str, record: dict) -> Op:
        cur, name = self.cur, f"ab_h{next(_handlers)}"
        cur.execute(f"HANDLER {record['table']} OPEN AS {name}")
        self.handlers.append(name)
        if kind == "scan":
            def scan(_):
                rows, batch = [], HANDLER_ROWS
                cur.execute(f"HANDLER {name} READ FIRST LIMIT {batch}")
                while True:
                    got = cur.fetchall()
                    rows.extend(got)
                    if len(got) < batch:
                        return rows
                    cur.execute(f"HANDLER {name} READ NEXT LIMIT {batch}")

            return scan
        if kind != "exec" or not record.get("index"):
            raise Unsupported("record-level access reads: a scan, or an exec step keyed on an index")
        read = f"HANDLER {name} READ `{record['index']}` = ("

        def keyed(key):
            cur.execute(read + key + ")")
            return cur.fetchall()

        return keyed

    def end_step(self) -> None:
        while self.handlers:
            self.cur.execute(f"HANDLER {self.handlers.pop()} CLOSE")


class MariaDBDriver(Handlers, Driver):
    """What every Python MariaDB driver here does alike: connecting (subclasses say how),
    the serving thread, text-protocol scans and ``literal`` statements, HANDLER reads, and
    batches by the driver's executemany."""

    modes = ("literal", "record")

    def connector(self, endpoint: dict) -> Callable[[], Any]:
        """What opens one connection as the endpoint says, everything it needs made now (its
        arguments, TLS configuration): called once when an endpoint arrives, outside any timed
        loop, and then once per connection."""
        raise NotImplementedError

    def server_version(self) -> str:
        return self.conn.get_server_info()

    def sqlstate(self, error: BaseException) -> str | None:
        return sqlstate(error)

    def open(self, endpoint: dict, options: dict) -> dict:
        self.attach(self.connector(endpoint)())
        self.cur.execute(SERVER_TID)
        return {"server_pid": self.cur.fetchone()[0], "server_version": self.server_version()}

    def attach(self, conn) -> None:
        self.conn, self.cur, self.handlers = conn, conn.cursor(), []

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str) -> None:
        self.cur.execute(sql)

    def connect_op(self, endpoint: dict) -> Op:
        connection = self.connector(endpoint)

        def connect(_):
            connection().close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        return cursor_scan(self.cur, sql)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        if mode != "literal":
            raise Unsupported(f"{self.driver} has no {mode} mode: it interpolates parameters and sends text queries")
        return cursor_text(self.cur, reads)

    def batch_op(self, sql: str) -> Op:
        cur, sql = self.cur, self.markers(sql)
        return self.in_transaction(lambda group: cur.executemany(sql, group))


class TextProtocolDriver(MariaDBDriver):
    """A DB-API driver that interpolates parameters on the client and sends text-protocol
    queries (COM_QUERY): ``literal`` (and HANDLER ``record`` reads) only. A load step's
    statements go through its parameter API, ``execute(sql, params)``: what its users write,
    the values interpolated on the client as every statement it sends."""

    paramstyle = "format"
    kinds = (*MariaDBDriver.kinds, "load")

    def bound(self):
        return self.cursor_bound(self.cur)
