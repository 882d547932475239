"""py-pymysql: PyMySQL, a pure-Python MySQL/MariaDB protocol driver."""

from __future__ import annotations

import functools

import pymysql
import pymysql.constants.CLIENT

from .mysql import (INIT_COMMAND_READ_ONLY, PYMYSQL_COMPRESS, PYMYSQL_TLS, RECORD_SETTING, TEXT_PROTOCOL_LOAD,
                    TextProtocolDriver, connect_kwargs, pymysql_tls)


class Driver(TextProtocolDriver):
    name = "py-pymysql"
    driver = "PyMySQL"
    dbms = ("mariadb",)
    batch_style = "executemany (rewritten into multi-row INSERTs by PyMySQL) in one transaction per group"
    db_errors = (pymysql.Error,)

    def version(self) -> str:
        return pymysql.__version__

    def settings(self) -> dict[str, str]:
        return {
            "autocommit": "True",
            "charset": "utf8mb4",
            "client_flag": "FOUND_ROWS (an UPDATE counts the rows it matched)",
            "tls": PYMYSQL_TLS,
            "compress": PYMYSQL_COMPRESS,
            "read_only": INIT_COMMAND_READ_ONLY,
            "cursor": "Cursor (buffered: the whole result is read before execute returns)",
            "literal": "execute(text): text protocol (COM_QUERY)",
            "record": RECORD_SETTING,
            "load": TEXT_PROTOCOL_LOAD,
            "extended": "unsupported: PyMySQL interpolates parameters on the client",
            "prepared": "unsupported: PyMySQL has no binary-protocol prepared statements",
        }

    def connector(self, endpoint: dict):
        return functools.partial(pymysql.connect, **connect_kwargs(endpoint), **pymysql_tls(endpoint), autocommit=True,
                                 charset="utf8mb4", client_flag=pymysql.constants.CLIENT.FOUND_ROWS)
