"""Connection URIs for the methods that take one (ADBC, ConnectorX, polars), from the
endpoint every worker is given: the unix path's socket as a query parameter, the search path
(and read_only's default_transaction_read_only) in libpq's startup options, a read_only
SQLite file as a mode=ro URI, every part quoted, and the endpoint's TLS (and MariaDB's
compression) in the parameters the reader of the URI takes:

- ``libpq`` (ADBC's PostgreSQL driver, whose statically linked libpq reads the URI itself):
  libpq's own keywords, as pg.libpq_tls makes them.
- ``connectorx`` (ConnectorX's sources): for PostgreSQL, its rust-postgres ``sslmode``
  (disable, prefer, require only) and ``sslrootcert`` — which ConnectorX reads as libpq
  does with require: the chain checked against it, the host name never (verify-ca); for
  MariaDB, the Rust mysql crate's URL, which has ``compress`` and no TLS parameter at all."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from ..base import Unsupported
from . import sqlite
from .mysql import READ_ONLY, ask as mariadb_ask
from .pg import libpq_tls, read_only_setting, startup_options
from .tls import Ask

LIBPQ_TLS = ("the URI's query, read by the driver's own (statically linked) libpq: sslmode as given (absent: none, "
             "libpq's default prefer); sslrootcert with verify-ca/verify-full only (with require libpq would check "
             "the chain against it); ssl_min_protocol_version = ssl_max_protocol_version = the pinned tls_version; "
             "sslnegotiation=direct; libpq reads the CA and makes its SSL context inside every connect")
CONNECTORX_TLS = ("the URI's query. PostgreSQL (rust-postgres with ConnectorX's OpenSSL connector, made inside every "
                  "read_sql): sslmode=disable for disable; nothing for prefer or none (its default, prefer: TLS tried, "
                  "unverified); require = sslmode=require; verify-ca = sslmode=require&sslrootcert=… (ConnectorX checks "
                  "the chain against a root certificate it is given, never the host name); verify-full, a pinned "
                  "tls_version and sslnegotiation=direct: unsupported (its rust-postgres parses no verify-full, and "
                  "ConnectorX sets no TLS version or direct negotiation). MariaDB (the Rust mysql crate's URL): TLS "
                  "only as unsupported (the URL has no TLS parameter; without one the crate uses none, so disable, "
                  "prefer and none connect in the clear)")
CONNECTORX_COMPRESS = "MariaDB: compress=true in the URI (the mysql crate's zlib compression, CLIENT_COMPRESS)"
LIBPQ_READ_ONLY = read_only_setting("options=-c default_transaction_read_only=on in the URI's query, which the driver's "
                                    "libpq sends")
SQLITE_READ_ONLY = ("SQLite: the URI file:<file>?mode=ro, opened with SQLITE_OPEN_URI: the file read-only, "
                    "SQLITE_READONLY on a write")
CONNECTORX_READ_ONLY = (
    "PostgreSQL: " + read_only_setting("options=-c default_transaction_read_only=on in the URI's query, which "
                                       "rust-postgres sends") +
    f". MariaDB: read_sql's pre_execution_query='{READ_ONLY}' (the mysql crate's URL has no init command): ConnectorX "
    "runs it on the read's one connection before the query, after its metadata step, which prepares the query "
    "without running it; the server then refuses writes (error 1792); absent or false: not passed. " + SQLITE_READ_ONLY +
    " (the whole URI quoted after sqlite://: ConnectorX opens what follows it, percent-decoded)")


def uri(endpoint: dict, reader: str = "libpq") -> str:
    """The endpoint as a URI for ``reader``: ``libpq`` or ``connectorx``."""
    dbms = endpoint["dbms"]
    if dbms in ("sqlite", "duckdb"):
        database, is_uri = sqlite.database(endpoint) if dbms == "sqlite" else (endpoint["file"], False)
        if is_uri and reader == "connectorx":
            # ConnectorX opens what follows "sqlite://", percent-decoded, with SQLITE_OPEN_URI:
            # all of the SQLite URI quoted, so that no part of it is read as the URL's own
            return "sqlite://" + quote(database, safe="")
        # an absolute path (or polars' ADBC reader, the SQLite URI) after the scheme's three slashes
        return f"sqlite:///{database}"
    user = quote(endpoint["user"], safe="")
    if endpoint.get("password"):
        user += ":" + quote(endpoint["password"], safe="")
    query: dict[str, str] = {}
    if dbms == "postgresql":
        scheme, local = "postgresql", endpoint["host"].startswith("/")
        if local:
            query["host"] = endpoint["host"]
        query.update(libpq_tls(endpoint) if reader == "libpq" else connectorx_postgres_tls(endpoint))
        query.update(startup_options(endpoint))
    else:
        scheme, local = "mysql", bool(endpoint.get("socket"))
        if local:
            query["socket"] = endpoint["socket"]
        else:  # the Rust mysql crate (ConnectorX's) would move a connection to 127.0.0.1 onto the server's socket
            query["prefer_socket"] = "false"
        query.update(connectorx_mariadb(endpoint))
    where = f"localhost:{endpoint.get('port') or ''}" if local else f"{endpoint['host']}:{endpoint['port']}"
    text = f"{scheme}://{user}@{where.rstrip(':')}/{quote(endpoint['database'], safe='')}"
    return text + ("?" + urlencode(query, quote_via=quote) if query else "")


def connectorx_session(endpoint: dict) -> dict[str, str]:
    """read_sql's arguments beyond the URI: a read_only MariaDB session's statement, which the
    mysql crate's URL cannot carry (PostgreSQL's is in the URI's options; SQLite's is the URI)."""
    return {"pre_execution_query": READ_ONLY} if endpoint["dbms"] == "mariadb" and endpoint.get("read_only") else {}


def connectorx_postgres_tls(endpoint: dict) -> dict[str, str]:
    asked = Ask.of(endpoint).check()
    lacks = [what for what, asked_for in (
        ("sslmode=verify-full (its rust-postgres parses disable, prefer and require only; it never checks the server's "
         "host name)", asked.mode == "verify-full"),
        ("TLS version setting (ssl_min/max_protocol_version)", asked.version),
        ("sslnegotiation=direct", asked.direct)) if asked_for]
    if lacks:
        raise Unsupported(f"ConnectorX has no {'; no '.join(lacks)}")
    if asked.mode == "verify-ca":
        if not asked.ca:
            raise Unsupported("ConnectorX checks the chain only against a root certificate it is given: verify-ca "
                              "needs sslrootcert")
        return {"sslmode": "require", "sslrootcert": asked.ca}
    return {"sslmode": asked.mode} if asked.mode else {}


def connectorx_mariadb(endpoint: dict) -> dict[str, str]:
    asked = mariadb_ask(endpoint)
    if asked.encrypted:
        raise Unsupported("ConnectorX's MariaDB source takes no TLS settings: its URL (the Rust mysql crate's) has no "
                          "TLS parameter")
    return {"compress": "true"} if asked.compress else {}
