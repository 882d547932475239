"""The exports' writers. JSON is the whole run; CSV is flat: one row per cell (the summary) or,
with ``trials=True``, one row per timed trial with its cell's identity."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from .model import SCHEMA_VERSION, Cell, Export

CELL_COLUMNS = ["variant", "step", "step_index", "kind", "mode", "target", "path", "method", "status", "unit"]
SUMMARY_COLUMNS = [
    "trials", "median", "ci_low", "ci_high", "min", "max", "mean", "sd", "cv",
    "time_per_unit_mean_ns", "time_per_unit_min_ns", "time_per_unit_max_ns", "seconds_per_1000",
    "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "max_ns", "client_cpu_per_op_ns", "server_cpu_per_op_ns",
    "wait_per_op_ns", "round_trips_per_op", "bytes_per_op", "flags",
    "clients", "policy", "rate",  # steps under load (added within version 1, at the end)
    "sweep", "sweep_series",      # steps that vary clients or rate (likewise)
    "bytes_per_row", "peak_rss_bytes", "rss_growth_bytes",  # bytes and memory beside time (likewise)
]
TRIAL_COLUMNS = ["seq", "started_at", "n", "rows", "elapsed_ns", "user_ns", "sys_ns", "server_ns", "first_op_ns",
                 "round_trips", "bytes_to_server", "bytes_to_client", "late", "skipped", "processes",
                 "server_scope", "start_rss_bytes", "peak_rss_bytes"]  # added within version 1, at the end


def _summary(cell: Cell) -> list:
    f, t, lat = cell.figure, cell.time_per_unit_ns, cell.latency_ns
    figure = [f.n, f.median, f.ci_low, f.ci_high, f.min, f.max, f.mean, f.sd, f.cv] if f else [None] * 9
    times = [t.mean, t.min, t.max] if t else [None] * 3
    return [*figure, *times, cell.seconds_per_1000, lat.p50, lat.p90, lat.p99, lat.p99_9, lat.max,
            cell.client_cpu_per_op_ns, cell.server_cpu_per_op_ns, cell.wait_per_op_ns, cell.round_trips_per_op,
            cell.bytes_per_op, ";".join(sorted({flag.kind for flag in cell.flags})), cell.clients, cell.policy,
            cell.rate, cell.sweep, cell.sweep_series, cell.bytes_per_row, cell.peak_rss_bytes, cell.rss_growth_bytes]


# A figure is a ratio of counts read in nanoseconds over trials of milliseconds or more: six
# significant digits hold all that was measured; beyond them is binary-float noise
# (159773.69999999998), which an export does not pass on.
DIGITS = 6


def meaningful(value: Any) -> Any:
    """Floats (in lists and dicts too) rounded to the digits measured; anything else as it is."""
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, dict):
        return {k: meaningful(v) for k, v in value.items()}
    if isinstance(value, list):
        return [meaningful(v) for v in value]
    return value


def to_json(export: Export) -> str:
    return json.dumps(meaningful(export.model_dump(mode="json", by_alias=True)), indent=2, ensure_ascii=False) + "\n"


def to_csv(export: Export, trials: bool = False) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # The first column names the run and schema so a CSV file stands on its own.
    writer.writerow(["run_id", "schema_version", *CELL_COLUMNS, *(TRIAL_COLUMNS if trials else SUMMARY_COLUMNS)])
    for cell in export.cells:
        identity = [export.run.id, SCHEMA_VERSION, *(getattr(cell, c) for c in CELL_COLUMNS)]
        if trials:
            for t in cell.trials:
                writer.writerow([*identity, *(meaningful(getattr(t, c)) for c in TRIAL_COLUMNS)])
        else:
            writer.writerow([*identity, *("" if v is None else meaningful(v) for v in _summary(cell))])
    return out.getvalue()
