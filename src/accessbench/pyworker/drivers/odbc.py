"""ODBC connection strings: which driver a target gets, and the driver options that change
behaviour, pinned. c-odbc (workers/c/src/driver_odbc.c) pins exactly the same options, and a
test compares the two workers' ``hello`` so they cannot drift apart."""

from __future__ import annotations

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
MARIADB_OPTIONS = "Option=2;CharSet=utf8mb4;PrepOnClient=0;"


def _braced(value: str) -> str:
    """A value in braces only when it holds characters a connection string would read as
    syntax (psqlODBC keeps the braces of a braced Server, so never brace needlessly)."""
    if not any(ch in value for ch in ";{}=") and not value.startswith(" "):
        return value
    return "{" + value.replace("}", "}}") + "}"


def connection_string(endpoint: dict) -> str:
    if endpoint["dbms"] == "sqlite":
        return f"Driver={{SQLite3}};Database={_braced(endpoint['file'])};{SQLITE_OPTIONS}"
    if endpoint["dbms"] == "mariadb":
        where = ([f"Socket={_braced(endpoint['socket'])}"] if endpoint.get("socket")
                 else [f"Server={_braced(endpoint['host'])}", f"Port={endpoint['port']}"])
        parts = ["Driver={MariaDB Unicode}", *where, f"Database={_braced(endpoint['database'])}",
                 f"Uid={_braced(endpoint['user'])}"]
        if endpoint.get("password"):
            parts.append(f"Pwd={_braced(endpoint['password'])}")
        return ";".join(parts) + ";" + MARIADB_OPTIONS
    parts = [
        "Driver={PostgreSQL Unicode}",
        f"Server={_braced(endpoint['host'])}",
        f"Port={endpoint['port']}",
        f"Database={_braced(endpoint['database'])}",
        f"Uid={_braced(endpoint['user'])}",
    ]
    if endpoint.get("password"):
        parts.append(f"Pwd={_braced(endpoint['password'])}")
    parts.append(f"SSLmode={endpoint.get('sslmode', 'prefer')}")
    text = ";".join(parts) + ";" + POSTGRESQL_OPTIONS
    if endpoint.get("schema"):
        text += f"pqopt={{options='-c search_path={endpoint['schema']}'}};"
    return text


def settings() -> dict[str, str]:
    return {
        "postgresql driver": "psqlODBC, Driver={PostgreSQL Unicode}; search_path by pqopt={options='-c search_path=<schema>'}",
        "postgresql options": POSTGRESQL_OPTIONS,
        "sqlite driver": "SQLite3 ODBC driver, Driver={SQLite3}",
        "sqlite options": SQLITE_OPTIONS,
        "mariadb driver": "MariaDB Connector/ODBC, Driver={MariaDB Unicode}; Socket= on the unix path, else Server/Port",
        "mariadb options": MARIADB_OPTIONS,
    }
