"""Where a page's requests spent their time: each loaded page step whose requests were sampled
on one of the load's connections (tier/sampler.py; TechEmpower's tests), one row per method —
its requests per second, and per request the load's round trip split into the database's time,
the page's own and neither's (stats/requests.py), so that a ranking by requests per second says
why.
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
    round_trip: Figure        # the load's mean round trip (Little's law)
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
    columns = ["method", "step", "requests/s", "round trip", "database", "page", "outside", "database %", "sampled"]

    def cells(self, row: RequestRow) -> list[str]:
        mark = "" if row.status == "ok" else "!"
        return [row.method, row.step, row.per_second.text + mark, row.round_trip.text, row.db.text, row.page.text,
                row.outside.text, row.db_share.text, row.sampled.text]

    def notes(self, row: RequestRow) -> list[str | None]:
        return [None] * len(self.columns)

    @property
    def caption(self) -> str:
        return ("Per request, where the time went. round trip: the load's mean, its connections ÷ its requests per "
                "second (Little's law for a closed loop). database and page: the means of the requests of one of the "
                "load's connections, which the tier worker drives itself, from each answer's Server-Timing header (the "
                "page times itself to the microsecond): database, in the database driver (its connection got where the "
                "policy makes or borrows one, its statements, their rows; on one connection a process, the wait behind "
                "the process's other requests); page, the rest of the page (its language, framework, JSON or HTML). "
                "outside: the rest of the round trip (the app server handing the request to a process and the answer "
                "back, HTTP, waiting for a free process). database %: its share of the round trip. sampled: the "
                "requests split. requests/s: the load's median. ! a cell that did not verify.")


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
        per_second=Figure(rate, fmt.rate(rate)), round_trip=time(p.load_ns), db=time(p.db_ns), page=time(p.page_ns),
        outside=time(p.outside_ns) if p.outside_ns >= 0 else Figure(None, "—", "the sample's page ran longer than the "
                                                                                 "load's round trip"),
        db_share=Figure(p.db_share, f"{p.db_share * 100:.0f}%"),
        sampled=Figure(p.n, f"{p.n:,} in {p.trials} trial{'s' if p.trials != 1 else ''}"),
        status=r.cell.status)
