"""py-asyncpg: asyncpg with its statement cache off, so that ``extended`` really parses
every time and only ``prepared`` reuses a statement."""

from __future__ import annotations

import inspect
import ssl

import asyncpg

from ..base import AsyncDriver, Op, Unsupported
from .pg import read_only_setting, startup_parameters
from .tls import CONTEXT_SETTING, Ask, ssl_context


def _count(status: str) -> int:
    """Rows changed, from a command tag such as ``UPDATE 10`` or ``INSERT 0 1``."""
    last = status.rsplit(" ", 1)[-1] if status else ""
    return int(last) if last.isdigit() else 0


def _tls(endpoint: dict) -> dict:
    """asyncpg's ``ssl`` (and ``direct_tls``) for the endpoint: False for disable; nothing for
    prefer or none (asyncpg's default, prefer); else an SSLContext made once (tls.ssl_context)
    and reused by every connection."""
    ask = Ask.of(endpoint).check()
    if ask.mode == "disable":
        return {"ssl": False}
    if ask.default:
        return {}
    kwargs: dict = {"ssl": ssl_context(ask, ALPN)}
    if ask.direct:
        if not DIRECT_TLS:
            raise Unsupported(f"asyncpg {asyncpg.__version__} has no direct_tls (asyncpg 0.30 and later)")
        kwargs["direct_tls"] = True
    return kwargs


# PostgreSQL's ALPN name, which a direct TLS handshake must carry (asyncpg sets it only on the
# contexts it makes itself)
ALPN = ("postgresql",)
DIRECT_TLS = "direct_tls" in inspect.signature(asyncpg.connect).parameters
TLS_SETTING = ("ssl=False for disable; nothing for prefer or none (asyncpg's default, prefer); for require, verify-ca "
               "and verify-full ssl=" + CONTEXT_SETTING + "; ALPN 'postgresql' set on it; sslnegotiation=direct: "
               + ("direct_tls=True" if DIRECT_TLS else "unsupported (this asyncpg has no direct_tls)"))


class Driver(AsyncDriver):
    name = "py-asyncpg"
    driver = "asyncpg"
    dbms = ("postgresql",)
    paramstyle = "numeric"
    batch_style = "executemany (pipelined) in one transaction per group"
    concurrency = "async tasks (one per client on the worker's one asyncio event loop)"
    # ssl.SSLError, ConnectionError: a TLS handshake that fails (a certificate not of the given
    # authority, a server that drops it), which asyncpg raises as the ssl and socket modules' own
    db_errors = (asyncpg.PostgresError, asyncpg.InterfaceError, ssl.SSLError, ConnectionError)
    has_pool = True
    # loop=uvloop: uvloop's event loop (libuv) in place of asyncio's, as asyncpg's own
    # benchmarks and many deployments run it.
    variants = {"loop": ("asyncio", "uvloop")}

    def configure(self, chosen: dict[str, str]) -> None:
        super().configure(chosen)
        if self.setting("loop") == "uvloop":
            import uvloop

            self.loop.close()
            self.loop = uvloop.new_event_loop()

    def settings(self) -> dict[str, str]:
        uv = self.setting("loop") == "uvloop"
        return {
            "statement_cache_size": "0 (no automatic statement reuse)",
            "tls": TLS_SETTING,
            "read_only": read_only_setting("server_settings={'default_transaction_read_only': 'on'}"),
            "event_loop": (f"uvloop {_uvloop_version()}" if uv else "asyncio (default policy)")
                          + "; under load every client is a task on this one loop",
            "pooled": "asyncpg.create_pool, min_size = max_size = pool_size per process, filled before the start; "
                      "reset=None (no reset query on release), no idle limit; acquire/release inside each operation",
            "literal": "execute(text): simple query protocol; rows are not returned, so only for statements that read none",
            "extended": "fetch/execute(sql, *args): unnamed statement parsed and described every time",
            "prepared": "prepare(sql) once per step, then PreparedStatement.fetch(*args)",
            "scan": "fetch(sql): extended protocol, binary result format",
            "real (float4)": "read as text: its binary decoding widens the float32 exactly, while the value "
                             "PostgreSQL and text-format drivers give is its shortest decimal text",
        }

    def _kwargs(self, endpoint: dict) -> dict:
        kwargs = {
            "host": endpoint["host"], "port": endpoint["port"], "user": endpoint["user"],
            "database": endpoint["database"], "statement_cache_size": 0, **_tls(endpoint),
        }
        if endpoint.get("password"):
            kwargs["password"] = endpoint["password"]
        if parameters := startup_parameters(endpoint):
            kwargs["server_settings"] = parameters
        return kwargs

    async def aopen(self, endpoint: dict, options: dict) -> dict:
        conn = await asyncpg.connect(**self._kwargs(endpoint))
        await conn.set_type_codec("float4", schema="pg_catalog", encoder=repr, decoder=float, format="text")
        self.conn = conn  # only once ready, after the last await: clients sharing the loop rely on it
        return {"server_pid": conn.get_server_pid(), "server_version": conn.get_settings().server_version}

    async def aclose(self) -> None:
        await self.conn.close()

    def pool(self, endpoint: dict, size: int):
        async def codec(conn):
            await conn.set_type_codec("float4", schema="pg_catalog", encoder=repr, decoder=float, format="text")

        async def make():  # made inside the driver's loop: a pool binds to the loop it is made in
            return await asyncpg.create_pool(**self._kwargs(endpoint), min_size=size, max_size=size, init=codec,
                                             max_inactive_connection_lifetime=0, reset=None)

        # Filled before it returns; no reset query on release, no idle limit.
        return _Pool(self.run(make()))

    def attach(self, conn) -> None:
        self.conn = conn

    async def aexecute(self, sql: str) -> None:
        await self.conn.execute(sql)

    def connect_op(self, endpoint: dict) -> Op:
        kwargs = self._kwargs(endpoint)

        async def connect(_):
            conn = await asyncpg.connect(**kwargs)
            await conn.close()
            return 0

        return connect

    def scan_op(self, sql: str) -> Op:
        conn = self.conn

        async def scan(_):
            return await conn.fetch(sql)

        return scan

    def exec_op(self, sql: str, mode: str, reads: bool) -> Op:
        conn = self.conn
        if mode == "literal":
            if reads:
                raise Unsupported(
                    "asyncpg's simple-protocol path (execute without arguments) returns no rows; "
                    "a row-returning literal statement cannot be run"
                )

            async def op(text):
                return _count(await conn.execute(text))

            return op
        sql = self.markers(sql)
        if mode == "extended":
            if reads:
                async def op(args):
                    return await conn.fetch(sql, *args)
            else:
                async def op(args):
                    return _count(await conn.execute(sql, *args))
            return op
        stmt = None

        async def op(args):
            nonlocal stmt
            if stmt is None:  # prepared once, inside the first operation's time
                stmt = await conn.prepare(sql)
            rows = await stmt.fetch(*args)
            return rows if reads else _count(stmt.get_statusmsg())

        return op

    def batch_op(self, sql: str) -> Op:
        conn, sql = self.conn, self.markers(sql)

        async def batch(group):
            async with conn.transaction():
                await conn.executemany(sql, group)
            return len(group)

        return batch


class _Pool:
    """asyncpg's pool in the shape the host borrows from (coroutines)."""

    def __init__(self, pool) -> None:
        self.pool = pool

    async def borrow(self):
        return await self.pool.acquire()

    async def give_back(self, conn) -> None:
        await self.pool.release(conn)

    async def close(self) -> None:
        await self.pool.close()


def _uvloop_version() -> str:
    from importlib.metadata import version

    return version("uvloop")
