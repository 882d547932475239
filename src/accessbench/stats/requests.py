"""Where a loaded page's requests spent their time, from the requests of the one of the load's
connections the tier worker drives itself (tier/sampler.py): per request, the
database's time, the page's own and neither's.

The round trip is the load's own mean, from the load generator's counts: C connections, each
one request at a time with no pause, that answered n requests in t seconds waited C·t/n each
(Little's law for a closed loop; the requests still waiting when the trial ended count too).
The database's time and the page's own are the sampled requests' means: they are measured
inside the page, where one connection's requests fare as any other's. What is left of the round
trip is neither's: the app server handing the request to a process and the answer back, HTTP,
waiting for a free process. That wait is not read from the sampled requests' own round trips
(kept, not shown): under Apache, with more connections than prefork processes, a connection
holds a process for a hundred requests (MaxKeepAliveRequests) and then waits behind the others
for the next, so one connection's waits in a short trial are luck, not a sample. The sums are
pooled over a cell's trials (each request weighs the same, whichever trial it fell in). Means,
not medians: only means add up, and "where the time went" is a sum. The pages time themselves
to the microsecond (their Server-Timing header).
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
    latency_ns: float     # the sampled requests' own mean round trip (kept, not split: see above)
    load_ns: float        # the load's mean round trip (Little's law), over the same trials

    @property
    def page_ns(self) -> float:
        """The page's own time: its language, framework and encoding, the database's left out."""
        return self.app_ns - self.db_ns

    @property
    def outside_ns(self) -> float:
        """Neither's: the rest of the load's round trip (the app server handing the request to
        a process and the answer back, the HTTP exchange, waiting for a free process)."""
        return self.load_ns - self.app_ns

    @property
    def db_share(self) -> float:
        """The database's part of the load's round trip."""
        return self.db_ns / self.load_ns if self.load_ns else 0.0


def parts(trials: list[Trial], clients: int) -> RequestParts | None:
    """The cell's sampled requests pooled, or None where no trial sampled any; ``clients``:
    the load's connections."""
    kept = [t for t in trials if t.sampled and t.sampled.get("n")]
    if not kept:
        return None
    n = sum(t.sampled["n"] for t in kept)
    mean = lambda key: sum(t.sampled[key] for t in kept) / n  # noqa: E731
    round_trip = clients * sum(t.elapsed_ns for t in kept) / sum(t.n for t in kept)
    return RequestParts(n, len(kept), mean("db_ns"), mean("app_ns"), mean("latency_ns"), round_trip)
