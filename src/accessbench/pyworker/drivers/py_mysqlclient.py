"""py-mysqlclient: mysqlclient (MySQLdb), the C extension over libmariadb."""

from __future__ import annotations

import functools

import MySQLdb
import MySQLdb.connections
import MySQLdb.constants.CLIENT

from .mysql import (INIT_COMMAND_READ_ONLY, MYSQLCLIENT_COMPRESS, MYSQLCLIENT_TLS, RECORD_SETTING, TEXT_PROTOCOL_LOAD,
                    TextProtocolDriver, connect_kwargs, mysqlclient_tls)


def arguments(endpoint: dict) -> dict:
    """MySQLdb.connect's arguments for the endpoint (its TLS and compression too), but for
    autocommit: py-mysqlclient's connection, which the SQLAlchemy layer over it makes alike."""
    return {**connect_kwargs(endpoint), **mysqlclient_tls(endpoint), "charset": "utf8mb4",
            "client_flag": MySQLdb.constants.CLIENT.FOUND_ROWS}


_query = MySQLdb._mysql.connection.query


class Connection(MySQLdb.connections.Connection):
    """MySQLdb's connection, whose errors also carry the SQLSTATE the server sent: MySQLdb's
    exceptions hold only the error number, and the connection's state (mysql_sqlstate) lasts
    only until its next statement (the worker's ROLLBACK after a failed step)."""

    def query(self, query):
        # MySQLdb's own query, repeated rather than called: a call more would be in every statement's time
        if isinstance(query, bytearray):
            query = bytes(query)
        try:
            _query(self, query)
        except MySQLdb.Error as e:
            e.sqlstate = self.sqlstate()
            raise


SQLSTATE_SETTING = ("the server's SQLSTATE, read from the connection (mysql_sqlstate) when a statement fails "
                    "(MySQLdb's exceptions carry only the error number)")


class Driver(TextProtocolDriver):
    name = "py-mysqlclient"
    driver = "mysqlclient"
    dbms = ("mariadb",)
    batch_style = "executemany (rewritten into multi-row INSERTs by MySQLdb) in one transaction per group"
    db_errors = (MySQLdb.Error,)

    def settings(self) -> dict[str, str]:
        return {
            "client library": f"libmariadb {MySQLdb._mysql.get_client_info()}",
            "autocommit": "True",
            "charset": "utf8mb4",
            "client_flag": "FOUND_ROWS (an UPDATE counts the rows it matched)",
            "tls": MYSQLCLIENT_TLS,
            "compress": MYSQLCLIENT_COMPRESS,
            "read_only": INIT_COMMAND_READ_ONLY,
            "sqlstate": SQLSTATE_SETTING,
            "cursor": "Cursor (mysql_store_result: the whole result is read before execute returns)",
            "literal": "execute(text): text protocol (mysql_real_query)",
            "record": RECORD_SETTING,
            "load": TEXT_PROTOCOL_LOAD,
            "extended": "unsupported: MySQLdb interpolates parameters on the client",
            "prepared": "unsupported: MySQLdb has no binary-protocol prepared statements",
        }

    def connector(self, endpoint: dict):
        return functools.partial(Connection, **arguments(endpoint), autocommit=True)
