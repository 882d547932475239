"""py-pg8000: pg8000's native API, pure Python."""

from __future__ import annotations

import ssl

import pg8000.native

from ..base import Driver, Op, Unsupported
from .pg import read_only_setting, startup_parameters
from .tls import CONTEXT_SETTING, Ask, ssl_context


def _kwargs(endpoint: dict) -> dict:
    kwargs = {"user": endpoint["user"], "database": endpoint["database"]}
    if endpoint["host"].startswith("/"):
        kwargs["unix_sock"] = f"{endpoint['host']}/.s.PGSQL.{endpoint['port']}"
    else:
        kwargs["host"], kwargs["port"] = endpoint["host"], endpoint["port"]
    if endpoint.get("password"):
        kwargs["password"] = endpoint["password"]
    kwargs["ssl_context"] = _ssl(endpoint)
    if parameters := startup_parameters(endpoint):
        kwargs["startup_params"] = parameters
    return kwargs


def _ssl(endpoint: dict):
    """pg8000's ssl_context: False never tries TLS (disable); None, its default, tries it
    unverified with a new default context per connection (prefer, none); an SSLContext requires
    it: made once (tls.ssl_context) and reused by every connection."""
    ask = Ask.of(endpoint).check()
    if ask.direct:
        raise Unsupported(f"pg8000 {pg8000.__version__} has no sslnegotiation=direct: it always sends an SSLRequest first")
    if ask.mode == "disable":
        return False
    return None if ask.default else ssl_context(ask)


TLS_SETTING = ("ssl_context=False for disable (no TLS attempt); None, pg8000's default, for prefer or none (TLS "
               "tried, unverified, a new default context per connection); for require, verify-ca and verify-full "
               "ssl_context=" + CONTEXT_SETTING + "; sslnegotiation=direct: unsupported (pg8000 always sends an "
               "SSLRequest)")


class Driver(Driver):
    name = "py-pg8000"
    driver = "pg8000"
    dbms = ("postgresql",)
    paramstyle = "named"
    batch_style = "prepared statement run per row in one transaction per group (no executemany in pg8000.native)"
    # ssl.SSLError, ConnectionError: a TLS handshake that fails (a certificate not of the given
    # authority, a server that drops it), raised by the ssl and socket modules through pg8000
    db_errors = (pg8000.native.DatabaseError, pg8000.native.InterfaceError, ssl.SSLError, ConnectionError)

    def settings(self) -> dict[str, str]:
        return {
            "api": "pg8000.native",
            "tls": TLS_SETTING,
            "read_only": read_only_setting("startup_params={'default_transaction_read_only': 'on'}"),
            "literal": "run(text) without params: simple query protocol",
            "extended": "run(sql, **params): unnamed statement, Parse/Describe/Bind/Execute every time",
            "prepared": "prepare(sql) once per step, then PreparedStatement.run(**params)",
        }

    def sqlstate(self, error: BaseException) -> str | None:
        detail = error.args[0] if error.args and isinstance(error.args[0], dict) else {}
        return detail.get("C")

    def open(self, endpoint: dict, options: dict) -> dict:
        self.conn = pg8000.native.Connection(**_kwargs(endpoint))
        self.statements: list = []
        pid = self.conn.run("SELECT pg_backend_pid()")[0][0]
        return {"server_pid": pid, "server_version": self.conn.parameter_statuses.get("server_version", "")}

    def close(self) -> None:
        self.conn.close()

    def execute(self, sql: str) -> None:
        self.conn.run(sql)

    def connect_op(self, endpoint: dict) -> Op:
        kwargs = _kwargs(endpoint)

        def connect(_):
            pg8000.native.Connection(**kwargs).close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        run = self.conn.run
        return lambda _: run(sql)

    def adapt(self, args: list[tuple]) -> list:
        # pg8000.native takes named parameters: build each op's dict before the clock.
        return [{f"p{k}": v for k, v in enumerate(row, start=1)} for row in args]

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn = self.conn
        if mode == "literal":
            if reads:
                return lambda text: conn.run(text)

            def op(text):
                conn.run(text)
                return conn.row_count

            return op
        sql = self.markers(sql)
        if mode == "extended":
            if reads:
                return lambda params: conn.run(sql, **params)

            def op(params):
                conn.run(sql, **params)
                return conn.row_count

            return op
        state: dict = {}

        def op(params):
            stmt = state.get("stmt")
            if stmt is None:  # prepared once, inside the first operation's time
                stmt = state["stmt"] = conn.prepare(sql)
                self.statements.append(stmt)
            rows = stmt.run(**params)
            return rows if reads else stmt._context.row_count  # no public row_count on statements

        return op

    def batch_op(self, sql: str) -> Op:
        conn, sql = self.conn, self.markers(sql)
        state: dict = {}

        def write_group(group):
            stmt = state.get("stmt")
            if stmt is None:
                stmt = state["stmt"] = conn.prepare(sql)
                self.statements.append(stmt)
            for params in group:
                stmt.run(**params)

        return self.in_transaction(write_group)

    def end_step(self) -> None:
        while self.statements:
            self.statements.pop().close()
