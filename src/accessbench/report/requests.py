"""Where a page's requests spent their time: each loaded page step whose requests were sampled
beside the load (tier/sampler.py; TechEmpower's tests), one row per method — its requests per
second, and per sampled request its round trip split into the database's time, the page's own
and neither's (stats/requests.py), so that a ranking by requests per second says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import formatting as fmt
from ..stats.cells import CellResult
from .figures import Figure, step_title


@dataclass(frozen=True)
class RequestRow:
    method: str
    step: str                 # its title
    per_second: Figure        # median requests/s over the trials (the load generator's)
    load: Figure              # the load's mean round trip (Little's law)
    round_trip: Figure        # mean round trip of the sampled requests
    db: Figure                # of it, in the database driver
    page: Figure              # in the page's own code
    outside: Figure           # in neither: the app server, HTTP, waiting for a process
    db_share: Figure          # the database's part of the round trip
    sampled: Figure           # requests sampled (and trials)
    status: str


@dataclass(frozen=True)
class RequestTable:
    title: str
    rows: tuple[RequestRow, ...]

    numeric_from = 2
    columns = ["method", "step", "requests/s", "load's round trip", "sampled", "database", "page", "outside", "database %",
               "requests sampled"]

    def cells(self, row: RequestRow) -> list[str]:
        mark = "" if row.status == "ok" else "!"
        return [row.method, row.step, row.per_second.text + mark, row.load.text, row.round_trip.text, row.db.text,
                row.page.text, row.outside.text, row.db_share.text, row.sampled.text]

    def notes(self, row: RequestRow) -> list[str | None]:
        return [None] * len(self.columns)

    @property
    def caption(self) -> str:
        return ("Per request, where the time went: requests made beside the load, one at a time at most every 20 ms, "
                "each split by the page's Server-Timing header (the page times itself to the microsecond). sampled: "
                "their mean round trip, as that client saw it; database: in the database driver (its connection got "
                "where the policy makes or borrows one, its statements, their rows); page: the rest of the page (its "
                "language, framework, JSON or HTML); outside: neither (the app server handing the request on and the "
                "answer back, HTTP on a new connection a request, waiting for a free process, the client's own wake-up). "
                "Means: database + page + "
                "outside = sampled. load's round trip: the load's own mean (its connections ÷ its requests per "
                "second, Little's law for a closed loop); a sampled request is one more in the system, so it runs "
                "longer where requests queue. requests/s: the load generator's median. ! a cell that did not verify.")


def request_tables(results: list[CellResult]) -> list[RequestTable]:
    """One table per variant and target holding sampled page steps, rows by step then method."""
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for r in results:
        if r.request_parts is not None:
            groups.setdefault((r.cell.variant, r.cell.target), []).append(r)
    tables = []
    for (variant, target), rs in groups.items():
        rows = [_row(r) for r in sorted(rs, key=lambda r: (r.cell.step_index, r.cell.method))]
        title = f"Where each request's time went on {target}" + (f" ({variant})" if variant else "")
        tables.append(RequestTable(title, tuple(rows)))
    return tables


def _row(r: CellResult) -> RequestRow:
    p = r.request_parts
    time = lambda ns: Figure(ns, fmt.duration(ns))  # noqa: E731
    rate = r.rate.median if r.rate is not None else None
    return RequestRow(
        method=r.cell.method, step=step_title(r.cell.variant, r.cell.step),
        per_second=Figure(rate, fmt.rate(rate)), load=time(p.load_ns), round_trip=time(p.latency_ns),
        db=time(p.db_ns), page=time(p.page_ns), outside=time(p.outside_ns),
        db_share=Figure(p.db_share, f"{p.db_share * 100:.0f}%"),
        sampled=Figure(p.n, f"{p.n:,} in {p.trials} trial{'s' if p.trials != 1 else ''}"),
        status=r.cell.status)
