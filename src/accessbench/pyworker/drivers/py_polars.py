"""py-polars: polars' ``read_database_uri``, a data frame from a query, over ConnectorX (its
default engine) or, with ``engine=adbc``, over ADBC: the layer a data scientist calls, its
cost beside the reader it runs on. A value is read once it is in the frame."""

from __future__ import annotations

import adbc_driver_manager
import polars

from ..base import Op, Unsupported
from .columnar import ReadsOnly, frame_rows
from .py_connectorx import PROBE, deviations
from .uri import (CONNECTORX_COMPRESS, CONNECTORX_READ_ONLY, CONNECTORX_TLS, LIBPQ_READ_ONLY, LIBPQ_TLS,
                  SQLITE_READ_ONLY, connectorx_session, uri)

ENGINES = {"connectorx": ("postgresql", "mariadb", "sqlite"), "adbc": ("postgresql", "sqlite")}


class Driver(ReadsOnly):
    name = "py-polars"
    driver = "polars"
    dbms = ("postgresql", "mariadb", "sqlite")
    # what the engines raise, through polars: ConnectorX's text errors, ADBC's DB-API ones
    db_errors = (RuntimeError, adbc_driver_manager.Error)
    sqlstates = "none"
    variants = {"engine": tuple(ENGINES)}
    # polars' API for a database is SQL text (read_database_uri(query)): no builder maps a
    # statement's shape, so hello lists no shapes and every answer says the statement ran as text.
    default_api = "raw"
    deviations = deviations("binary")  # over ConnectorX; over ADBC none (configure)

    def configure(self, chosen: dict[str, str]) -> None:
        super().configure(chosen)
        self.deviations = deviations("binary") if self.setting("engine") == "connectorx" else {}

    def settings(self) -> dict[str, str]:
        engine = self.setting("engine")
        return {
            "engine": engine + (" (one partition; connects inside every read)" if engine == "connectorx"
                                else " (a new ADBC connection inside every read)"),
            "result": "read_database_uri(query, uri): a polars DataFrame",
            "api": "SQL text is polars' API for a database (read_database_uri(query)): the step's statement as it "
                   "is, every answer marked api raw; no shapes",
            "open": f"one read of {PROBE} (untimed) on PostgreSQL and MariaDB: an endpoint it cannot reach as asked "
                    "(TLS) fails open",
            "tls": ("as py-connectorx: " + CONNECTORX_TLS if engine == "connectorx"
                    else "as py-adbc, in the URI ADBC's PostgreSQL driver reads: " + LIBPQ_TLS),
            **({"compress": "as py-connectorx: " + CONNECTORX_COMPRESS} if engine == "connectorx" else {}),
            "read_only": ("as py-connectorx (read_database_uri passes pre_execution_query on to it): "
                          + CONNECTORX_READ_ONLY if engine == "connectorx"
                          else f"PostgreSQL, as py-adbc: {LIBPQ_READ_ONLY}. {SQLITE_READ_ONLY} (given as "
                               "sqlite:///file:…, from which polars strips the scheme before ADBC opens it)"),
            "literal": "unsupported: read_database_uri runs queries without parameters only, for scans",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        dbms, engine = endpoint["dbms"], self.setting("engine")
        if dbms not in ENGINES[engine]:
            raise Unsupported(f"py-polars has no {dbms} source through {engine}")
        self.target = uri(endpoint, "connectorx" if engine == "connectorx" else "libpq")
        # only ConnectorX takes it (a read_only MariaDB session's statement): ADBC has no MariaDB source
        self.session = connectorx_session(endpoint)
        if dbms != "sqlite":  # one read, untimed: a server it cannot reach as asked (TLS) fails open
            polars.read_database_uri(PROBE, self.target, engine=engine, **self.session)
        return {}

    def result_rows(self, result):
        return frame_rows(result)

    def result_size(self, result) -> int:
        return int(result.estimated_size())

    def scan_op(self, sql: str) -> Op:
        target, engine, session = self.target, self.setting("engine"), self.session
        return lambda _: polars.read_database_uri(sql, target, engine=engine, **session)
