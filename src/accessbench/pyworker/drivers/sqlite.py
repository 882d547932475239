"""How the SQLite drivers name the endpoint's file: as it is, or for a read_only endpoint as a
SQLite URI with mode=ro, so that SQLite refuses every write (SQLITE_READONLY). Every driver here
opens a URI (sqlite3 told uri=True; ADBC's, ConnectorX's and the ODBC driver open with
SQLITE_OPEN_URI), while few have a read-only flag of their own."""

from __future__ import annotations

from urllib.parse import quote


def database(endpoint: dict) -> tuple[str, bool]:
    """What the driver opens, and whether it is a URI (which sqlite3 must be told, uri=True)."""
    if not endpoint.get("read_only"):
        return endpoint["file"], False
    # the path percent-encoded: its '?', '#', '%' (and ';', which ends an ODBC value) are the URI's
    return f"file:{quote(endpoint['file'])}?mode=ro", True


def read_only_setting(how: str) -> str:
    """``hello``'s ``read_only`` for a SQLite driver that opens the URI as ``how``."""
    return (f"endpoint read_only: the file opened as the URI file:<file>?mode=ro ({how}), so every connection is "
            "read-only and SQLite refuses writes (SQLITE_READONLY); absent or false: the file as it is")
