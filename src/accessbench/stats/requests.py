"""Where a loaded page's requests spent their time, from the requests sampled beside the load
(tier/sampler.py): per request, the database's time, the page's own and neither's.

Each sampled request's parts add up to its own round trip, as the sampling client saw it: the
database (``db``), the page's own (``app`` − ``db``) and neither's (round trip − ``app``). Beside
it stands the load's own mean round trip, from the load generator's counts: C connections, each
one request at a time with no pause, that answered n requests in t seconds waited C·t/n each
(Little's law for a closed loop). The sampled requests run a little longer: each is one more
request in the system (where requests queue on one connection, as Node's pages do, it waits
behind all of the load's), from one more process on a busy machine. The sums are pooled over a
cell's trials (each request weighs the same, whichever trial it fell in). Means, not medians:
only means add up, and "where the time went" is a sum. The pages time themselves to the
microsecond (their Server-Timing header).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store.model import Trial


@dataclass(frozen=True)
class RequestParts:
    n: int                # requests sampled, over every trial of the cell
    trials: int           # the trials they came from
    db_ns: float          # mean time in the database driver
    app_ns: float         # mean time in the whole page (the database's included)
    latency_ns: float     # mean round trip as the sampling client saw it
    load_ns: float        # the load's own mean round trip (Little's law), over the same trials
    failed: int           # sampled requests without an answer or a Server-Timing header

    @property
    def page_ns(self) -> float:
        """The page's own time: its language, framework and encoding, the database's left out."""
        return self.app_ns - self.db_ns

    @property
    def outside_ns(self) -> float:
        """Neither's: the app server handing the request to a process and the answer back, the
        HTTP exchange, waiting for a free process."""
        return self.latency_ns - self.app_ns

    @property
    def db_share(self) -> float:
        """The database's part of the round trip."""
        return self.db_ns / self.latency_ns if self.latency_ns else 0.0


def parts(trials: list[Trial], clients: int) -> RequestParts | None:
    """The cell's sampled requests pooled, or None where no trial sampled any; ``clients``:
    the load's connections."""
    kept = [t for t in trials if t.sampled and t.sampled.get("n")]
    if not kept:
        return None
    n = sum(t.sampled["n"] for t in kept)
    mean = lambda key: sum(t.sampled[key] for t in kept) / n  # noqa: E731
    round_trip = clients * sum(t.elapsed_ns for t in kept) / sum(t.n for t in kept)
    return RequestParts(n, len(kept), mean("db_ns"), mean("app_ns"), mean("latency_ns"), round_trip,
                        sum(t.sampled.get("failed", 0) for t in kept))
