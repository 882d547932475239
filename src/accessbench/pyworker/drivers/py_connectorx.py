"""py-connectorx: ConnectorX, which reads a query's whole result into Arrow columns. It
keeps no connection between reads: each ``read_sql`` connects, reads and disconnects, inside
the operation's time (that is how it is used). One partition, so one connection and one
thread read the result, as the row drivers do."""

from __future__ import annotations

import connectorx

from ..base import Op, Unsupported
from .columnar import ReadsOnly, arrow_rows, arrow_size
from .uri import CONNECTORX_COMPRESS, CONNECTORX_READ_ONLY, CONNECTORX_TLS, connectorx_session, uri

# How ConnectorX reads from PostgreSQL (its `protocol`): binary COPY (its default), text
# COPY in CSV, or a server-side cursor fetched in batches.
PROTOCOLS = ("binary", "csv", "cursor")
# Read once at open (untimed), as a driver that keeps a connection connects there: an endpoint
# the reader cannot reach as asked (a certificate of another authority) fails open.
PROBE = "SELECT 1"
# What it reads otherwise than the canonical form (a mismatch on such a column says so).
SCALE_10 = "read as Arrow decimal128(38,10): every value at scale 10 (12.50 as 12.5000000000), the column's own lost"
EMPTY_NULL = "read by COPY … (FORMAT csv), where an empty string and NULL are alike: '' arrives as NULL"


def deviations(protocol: str) -> dict[str, dict[str, str]]:
    pg = {"numeric": SCALE_10}
    if protocol == "csv":
        pg |= {"char": EMPTY_NULL, "varchar": EMPTY_NULL, "text": EMPTY_NULL}
    return {"postgresql": pg, "mariadb": {"decimal": SCALE_10}}


class Driver(ReadsOnly):
    name = "py-connectorx"
    driver = "connectorx"
    dbms = ("postgresql", "mariadb", "sqlite")
    db_errors = (RuntimeError,)  # how ConnectorX raises the database's errors, as text without a SQLSTATE
    sqlstates = "none"
    variants = {"protocol": PROTOCOLS}
    deviations = deviations("binary")

    def configure(self, chosen: dict[str, str]) -> None:
        super().configure(chosen)
        self.deviations = deviations(self.setting("protocol"))

    def settings(self) -> dict[str, str]:
        return {
            "connection": "none kept: read_sql connects, reads the whole result and disconnects, all inside "
                          "the operation",
            "partitions": "1 (one connection, one thread)",
            "open": f"one read of {PROBE} (untimed) on PostgreSQL and MariaDB: an endpoint it cannot reach as asked "
                    "(TLS) fails open",
            "result": "return_type='arrow': a pyarrow Table",
            "protocol": {"binary": "PostgreSQL: COPY … TO STDOUT (FORMAT binary) (ConnectorX's default)",
                         "csv": "PostgreSQL: COPY … TO STDOUT (FORMAT csv)",
                         "cursor": "PostgreSQL: a server-side cursor, fetched in batches"}[self.setting("protocol")]
                        + "; MariaDB: the text protocol; SQLite: in process",
            "tls": CONNECTORX_TLS,
            "compress": CONNECTORX_COMPRESS,
            "read_only": CONNECTORX_READ_ONLY,
            "literal": "unsupported: ConnectorX runs queries without parameters only, for scans",
        }

    def open(self, endpoint: dict, options: dict) -> dict:
        self.dbms_name = endpoint["dbms"]
        if self.dbms_name not in self.dbms:
            raise Unsupported(f"py-connectorx has no {self.dbms_name} source")
        self.target, self.session = uri(endpoint, "connectorx"), connectorx_session(endpoint)
        if self.dbms_name != "sqlite":  # one read, untimed: a server it cannot reach as asked (TLS) fails open
            connectorx.read_sql(self.target, PROBE, return_type="arrow", **self.session)
        return {}

    def result_rows(self, result):
        return arrow_rows(result)

    def result_size(self, result) -> int:
        return arrow_size(result)

    def _read(self):
        target, session = self.target, self.session
        protocol = {"protocol": self.setting("protocol")} if self.dbms_name == "postgresql" else {}

        def read(sql: str):
            return connectorx.read_sql(target, sql, return_type="arrow", **protocol, **session)

        return read

    def scan_op(self, sql: str) -> Op:
        read = self._read()
        return lambda _: read(sql)
