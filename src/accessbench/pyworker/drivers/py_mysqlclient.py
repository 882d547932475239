"""py-mysqlclient: mysqlclient (MySQLdb), the C extension over libmariadb."""

from __future__ import annotations

import MySQLdb
import MySQLdb.constants.CLIENT

from .mysql import RECORD_SETTING, TextProtocolDriver, connect_kwargs


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
            "cursor": "Cursor (mysql_store_result: the whole result is read before execute returns)",
            "literal": "execute(text): text protocol (mysql_real_query)",
            "record": RECORD_SETTING,
            "extended": "unsupported: MySQLdb interpolates parameters on the client",
            "prepared": "unsupported: MySQLdb has no binary-protocol prepared statements",
        }

    def _connect(self, endpoint: dict):
        return MySQLdb.connect(**connect_kwargs(endpoint), autocommit=True, charset="utf8mb4",
                               client_flag=MySQLdb.constants.CLIENT.FOUND_ROWS)
