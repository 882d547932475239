"""The export's schema, as pydantic models: version 1. A field is never renamed or given a new
meaning within a version; additions bump the minor number in docs only if a reader could
trip over them. `schema_json()` is the published JSON Schema (docs/export-schema-v1.json)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..stats.cells import CellResult, analyse
from ..stats.stability import flags
from ..store import model as stored
from ..store.model import StoredRun

SCHEMA_VERSION = 1


class FigureSummary(BaseModel):
    """The main figure (units per second), one value per trial."""

    n: int = Field(description="timed trials")
    median: float
    ci_low: float | None = Field(description="95% percentile-bootstrap CI of the median, low end (null with one "
                                             "trial: no interval)")
    ci_high: float | None
    min: float
    max: float = Field(description="best of N (study S1's rule)")
    mean: float
    sd: float
    cv: float = Field(description="sd / mean")


class TimePerUnit(BaseModel):
    """Elapsed time per unit (ns), one value per trial: study S3's mean, min and max."""

    mean: float
    min: float
    max: float


class Latency(BaseModel):
    """Per-operation latency over every recorded operation of every trial, ns (exact)."""

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    p99_9: float | None = None
    max: float | None = None


class CellFlag(BaseModel):
    kind: Literal["wide", "unstable", "short", "few", "outlier", "client"]
    text: str


class HostPart(BaseModel):
    """A client host's part of a trial under --cluster (docs/cluster.md)."""

    host: str
    processes: int
    clients: int
    n: int = Field(description="operations its clients ran")
    cpu_ns: int = Field(description="its client processes' CPU during the trial, read in clock ticks")
    wall_ns: int = Field(description="from the barrier to the host's last answer")
    cpus: float = Field(description="what the host has: its CPU limit, or the processors its clients may use")
    busy: float | None = Field(description="cpu_ns / (cpus × wall_ns), to two decimals")
    barrier_late_ns: int | None = Field(description="how late the host woke for the barrier, in its own clock")
    clock_offset_ns: int = Field(description="its clock minus the runner's, measured before the run")
    clock_uncertainty_ns: int = Field(description="± half the round trip the offset was read in")


class Sampled(BaseModel):
    n: int = Field(description="requests split: those of the one of the load's connections the tier worker drove "
                               "itself, whose answers' Server-Timing it read (tier/sampler.py)")
    db_ns: int = Field(description="their time in the database driver, summed (the pages' Server-Timing db)")
    app_ns: int = Field(description="their time in the whole page, summed (Server-Timing app)")
    latency_ns: int = Field(description="their round trips as that connection saw them, summed")


class Trial(BaseModel):
    seq: int
    started_at: str
    n: int = Field(description="operations (or connections) timed")
    rows: int
    elapsed_ns: int
    user_ns: int | None = Field(None, description="worker CPU in user mode during the trial")
    sys_ns: int | None = None
    server_ns: int | None = Field(None, description="the server's CPU during the trial (whose: server_scope)")
    first_op_ns: int | None = None
    round_trips: int | None = Field(None, description="counted by the latency proxy on tcp+DELAY paths")
    bytes_to_server: int | None = None
    bytes_to_client: int | None = None
    late: int | None = Field(None, description="open loop: operations started over 1 ms after their intended start")
    skipped: int | None = Field(None, description="open loop: operations not started (too late)")
    processes: int | None = Field(None, description="under load: worker processes that drove the clients")
    per_client: list[dict[str, int]] | None = Field(None, description="under load: [{n, elapsed_ns}] per client")
    server_scope: str | None = Field(None, description="whose CPU server_ns is: backends (the serving backends') "
                                                       "or server (the whole managed server's, when those are not named)")
    start_rss_bytes: int | None = Field(None, description="the worker's resident set just before the trial")
    peak_rss_bytes: int | None = Field(None, description="the worker's largest resident set during the trial (VmHWM)")
    per_host: list[HostPart] | None = Field(None, description="--cluster: each client host's part of the trial")
    sampled: Sampled | None = Field(None, description="a page of TechEmpower's tests: the requests of one of the "
                                                      "load's connections, and where their time went (tier/sampler.py)")


class Cell(BaseModel):
    variant: str
    step: str
    step_index: int
    kind: str
    mode: str | None
    description: str | None
    target: str
    path: str
    method: str
    clients: int = Field(1, description="clients at once (steps under load)")
    policy: str = Field("persistent", description="connection policy: persistent, per-request or pooled")
    rate: float | None = Field(None, description="open loop: intended operations per second, all clients")
    sweep: str | None = Field(None, description="the [[steps]] entry this step came from when it varies clients "
                                                "or rate (its name as written); cells of one sweep form curves")
    sweep_series: str | None = Field(None, description="within a sweep, the step's other varied values "
                                                       "(e.g. policy=pooled): one curve per method, path and series")
    status: Literal["planned", "ok", "mismatch", "unsupported", "error", "timeout"]
    message: str | None
    api: str | None = Field(None, description="raw: a layer method ran the step through its raw-SQL API, not its "
                                              "query builder or ORM API (a statement of no shape)")
    statements_per_op: float | None = Field(None, description="statements the verification pass sent per "
                                                              "operation, as the worker counted them (round trips)")
    parents_per_op: float | None = Field(None, description="load steps: the parent rows each load reads")
    unit: str = Field(description="what the figure counts per second: connections, rows or ops")
    figure: FigureSummary | None
    time_per_unit_ns: TimePerUnit | None
    seconds_per_1000: float | None = Field(description="study S2's figure: 1,000 / median figure")
    latency_ns: Latency
    client_cpu_per_op_ns: float | None
    server_cpu_per_op_ns: float | None
    wait_per_op_ns: float | None
    round_trips_per_op: float | None
    bytes_per_op: float | None
    bytes_per_row: float | None = Field(None, description="bytes to the client per row read, counted by the latency "
                                                          "proxy (tcp+DELAY paths)")
    peak_rss_bytes: float | None = Field(None, description="the worker's peak resident set in a trial, median")
    rss_growth_bytes: float | None = Field(None, description="that peak over the resident set at the trial's "
                                                             "start, median: what the trial's reading added")
    flags: list[CellFlag]
    trials: list[Trial]


class Method(BaseModel):
    method: str
    language: str | None
    runtime: str | None
    driver: str | None
    driver_version: str | None
    settings: dict[str, Any]
    capabilities: dict[str, Any]


class Target(BaseModel):
    target: str
    dbms: str
    managed: bool
    server_version: str | None
    settings: dict[str, Any]


class Run(BaseModel):
    id: str
    status: str
    started_at: str
    finished_at: str | None
    message: str | None
    suite: str
    suite_source: str
    suite_text: str
    settings: dict[str, Any]
    environment: dict[str, Any]
    accessbench_version: str


class Export(BaseModel):
    """One run, whole."""

    schema_: Literal["accessbench-export"] = Field("accessbench-export", alias="schema")
    schema_version: Literal[1] = SCHEMA_VERSION
    run: Run
    targets: list[Target]
    methods: list[Method]
    cells: list[Cell]

    model_config = {"populate_by_name": True}


# The cell's own fields, as the store holds them; the rest are its figures.
_AS_STORED = [k for k in Cell.model_fields if k in stored.Cell.columns()]


def _cell(r: CellResult, trials: list[stored.Trial]) -> Cell:
    p = r.percentiles or {}
    return Cell(
        **{k: getattr(r.cell, k) for k in _AS_STORED}, unit=r.unit,
        figure=FigureSummary(**{k: getattr(r.rate, k) for k in FigureSummary.model_fields}) if r.rate else None,
        time_per_unit_ns=TimePerUnit(mean=r.unit_ns.mean, min=r.unit_ns.min, max=r.unit_ns.max) if r.unit_ns else None,
        seconds_per_1000=r.seconds_per_1000,
        latency_ns=Latency(p50=p.get(50.0), p90=p.get(90.0), p99=p.get(99.0), p99_9=p.get(99.9), max=p.get(100.0)),
        client_cpu_per_op_ns=r.cpu_per_op_ns, server_cpu_per_op_ns=r.server_cpu_per_op_ns,
        wait_per_op_ns=r.wait_per_op_ns, round_trips_per_op=r.round_trips_per_op, bytes_per_op=r.bytes_per_op,
        bytes_per_row=r.bytes_per_row, peak_rss_bytes=r.peak_rss_bytes, rss_growth_bytes=r.rss_growth_bytes,
        flags=[CellFlag(kind=f.kind, text=f.text) for f in flags(r)],
        trials=[_trial(t) for t in trials],
    )


def _trial(t: stored.Trial) -> Trial:
    return Trial(**{k: getattr(t, k) for k in Trial.model_fields})


def build(stored_run: StoredRun) -> Export:
    run = stored_run.run
    return Export(
        run=Run(**{k: getattr(run, k) for k in Run.model_fields if k != "accessbench_version"},
                accessbench_version=run.version),
        targets=[Target(**{k: getattr(t, k) for k in Target.model_fields}) for t in stored_run.targets],
        methods=[Method(**{k: getattr(m, k) for k in Method.model_fields}) for m in stored_run.methods],
        cells=[_cell(r, stored_run.trials.get(r.cell.id, [])) for r in analyse(stored_run)],
    )


def schema_json() -> str:
    """The JSON Schema of version 1, as published in docs/export-schema-v1.json."""
    return json.dumps(Export.model_json_schema(by_alias=True), indent=2, ensure_ascii=False) + "\n"

