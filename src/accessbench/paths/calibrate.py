"""The latency proxy's own cost: ping-pong SELECT 1 directly and through the proxy,
interleaved; the difference per round trip beyond the delay it was asked to add is what
every figure measured through it carries. At 0 µs it is the proxy's bare cost; with a delay
the proxy spins before each send, which on a VM whose idle CPUs halt also changes how fast
the other side wakes, so each delay is measured for itself."""

from __future__ import annotations

import statistics
import time

import psycopg

from . import parse
from .proxy import LatencyProxy


def _per_query_ns(conn: psycopg.Connection, n: int) -> float:
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(n):
        conn.execute("SELECT 1", prepare=True).fetchall()
    return (clock() - start) / n


def proxy_cost_us(endpoint: dict, log_path: str, path: str = "tcp+0us", rounds: int = 5, queries: int = 300) -> float:
    """Median over interleaved rounds of (proxied − direct) time per SELECT 1 minus the
    round trip's two delays, in µs."""
    spec = parse(path)
    proxy = LatencyProxy(spec, endpoint["host"], endpoint["port"], log_path)
    kwargs = {k: endpoint[k] for k in ("user", "password") if endpoint.get(k)}
    try:
        direct = psycopg.connect(host=endpoint["host"], port=endpoint["port"], dbname=endpoint["database"],
                                 sslmode="disable", autocommit=True, **kwargs)
        proxied = psycopg.connect(host="127.0.0.1", port=proxy.port, dbname=endpoint["database"],
                                  sslmode="disable", autocommit=True, **kwargs)
        with direct, proxied:
            _per_query_ns(direct, queries // 3), _per_query_ns(proxied, queries // 3)  # warm both
            differences = [_per_query_ns(proxied, queries) - _per_query_ns(direct, queries) for _ in range(rounds)]
    finally:
        proxy.stop()
    return statistics.median(differences) / 1000 - 2 * spec.delay_us
