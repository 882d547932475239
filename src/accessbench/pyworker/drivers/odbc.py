"""ODBC connection strings: which driver a target gets, and the driver options that change
behaviour, pinned. c-odbc (workers/c/src/driver_odbc.c) pins exactly the same options, and a
test compares the two workers' ``hello`` so they cannot drift apart."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

from ..base import Unsupported
from . import sqlite
from .mysql import READ_ONLY, libmariadb_ask
from .pg import libpq_tls, libpq_version, startup_options

# psqlODBC: server-side prepare (SQLPrepare parses once on the server); no cursor-based
# fetching; booleans as SQL_BIT; Protocol=7.4-1 so that an error rolls back the transaction
# instead of wrapping every statement in SAVEPOINT/RELEASE; the logs Debian's odbcinst.ini
# may switch on, off. The rest are the defaults, stated.
POSTGRESQL_OPTIONS = (
    "UseServerSidePrepare=1;UseDeclareFetch=0;BoolsAsChar=0;TextAsLongVarchar=1;"
    "MaxVarcharSize=255;MaxLongVarcharSize=8190;UnknownSizes=0;LFConversion=0;Parse=0;"
    "UpdatableCursors=0;Protocol=7.4-1;BatchSize=100;CommLog=0;Debug=0;"
)
# SQLite ODBC: SyncPragma=FULL, or the driver sets synchronous=NORMAL and its writes skip
# the fsyncs every other SQLite method pays; rows stepped as fetched; real transactions.
SQLITE_OPTIONS = (
    "StepAPI=1;NoTXN=0;SyncPragma=FULL;Timeout=5000;NoWCHAR=1;"
    "BigInt=0;JDConv=0;FKSupport=0;LongNames=0;ShortNames=0;"
)

# MariaDB Connector/ODBC: OPTION=2 is FLAG_FOUND_ROWS (an UPDATE counts the rows it matched, as
# every MariaDB method does); statements prepared on the server (PrepOnClient=0, its default);
# utf8mb4.
# With compress, OPTION also has FLAG_COMPRESSED_PROTO (2048): the protocol's compression.
FLAG_FOUND_ROWS, FLAG_COMPRESSED_PROTO = 2, 2048  # Connector/ODBC's OPTION bits


def mariadb_options(compress: bool = False) -> str:
    return f"Option={FLAG_FOUND_ROWS | (FLAG_COMPRESSED_PROTO if compress else 0)};CharSet=utf8mb4;PrepOnClient=0;"


MARIADB_OPTIONS = mariadb_options()

# TLS, in each ODBC driver's own keywords (and libpq's through psqlODBC's pqopt).
POSTGRESQL_TLS = ("psqlODBC's SSLmode as given (absent: prefer); libpq's own keywords in pqopt={…}: sslrootcert with "
                  "verify-ca/verify-full only (with require libpq would check the chain against it), "
                  "ssl_min_protocol_version = ssl_max_protocol_version = the pinned tls_version, sslnegotiation=direct "
                  "where the libpq psqlODBC loads is 17 or later (else unsupported); libpq reads the CA and makes its "
                  "SSL context inside every connect")
MARIADB_TLS = ("Connector/ODBC's keywords: nothing for disable, prefer or none (Connector/ODBC 3.1 over Connector/C "
               "3.3 uses TLS only when asked); require = FORCETLS=1;SSLVERIFY=0; verify-ca = SSLCA=sslrootcert;"
               "SSLVERIFY=0 (libmariadb checks the chain against a CA it is given); verify-full = SSLCA=sslrootcert;"
               "SSLVERIFY=1 (the host name too); tls_version = TLSVERSION=…, which Connector/ODBC applies only "
               "with a CA, so require with a pinned version is unsupported; libmariadb reads the CA and makes its TLS "
               "context inside every connect")
MARIADB_COMPRESS = f"Option={FLAG_FOUND_ROWS | FLAG_COMPRESSED_PROTO} (FLAG_COMPRESSED_PROTO added: CLIENT_COMPRESS)"
READ_ONLY_SETTING = ("endpoint read_only: PostgreSQL pqopt={options='-c default_transaction_read_only=on'} (beside -c "
                     "search_path=<schema>), in the startup packet: every transaction READ ONLY, SQLSTATE 25006 on a "
                     f"write; MariaDB InitStmt={READ_ONLY} (Connector/ODBC's MYSQL_INIT_COMMAND, run at every connect): "
                     "error 1792, SQLSTATE 25006 on a write; SQLite Database=file:<file>?mode=ro (the driver opens "
                     "with SQLITE_OPEN_URI: the file read-only, SQLITE_READONLY on a write); absent or false: none of "
                     "them")


def _braced(value: str) -> str:
    """A value in braces only when it holds characters a connection string would read as
    syntax (psqlODBC keeps the braces of a braced Server, so never brace needlessly)."""
    if not any(ch in value for ch in ";{}=") and not value.startswith(" "):
        return value
    return "{" + value.replace("}", "}}") + "}"


def _conninfo(value: str) -> str:
    """A value in a libpq conninfo string (what pqopt holds): quoted where it must be."""
    if value and not any(ch in value for ch in " '\\"):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@functools.lru_cache(maxsize=None)
def psqlodbc_libpq() -> int | None:
    """PQlibVersion of the libpq psqlODBC loads (the system's libpq.so.5), None if not found."""
    try:
        return int(ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5").PQlibVersion())
    except (OSError, AttributeError):
        return None


def connection_string(endpoint: dict) -> str:
    if endpoint["dbms"] == "sqlite":
        # the driver reads a value up to the next ';' and keeps braces: the URI goes as it is
        # (its path percent-encoded, so it holds no ';')
        database, uri = sqlite.database(endpoint)
        return f"Driver={{SQLite3}};Database={database if uri else _braced(database)};{SQLITE_OPTIONS}"
    if endpoint["dbms"] == "mariadb":
        where = ([f"Socket={_braced(endpoint['socket'])}"] if endpoint.get("socket")
                 else [f"Server={_braced(endpoint['host'])}", f"Port={endpoint['port']}"])
        parts = ["Driver={MariaDB Unicode}", *where, f"Database={_braced(endpoint['database'])}",
                 f"Uid={_braced(endpoint['user'])}"]
        if endpoint.get("password"):
            parts.append(f"Pwd={_braced(endpoint['password'])}")
        if endpoint.get("read_only"):  # Connector/ODBC's init command (MYSQL_INIT_COMMAND), run at every connect
            parts.append(f"InitStmt={READ_ONLY}")
        return ";".join(parts + mariadb_tls(endpoint)) + ";" + mariadb_options(bool(endpoint.get("compress")))
    parts = [
        "Driver={PostgreSQL Unicode}",
        f"Server={_braced(endpoint['host'])}",
        f"Port={endpoint['port']}",
        f"Database={_braced(endpoint['database'])}",
        f"Uid={_braced(endpoint['user'])}",
    ]
    if endpoint.get("password"):
        parts.append(f"Pwd={_braced(endpoint['password'])}")
    libpq = libpq_tls(endpoint, psqlodbc_libpq(), "psqlODBC")
    parts.append(f"SSLmode={libpq.pop('sslmode', 'prefer')}")
    text = ";".join(parts) + ";" + POSTGRESQL_OPTIONS
    libpq.update(startup_options(endpoint))
    if libpq:  # libpq's own keywords, which psqlODBC hands libpq
        pqopt = " ".join(f"{key}={_conninfo(str(value))}" for key, value in libpq.items())
        text += "pqopt={" + pqopt.replace("}", "}}") + "};"
    return text


def mariadb_tls(endpoint: dict) -> list[str]:
    """Connector/ODBC's TLS keywords for the endpoint (MARIADB_TLS says how)."""
    asked = libmariadb_ask(endpoint, "MariaDB Connector/ODBC")
    if not asked.encrypted:
        return []
    if asked.mode == "require":
        if asked.version:
            raise Unsupported("MariaDB Connector/ODBC applies TLSVERSION only with a CA (SSLCA), which checks the "
                              "chain: require (unchecked) cannot pin a TLS version")
        return ["FORCETLS=1", "SSLVERIFY=0"]
    parts = [f"SSLCA={_braced(asked.ca)}"] if asked.ca else ["FORCETLS=1"]
    parts.append(f"SSLVERIFY={int(asked.mode == 'verify-full')}")
    if asked.version:
        if not asked.ca:
            raise Unsupported("MariaDB Connector/ODBC applies TLSVERSION only with a CA (SSLCA): give sslrootcert")
        parts.append(f"TLSVERSION={asked.version}")
    return parts


def settings() -> dict[str, str]:
    return {
        "postgresql driver": "psqlODBC, Driver={PostgreSQL Unicode}; search_path by pqopt={options='-c search_path=<schema>'}",
        "postgresql options": POSTGRESQL_OPTIONS,
        "sqlite driver": "SQLite3 ODBC driver, Driver={SQLite3}",
        "sqlite options": SQLITE_OPTIONS,
        "mariadb driver": "MariaDB Connector/ODBC, Driver={MariaDB Unicode}; Socket= on the unix path, else Server/Port",
        "mariadb options": MARIADB_OPTIONS,
        "tls": f"PostgreSQL: {POSTGRESQL_TLS}{_libpq_said()}. MariaDB: {MARIADB_TLS}",
        "compress": f"MariaDB: {MARIADB_COMPRESS}",
        "read_only": READ_ONLY_SETTING,
    }


def _libpq_said() -> str:
    version = psqlodbc_libpq()
    return "" if version is None else f" (this libpq: {libpq_version(version)})"
