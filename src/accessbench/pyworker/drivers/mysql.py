"""What the MariaDB drivers share: connection settings, the serving thread, and the
text-protocol driver shape of PyMySQL and mysqlclient."""

from __future__ import annotations

import itertools

from ..base import Driver, Op, Unsupported, cursor_scan, cursor_text


def connect_kwargs(endpoint: dict) -> dict:
    """The unix path names a socket file; tcp a host and port. Autocommit is set by each
    driver (PEP 249 says off; accessbench runs every statement in autocommit, as on
    PostgreSQL, with explicit transactions where a step asks for them)."""
    kwargs = {"user": endpoint["user"], "database": endpoint["database"]}
    if endpoint.get("password"):
        kwargs["password"] = endpoint["password"]
    if endpoint.get("socket"):
        kwargs["unix_socket"] = endpoint["socket"]
    else:
        kwargs.update(host=endpoint["host"], port=int(endpoint["port"]))
    return kwargs


# The serving thread's OS id, so the runner can read its CPU time (one thread per connection).
SERVER_TID = "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"


def sqlstate(error: BaseException) -> str | None:
    """MariaDB Connector/Python reports the SQLSTATE; MySQLdb and PyMySQL only the error
    number (in the message)."""
    return getattr(error, "sqlstate", None) or None


# HANDLER … READ NEXT returns this many records per round trip in a record-level scan.
HANDLER_ROWS = 1000
_handlers = itertools.count(1)
RECORD_SETTING = (f"HANDLER table OPEN before the loop (untimed); per operation HANDLER … READ index = (key), or for "
                  f"a scan READ FIRST then READ NEXT, LIMIT {HANDLER_ROWS} records per round trip; CLOSE after the step")


class Handlers:
    """MariaDB's HANDLER statements as record-level access: the table is opened (untimed)
    when the op is built and closed at the end of the step; keyed reads are HANDLER … READ
    index = (key), scans READ FIRST then READ NEXT, HANDLER_ROWS records at a time."""

    def record_op(self, kind: str, record: dict) -> Op:
        cur, name = self.cur, f"ab_h{next(_handlers)}"
        cur.execute(f"HANDLER {record['table']} OPEN AS {name}")
        self.handlers.append(name)
        if kind == "scan":
            def scan(_):
                rows, batch = [], HANDLER_ROWS
                cur.execute(f"HANDLER {name} READ FIRST LIMIT {batch}")
                while True:
                    got = cur.fetchall()
                    rows.extend(got)
                    if len(got) < batch:
                        return rows
                    cur.execute(f"HANDLER {name} READ NEXT LIMIT {batch}")

            return scan
        if kind != "exec" or not record.get("index"):
            raise Unsupported("record-level access reads: a scan, or an exec step keyed on an index")
        read = f"HANDLER {name} READ `{record['index']}` = ("

        def keyed(key):
            cur.execute(read + key + ")")
            return cur.fetchall()

        return keyed

    def end_step(self) -> None:
        while self.handlers:
            self.cur.execute(f"HANDLER {self.handlers.pop()} CLOSE")


class MariaDBDriver(Handlers, Driver):
    """What every Python MariaDB driver here does alike: connecting (subclasses say how),
    the serving thread, text-protocol scans and ``literal`` statements, HANDLER reads, and
    batches by the driver's executemany."""

    modes = ("literal", "record")

    def _connect(self, endpoint: dict):
        raise NotImplementedError

    def server_version(self) -> str:
        return self.conn.get_server_info()

    def sqlstate(self, error: BaseException) -> str | None:
        return sqlstate(error)

    def open(self, endpoint: dict, options: dict) -> dict:
        self.attach(self._connect(endpoint))
        self.cur.execute(SERVER_TID)
        return {"server_pid": self.cur.fetchone()[0], "server_version": self.server_version()}

    def attach(self, conn) -> None:
        self.conn, self.cur, self.handlers = conn, conn.cursor(), []

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str) -> None:
        self.cur.execute(sql)

    def connect_op(self, endpoint: dict) -> Op:
        def connect(_):
            self._connect(endpoint).close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        return cursor_scan(self.cur, sql)

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        if mode != "literal":
            raise Unsupported(f"{self.driver} has no {mode} mode: it interpolates parameters and sends text queries")
        return cursor_text(self.cur, reads)

    def batch_op(self, sql: str) -> Op:
        cur, sql = self.cur, self.markers(sql)
        return self.in_transaction(lambda group: cur.executemany(sql, group))


class TextProtocolDriver(MariaDBDriver):
    """A DB-API driver that interpolates parameters on the client and sends text-protocol
    queries (COM_QUERY): ``literal`` (and HANDLER ``record`` reads) only."""

    paramstyle = "format"
