"""What a reproduction whose reads last as long as they take will take (the hostage study's full
grid: 1,000,000 rows a read, minutes a read at 10 Mbit/s), estimated from a stored run of its
suite — its `--quick` reproduction, or any run of it — before anything is measured.

A read moves its rows as fast as the slower of two things allows: the method itself (its time
per row over loopback, where the wire costs nearly nothing) and the link (its bytes per row, as
the latency proxy counted them, over the link's bandwidth). Each of its round trips adds the
path's delay twice. So, per planned cell:

    per read = max(rows × loopback time per row, rows × bytes per row ÷ bandwidth)
               + round trips per read × 2 × one-way delay

times its reads (the trials, the warm-ups and the verification pass, which reads it whole too).
A cell the stored run answered `unsupported` takes no time; one whose method it did not time on
that target (over loopback, and on a path with a bandwidth for its bytes per row) is not
estimated, and the estimate says how many were not and reads "over". Servers, the proxies'
calibration and the table's load come on top.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..paths import parse as parse_path


@dataclass(frozen=True)
class Rate:
    """A method's reading on one target, plain or compressed, as a stored run measured it."""

    ns_per_row: float | None = None      # over loopback (or in process)
    bytes_per_row: float | None = None   # to the client, counted by the latency proxy
    round_trips: float = 0.0             # per read, likewise
    unsupported: bool = False


@dataclass(frozen=True)
class Estimate:
    seconds: float
    cells: int          # planned cells
    unknown: int        # of them, without a figure to estimate from
    source: str         # the run it was estimated from


def rates(results) -> dict[tuple[str, str, bool], Rate]:
    """(target, method, compressed) → what the stored run's cells say of its reads."""
    found: dict[tuple[str, str, bool], dict] = {}
    for r in results:
        path = parse_path(r.cell.path)
        entry = found.setdefault((r.cell.target, r.cell.method, path.compress), {})
        if r.cell.status == "unsupported":
            entry.setdefault("unsupported", True)
            continue
        # a mismatch reads as long as it reads (py-connectorx's decimals at another scale): its pace counts
        if r.cell.status not in ("ok", "mismatch") or not r.rows_per_op or r.per_op_ns is None:
            continue
        entry["unsupported"] = False
        if not path.proxied:  # loopback or in process: the method's own pace
            entry["ns_per_row"] = r.per_op_ns / r.rows_per_op
        elif r.bytes_per_row is not None:
            entry["bytes_per_row"] = r.bytes_per_row
            entry["round_trips"] = r.round_trips_per_op or 0.0
    return {key: Rate(**entry) for key, entry in found.items()}


def read_seconds(rate: Rate, rows: int, path) -> float | None:
    """One read of ``rows`` on ``path`` by the method ``rate`` describes; None where the run
    did not measure what that takes."""
    if rate.ns_per_row is None:
        return None
    own = rows * rate.ns_per_row / 1e9
    if not path.proxied:
        return own
    if path.bandwidth and rate.bytes_per_row is None:
        return None
    wire = rows * rate.bytes_per_row / path.bandwidth if path.bandwidth else 0.0
    return max(own, wire) + rate.round_trips * 2 * path.delay_us / 1e6


def estimate(planned: list[tuple[str, str, str]], rows: int, reads: int, measured: dict, source: str) -> Estimate:
    """``planned``: the run's (target, method, path) cells; ``reads``: each one's reads."""
    seconds, unknown = 0.0, 0
    for target, method, path_name in planned:
        path = parse_path(path_name)
        rate = measured.get((target, method, path.compress))
        if rate is not None and rate.unsupported:
            continue
        one = read_seconds(rate, rows, path) if rate is not None else None
        if one is None:
            unknown += 1
            continue
        seconds += reads * one
    return Estimate(seconds, len(planned), unknown, source)
