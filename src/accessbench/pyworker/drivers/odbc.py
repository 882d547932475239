"""ODBC connection strings: which driver a target gets, and the driver options that change
behaviour, pinned. The C worker's c-odbc builds the same strings."""

from __future__ import annotations

# psqlODBC: server-side prepare (so SQLPrepare parses once on the server), no cursor-based
# fetching (read whole results, as libpq does), booleans as SQL_BIT (not '1'/'0' text), and
# the search path in the libpq startup packet.
POSTGRESQL_OPTIONS = {"UseServerSidePrepare": "1", "UseDeclareFetch": "0", "BoolsAsChar": "0"}


def connection_string(endpoint: dict) -> str:
    if endpoint["dbms"] == "sqlite":
        return f"Driver={{SQLite3}};Database={endpoint['file']};"
    parts = {
        "Driver": "{PostgreSQL Unicode}",
        "Server": endpoint["host"],
        "Port": str(endpoint["port"]),
        "Database": endpoint["database"],
        "Uid": endpoint["user"],
        "SSLmode": endpoint.get("sslmode", "prefer"),
        **POSTGRESQL_OPTIONS,
    }
    if endpoint.get("password"):
        parts["Pwd"] = "{" + endpoint["password"].replace("}", "}}") + "}"
    if endpoint.get("schema"):
        parts["pqopt"] = f"{{options='-c search_path={endpoint['schema']}'}}"
    return ";".join(f"{k}={v}" for k, v in parts.items()) + ";"


def settings() -> dict[str, str]:
    return {
        "postgresql driver": "psqlODBC (PostgreSQL Unicode): " + ", ".join(f"{k}={v}" for k, v in POSTGRESQL_OPTIONS.items()),
        "sqlite driver": "SQLite3 ODBC driver, default options",
    }
