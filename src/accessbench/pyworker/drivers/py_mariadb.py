"""py-mariadb: MariaDB Connector/Python, a C extension over Connector/C (libmariadb) with
both protocols: text (``literal``) and binary (``extended``: prepared and executed each time,
which is all its cursors do — none keeps a statement prepared)."""

from __future__ import annotations

import functools

import mariadb
import mariadb.constants.CLIENT

from ..association import BY_HAND
from ..base import Op, Unsupported
from .mysql import (CONNECTOR_PYTHON_COMPRESS, CONNECTOR_PYTHON_TLS, INIT_COMMAND_READ_ONLY, RECORD_SETTING,
                    MariaDBDriver, connect_kwargs, connector_python_tls)


class Driver(MariaDBDriver):
    name = "py-mariadb"
    driver = "mariadb"
    dbms = ("mariadb",)
    paramstyle = "qmark"
    modes = ("literal", "extended", "record")
    kinds = (*MariaDBDriver.kinds, "load")
    batch_style = "executemany (COM_STMT_BULK_EXECUTE: one round trip per group) in one transaction per group"
    db_errors = (mariadb.Error,)
    has_pool = True

    def version(self) -> str:
        return mariadb.__version__

    def settings(self) -> dict[str, str]:
        return {
            "client library": f"Connector/C {mariadb.mariadbapi_version}",
            "autocommit": "True",
            "client_flag": "FOUND_ROWS (an UPDATE counts the rows it matched)",
            "tls": CONNECTOR_PYTHON_TLS,
            "compress": CONNECTOR_PYTHON_COMPRESS,
            "read_only": INIT_COMMAND_READ_ONLY,
            "cursor": "buffered (the whole result is read before execute returns)",
            "literal": "execute(text) on a text cursor: text protocol (COM_QUERY)",
            "record": RECORD_SETTING,
            "load": BY_HAND + "; execute(sql, params) on a cursor(binary=True), as extended",
            "extended": "execute(sql, params) on a cursor(binary=True): the statement is prepared and executed "
                        "every time (binary protocol)",
            "prepared": "unsupported: Connector/Python 1.1 prepares again on every execute, even on a "
                        "cursor(prepared=True, binary=True) (the server counts a COM_STMT_PREPARE per execute); "
                        "prepared=True alone interpolates on the client and sends text",
            "pooled": "mariadb.ConnectionPool, pool_size connections per process, filled before the start; "
                      "pool_reset_connection off, no validation on borrow; get_connection/close inside each operation",
        }

    def connector(self, endpoint: dict):
        return functools.partial(mariadb.connect, **connect_kwargs(endpoint), **connector_python_tls(endpoint),
                                 autocommit=True, client_flag=mariadb.constants.CLIENT.FOUND_ROWS)

    def server_version(self) -> str:
        return self.conn.server_info

    def pool(self, endpoint: dict, size: int):
        pool = mariadb.ConnectionPool(pool_name=f"ab{id(self)}", pool_size=size, pool_reset_connection=False,
                                      pool_validation_interval=0, **connect_kwargs(endpoint),
                                      **connector_python_tls(endpoint), autocommit=True,
                                      client_flag=mariadb.constants.CLIENT.FOUND_ROWS)
        return _Pool(pool)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        if mode == "literal":
            return super().exec_op(sql, mode, reads)
        if mode == "prepared":
            raise Unsupported("Connector/Python prepares again on every execute (COM_STMT_PREPARE each time), "
                              "so it has no prepared-once mode; its binary protocol is the extended mode")
        cur, sql = self.conn.cursor(binary=True), self.markers(sql)

        def op(args):
            cur.execute(sql, args)
            return cur.fetchall() if reads else cur.rowcount

        return op


    def bound(self):
        cur = self.conn.cursor(binary=True)

        def query(sql, params):
            cur.execute(sql, params)
            return cur.fetchall()

        return query


class _Pool:
    """MariaDB's pool in the shape the host borrows from: a borrowed connection goes back
    when closed."""

    def __init__(self, pool) -> None:
        self.pool = pool

    def borrow(self):
        return self.pool.get_connection()

    def give_back(self, conn) -> None:
        conn.close()

    def close(self) -> None:
        self.pool.close()
