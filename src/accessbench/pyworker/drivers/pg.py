"""Connection settings shared by the PostgreSQL drivers."""

from __future__ import annotations


def connect_kwargs(endpoint: dict) -> dict:
    """libpq-style keywords: ``host`` is a socket directory for the unix path. The search
    path goes in the startup packet so no extra round trip sets it."""
    kwargs = {
        "host": endpoint["host"],
        "port": endpoint["port"],
        "dbname": endpoint["database"],
        "user": endpoint["user"],
    }
    if endpoint.get("password"):
        kwargs["password"] = endpoint["password"]
    kwargs["sslmode"] = endpoint.get("sslmode", "prefer")
    if endpoint.get("schema"):
        kwargs["options"] = f"-c search_path={endpoint['schema']}"
    return kwargs


def libpq_version(number: int) -> str:
    """libpq's integer version (180006) as people write it (18.6)."""
    return f"{number // 10000}.{number % 10000}" if number >= 100000 else str(number)


class GetconnPool:
    """A pool with getconn/putconn (psycopg_pool's, psycopg2.pool's) in the shape the host
    borrows from: borrow, give_back, close."""

    def __init__(self, pool, close: str = "close") -> None:
        self.borrow, self.give_back, self.close = pool.getconn, pool.putconn, getattr(pool, close)
