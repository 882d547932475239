"""A stored run as typed records: the run, its targets, methods, cells and timed trials, as the
store reads them back (``Store.load``) and as statistics, reports and exports take them.

One record per table, one field per column, with the column's name; JSON columns arrive
decoded (a run's settings, a trial's per-client parts), and a trial's latencies stay the
compressed blob until someone asks for them (``StoredRun.latencies``). A record may also be
read by column name (``cell["status"]``), as a database row is, so that tests and templates
written against rows read it alike; the package itself reads attributes.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from ..protocol.histogram import Histogram


class Record:
    """A row of the store, typed. ``from_row`` takes the columns this version knows (a store
    from a newer accessbench may have more) and decodes the JSON ones."""

    __slots__ = ()
    JSON: ClassVar[tuple[str, ...]] = ()

    @classmethod
    @functools.cache
    def columns(cls) -> frozenset[str]:
        return frozenset(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_row(cls, row: Mapping[str, Any]):
        known = cls.columns()
        values = {k: row[k] for k in row.keys() if k in known}
        for key in cls.JSON:
            if isinstance(values.get(key), str):
                values[key] = json.loads(values[key])
        return cls(**values)

    def __getitem__(self, column: str) -> Any:
        if column not in self.columns():
            raise KeyError(column)
        return getattr(self, column)


@dataclass(frozen=True, slots=True)
class Run(Record):
    JSON = ("settings", "environment")

    id: str
    started_at: str
    status: str                      # running | complete | interrupted | failed
    suite: str                       # the suite's name (StoredRun.suite is the suite itself)
    suite_source: str
    suite_text: str
    settings: dict[str, Any]
    environment: dict[str, Any]
    version: str                     # accessbench's
    finished_at: str | None = None
    message: str | None = None
    pid: int | None = None

    def parse_suite(self):
        """The run's suite, parsed from the text stored with it, at the run's --quick and --rows:
        the one place stored suite text is read (``StoredRun.suite`` keeps what it returns)."""
        from ..suite.loader import parse

        return parse(self.suite_text, self.suite_source, quick=bool(self.settings.get("quick")),
                     rows=self.settings.get("rows"))


@dataclass(frozen=True, slots=True)
class Target(Record):
    JSON = ("settings",)

    target: str                      # as --target named it (a URL without its password)
    dbms: str
    managed: bool
    server_version: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "managed", bool(self.managed))  # SQLite stores 0/1


@dataclass(frozen=True, slots=True)
class Method(Record):
    JSON = ("settings", "capabilities")

    method: str
    language: str | None = None
    runtime: str | None = None
    driver: str | None = None
    driver_version: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)     # as the worker's hello reported them
    capabilities: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""


@dataclass(frozen=True, slots=True)
class Cell(Record):
    """One (variant, step, target, path, method) of a run: what it is, and how it ended."""

    variant: str
    step: str
    target: str
    path: str
    method: str
    status: str                      # planned | ok | mismatch | unsupported | error | timeout
    step_index: int = 0
    kind: str = "exec"
    mode: str | None = None
    description: str = ""
    message: str | None = None
    clients: int = 1
    policy: str = "persistent"
    rate: float | None = None        # open loop: intended operations per second, all clients
    sweep: str | None = None
    sweep_series: str | None = None
    checksum: str | None = None      # of the rows the verification pass read
    check_checksum: str | None = None
    verify_rows: int | None = None
    verify_values: int | None = None
    cold_first_op_ns: int | None = None
    warmups: int | None = None
    api: str | None = None           # "raw": a layer ran the step through its raw-SQL API
    statements_per_op: float | None = None  # statements the verification pass sent, per operation (round trips)
    parents_per_op: float | None = None     # load steps: the parent rows each operation loads
    id: int = 0
    run_id: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """What names a cell in its run (UNIQUE in ``cells``): variant, target, path, method, step."""
        return (self.variant, self.target, self.path, self.method, self.step)


@dataclass(frozen=True, slots=True)
class Trial(Record):
    """A timed trial as it ended (warmups are stored too, but not read back)."""

    JSON = ("server_pids", "histogram", "per_client", "per_host", "sampled")

    cell_id: int
    seq: int
    n: int                           # operations (or connections) timed
    rows: int
    elapsed_ns: int
    started_at: str = ""
    phase: str = "trial"
    values_read: int | None = None
    user_ns: int | None = None
    sys_ns: int | None = None
    first_op_ns: int | None = None
    server_pids: list[int] | None = None
    latencies: bytes | None = None   # zlib of little-endian u64 nanoseconds per operation
    server_ns: int | None = None
    server_scope: str | None = None  # whose CPU server_ns is: backends | server
    round_trips: int | None = None
    bytes_to_server: int | None = None
    bytes_to_client: int | None = None
    histogram: dict[str, Any] | None = None  # a loaded trial's merged latency histogram
    late: int | None = None
    skipped: int | None = None
    per_client: list[dict[str, int]] | None = None
    processes: int | None = None
    start_rss_bytes: int | None = None
    peak_rss_bytes: int | None = None
    per_host: list[dict[str, Any]] | None = None
    sampled: dict[str, int] | None = None  # a page's requests split on one of the load's connections: n, sums (tier/sampler.py)
    id: int = 0


@dataclass
class StoredRun:
    """A run as read back from the store: what reports are made from."""

    run: Run
    targets: list[Target]
    methods: list[Method]
    cells: list[Cell]
    trials: dict[int, list[Trial]] = field(default_factory=dict)  # cell id → timed trials
    profiles: list[dict] = field(default_factory=list)  # run --profile: Store.profiles' rows

    @functools.cached_property
    def suite(self):
        """The run's suite, parsed once."""
        return self.run.parse_suite()

    def histogram(self, cell_id: int) -> Histogram | None:
        """The cell's loaded trials' latency histograms merged, or None for plain trials."""
        parts = [t.histogram for t in self.trials.get(cell_id, []) if t.histogram]
        if not parts:
            return None
        merged = Histogram()
        for part in parts:
            merged.merge(Histogram.from_json(part))
        return merged

    def latencies(self, cell_id: int) -> np.ndarray:
        blobs = [t.latencies for t in self.trials.get(cell_id, []) if t.latencies]
        if not blobs:
            return np.zeros(0, dtype="<u8")
        return np.concatenate([np.frombuffer(zlib.decompress(b), dtype="<u8") for b in blobs])
