"""The latency proxy's own cost: ping-pong SELECT 1 directly and through the proxy,
interleaved; the difference per round trip beyond the delay it was asked to add is what
every figure measured through it carries. At 0 µs it is the proxy's bare cost; with a delay
the proxy spins before each send, which on a VM whose idle CPUs halt also changes how fast
the other side wakes, so each delay is measured for itself."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

from .base import Path
from .proxy import LatencyProxy


def _per_query_ns(round_trip: Callable[[], Any], n: int) -> float:
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(n):
        round_trip()
    return (clock() - start) / n


def proxy_cost_us(target: Any, log_path: str, path: Path, rounds: int = 5, queries: int = 300) -> float:
    """Median over interleaved rounds of (proxied − direct) time per SELECT 1 minus the
    round trip's two delays, in µs: the target's own connections (``Target.round_trips``)
    to its TCP endpoint and through a proxy in front of it."""
    endpoint = target.endpoint("tcp")
    proxy = LatencyProxy(path, endpoint["host"], endpoint["port"], log_path)
    try:
        with target.round_trips(endpoint) as direct, \
                target.round_trips({**endpoint, "host": "127.0.0.1", "port": proxy.port}) as proxied:
            _per_query_ns(direct, queries // 3), _per_query_ns(proxied, queries // 3)  # warm both
            differences = [_per_query_ns(proxied, queries) - _per_query_ns(direct, queries) for _ in range(rounds)]
    finally:
        proxy.stop()
    return statistics.median(differences) / 1000 - 2 * path.delay_us
