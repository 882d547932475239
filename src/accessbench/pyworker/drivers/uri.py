"""Connection URIs for the methods that take one (ADBC, ConnectorX, polars), from the
endpoint every worker is given: the unix path's socket as a query parameter, the search path
in libpq's startup options, every part quoted."""

from __future__ import annotations

from urllib.parse import quote, urlencode


def uri(endpoint: dict) -> str:
    dbms = endpoint["dbms"]
    if dbms in ("sqlite", "duckdb"):
        return f"sqlite:///{endpoint['file']}"  # an absolute path after the scheme's three slashes
    user = quote(endpoint["user"], safe="")
    if endpoint.get("password"):
        user += ":" + quote(endpoint["password"], safe="")
    query: dict[str, str] = {}
    if dbms == "postgresql":
        scheme, local = "postgresql", endpoint["host"].startswith("/")
        if local:
            query["host"] = endpoint["host"]
        query["sslmode"] = endpoint.get("sslmode", "prefer")
        if endpoint.get("schema"):
            query["options"] = f"-c search_path={endpoint['schema']}"
    else:
        scheme, local = "mysql", bool(endpoint.get("socket"))
        if local:
            query["socket"] = endpoint["socket"]
        else:  # the Rust mysql crate (ConnectorX's) would move a connection to 127.0.0.1 onto the server's socket
            query["prefer_socket"] = "false"
    where = f"localhost:{endpoint.get('port') or ''}" if local else f"{endpoint['host']}:{endpoint['port']}"
    text = f"{scheme}://{user}@{where.rstrip(':')}/{quote(endpoint['database'], safe='')}"
    return text + ("?" + urlencode(query, quote_via=quote) if query else "")
