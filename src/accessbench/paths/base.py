"""What every path kind answers, and the pieces of path names they share.

A path is one way bytes travel between a worker and a target. ``paths.parse(name)`` gives the
path of a name, not started: enough for selection and planning (what it rides on, whether it
can run here, its added delay). The runner makes one per target it is measured on, starts
the kind's paths of that target together, gives each worker the path's endpoint (and runs the
worker inside what the path needs), reads the path's counters around each trial, and stops it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from .floor import NoFloor
from .tls import Tls, split

_DURATION = r"(\d+(?:\.\d+)?)(us|µs|ms)"


def microseconds(number: str, unit: str) -> float:
    return float(number) * (1000 if unit.lower() == "ms" else 1)


class Notes(Protocol):
    def note(self, text: str) -> None: ...


@dataclass
class PathRun:
    """What a path is started with: the run's work directory (logs, configuration), where to
    say what it is doing, and a count of links made so far (each needs its own addresses)."""

    workdir: str
    progress: Notes
    links: int = field(default=0)


class Path:
    """One path to one target. Subclasses are the path kinds (one module each)."""

    forms: ClassVar[str]          # the names it accepts, for the error about a bad one
    help: ClassVar[str]           # the names it accepts and what they are, for --help
    setting: ClassVar[str | None] = None  # the key its description has in the target's settings
    server_cpu_known: ClassVar[bool] = True  # the backend pid a worker is told is the server's
    runs: ClassVar[str] = ""      # what a started path keeps running ("latency proxy"), if anything
    # A pooler between workers and server: the client connections it serves at once (None: as
    # many as come; more wait in its queue), and the server connections it may hold for them
    # (taken from the server's own). The runner keeps no more workers open on it than that.
    capacity: int | None = None
    server_connections: int = 0

    def __init__(self, name: str, base: str, delay_us: float = 0.0, jitter_us: float = 0.0,
                 bandwidth: float | None = None) -> None:
        self.name = name
        self.base = base              # inproc | unix | tcp | netem | pooler | pgpool
        self.delay_us = delay_us      # added one way
        self.jitter_us = jitter_us
        self.bandwidth = bandwidth    # bytes per second, each direction
        self.target: str | None = None  # the target's name, once started for it
        self.running: Any = None        # what start made (it has a stop()), until stopped
        self.floor_parts: list[Any] = []  # what floor() started (a sender, its proxy), until stopped
        self.tls: Tls | None = None       # +tls…: the driver connects over TLS as this says (paths/tls.py)
        self.compress = False             # +compress: the MariaDB protocol's compression

    def carries(self) -> str | None:
        """Why this kind cannot carry its ``+tls`` or ``+compress`` (one line), or None."""
        if self.tls and self.base != "tcp" and self.rides_on != "tcp":
            return "TLS rides on TCP: tcp, tcp+DELAY, pooler and pgpool paths (unix and inproc carry no TLS)"
        if self.compress and self.base == "inproc":
            return "in process nothing crosses a wire to compress"
        return None

    @property
    def plain(self) -> str:
        """The name of this path without TLS and compression: the twin a TLS cell is read beside."""
        return split(self.name)[0]

    @classmethod
    def parse(cls, name: str) -> Path | None:
        """The path of this kind named ``name``, or None when the name is not of this kind."""
        raise NotImplementedError

    @property
    def proxied(self) -> bool:
        return False

    @property
    def rides_on(self) -> str:
        """The path a target must offer for this one."""
        return self.base

    def missing(self) -> str | None:
        """Why this path cannot run on this machine (one line), or None."""
        return None

    def refuses(self, target: Any) -> str | None:
        """Why this path cannot reach ``target`` (one line), or None: the target must offer the
        path it rides on, and, for kinds that need the server's help, give it (``Target.helps``)."""
        if self.rides_on not in target.paths:
            return f"offers paths {', '.join(target.paths)}, not {self.name}"
        if self.needs and self.base not in target.helps:
            return self.needs
        if self.tls and "tls" not in target.helps:
            return ("TLS paths need a server accessbench manages: an external server's TLS is its URL's own "
                    "(sslmode=…, sslrootcert=…), measured on its tcp path")
        if self.tls and self.tls.direct:  # PostgreSQL 17's handshake: the target says whether its server has it
            why = getattr(target, "direct_tls", "sslnegotiation=direct is PostgreSQL's (17 and later)")
            if why:
                return why
        if self.compress and target.dbms != "mariadb":
            return f"+compress is the MariaDB protocol's compression; {target.dbms}'s protocol has none"
        return None

    needs: ClassVar[str] = ""  # what a target must be to help this kind, where it needs help

    # the run's life
    @classmethod
    def start_all(cls, paths: list[Path], target: Any, run: PathRun) -> dict[str, Any]:
        """Start this kind's paths to a target (before any worker); what to add to the
        target's stored settings. A failure half-way leaves each path stoppable."""
        for path in paths:
            path.target = target.name
            path.start(target, run)
        return {}

    def start(self, target: Any, run: PathRun) -> None:
        pass

    def holds(self) -> str | None:
        """What it keeps running for the run (said if stopping it fails), or None."""
        return f"the {self.runs} for {self.target}/{self.name}" if self.running else None

    def stop(self) -> None:
        """Safe after a failed or partial start, and twice."""
        while self.floor_parts:
            self.floor_parts.pop().stop()
        if self.running:
            self.running.stop()
            self.running = None

    def log_mark(self) -> Any:
        """Where what the path keeps running (a pooler) has logged up to now, or None."""
        return None

    def said_since(self, mark: Any) -> str | None:
        """What it logged as a warning or an error since ``mark`` (one line), or None: added to
        a cell's error, as the pooler's own words (a child that died, a client refused)."""
        return None

    # what workers and trials see
    def endpoint(self, target: Any) -> dict[str, Any]:
        """The connection parameters a worker on this path is given: its kind's, with the TLS
        and compression it asks for."""
        endpoint = self.reach(target)
        if self.tls:
            endpoint.update(self.tls.endpoint(target.authority))
        if self.compress:
            endpoint["compress"] = True
        return endpoint

    def reach(self, target: Any) -> dict[str, Any]:
        """Where this kind's workers connect to: the target's own endpoint of the path it rides on."""
        return target.endpoint(self.base)

    def command(self, argv: list[str]) -> list[str]:
        """The worker's command as run on this path."""
        return argv

    def floor(self, directory: str, run: PathRun) -> dict[str, Any]:
        """Where a floor worker reads the raw bytes of ``directory``'s files along this path
        (paths/floor.py): started on first use, stopped with the path. A kind with no wire
        of its own to measure raises ``NoFloor`` with why."""
        raise NoFloor(f"{self.name}: the wire's floor is measured on tcp, unix and tcp+DELAY paths")

    def counters(self, floor: bool = False) -> dict[str, int] | None:
        """Totals since it started (round trips, bytes each way) where the path counts them;
        with ``floor``, those of the path its floor sender is reached by."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)
