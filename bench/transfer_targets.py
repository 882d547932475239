#!/usr/bin/env python3
"""The transfer suite's two targets, as ratios measured in one run on one managed PostgreSQL:

1. speed: the fastest method's full read of the lineitem-shaped table (rows/s) against the
   server's own `COPY lineitem TO '/dev/null'` on the same table — what the server can produce
   when nothing crosses a wire. Target: at least 90%.
2. memory: each method's peak memory growth during one read (its worker's VmHWM over its
   resident set at the read's start: runner/memory.py) against the size of the result in the
   method's own native form (the worker's `result_bytes`: an Arrow table's buffers, a Python
   driver's row objects). Target: at most 3×. Methods whose worker cannot tell that size are
   listed as not measured.

    .venv/bin/python bench/transfer_targets.py [--rows 1000000] [--rounds 5] [--path tcp]
        [--method c-libpq,py-psycopg,...]

Each round reads once with every method and runs the server's COPY once, in turn, so the host's
drift touches them alike; a figure is the median over rounds. Methods default to the transfer
group's that reach PostgreSQL (the wire's floor aside).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from accessbench import formatting as fmt
from accessbench.data.generate import table_rows
from accessbench.methods import select
from accessbench.runner import memory
from accessbench.runner.worker import WorkerProcess, worker_environment
from accessbench.suite.loader import load
from accessbench.targets.postgresql import ManagedPostgres

SPEED_TARGET, MEMORY_TARGET = 0.90, 3.0
SQL = "SELECT * FROM lineitem"


def step(**extra) -> dict:
    return {"op": "step", "kind": "scan", "sql": SQL, "params": [], "iterations": 1, "fetch": True, **extra}


def ask(worker: WorkerProcess, message: dict) -> dict:
    answer = worker.request(message, 1800)
    if not answer.get("ok"):
        raise RuntimeError(answer.get("error", {}).get("message"))
    return answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of lineitem (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--path", choices=("tcp", "unix"), default="tcp", help="how the workers reach the server")
    parser.add_argument("--method", help="comma-separated methods (default: the transfer group's on PostgreSQL)")
    args = parser.parse_args()
    methods = [m for m in select(args.method.split(",") if args.method else ["transfer"])
               if "postgresql" in m.dbms and m.reads != "floor" and not m.missing()]
    if not methods:
        sys.exit("no method to measure here (see accessbench methods)")
    table = load("transfer").variants[0].tables[0].model_copy(update={"rows": args.rows})

    workdir = tempfile.mkdtemp(prefix="accessbench-bench-")
    os.chmod(workdir, 0o755)
    server = ManagedPostgres()
    workers: dict[str, WorkerProcess] = {}
    try:
        server.start(workdir)
        print(f"loading lineitem: {args.rows:,} rows", file=sys.stderr)
        server.create([table])
        server.load(table, table_rows(table, 2017))
        endpoint = server.endpoint(args.path)
        usable, sizes, failed = [], {}, {}
        for m in methods:
            worker = WorkerProcess(m.command(), os.path.join(workdir, f"{m.name.replace('/', '_')}.log"),
                                   worker_environment(workdir))
            try:
                ask(worker, {"op": "hello"})
                ask(worker, {"op": "open", "endpoint": endpoint, "options": {}, "clients": 1})
                verified = ask(worker, step(verify=True, size=True))  # warms the worker, and sizes the result
                if verified["rows"] != args.rows:
                    raise RuntimeError(f"read {verified['rows']:,} rows of {args.rows:,}")
                sizes[m.name] = verified.get("result_bytes")
                workers[m.name] = worker
                usable.append(m.name)
            except Exception as e:  # noqa: BLE001 — a method that cannot read is listed, not fatal
                failed[m.name] = str(e)
                worker.kill()
        rates: dict[str, list[float]] = {name: [] for name in ["server COPY TO /dev/null", *usable]}
        growth: dict[str, list[int]] = {name: [] for name in usable}
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr)
            start = time.perf_counter_ns()
            server.execute("COPY lineitem TO '/dev/null'")
            rates["server COPY TO /dev/null"].append(args.rows / ((time.perf_counter_ns() - start) / 1e9))
            for name in usable:
                pid = workers[name].proc.pid
                before = memory.start(pid)
                answer = ask(workers[name], step())
                peak = memory.peak(pid)
                rates[name].append(answer["rows"] / (answer["elapsed_ns"] / 1e9))
                if before is not None and peak is not None:
                    growth[name].append(peak - before)
    finally:
        for worker in workers.values():
            worker.close()
        server.stop()

    copy_rate = float(np.median(rates.pop("server COPY TO /dev/null")))
    print(f"\nlineitem, {args.rows:,} rows over {args.path}; the server's own COPY TO '/dev/null': "
          f"{fmt.rate(copy_rate)} rows/s (median of {args.rounds})\n")
    width = max(len(name) for name in [*rates, *failed, "method"])
    print(f"{'method':{width}} {'rows/s':>12} {'× COPY':>7} {'result':>10} {'peak growth':>12} {'× result':>9}")
    worst_memory, over = 0.0, []
    for name in sorted(rates, key=lambda n: -np.median(rates[n])):
        rate = float(np.median(rates[name]))
        grown = float(np.median(growth[name])) if growth[name] else None
        size = sizes.get(name)
        times = grown / size if grown is not None and size else None
        if times is not None:
            worst_memory = max(worst_memory, times)
            if times > MEMORY_TARGET:
                over.append(name)
        print(f"{name:{width}} {fmt.rate(rate):>12} {rate / copy_rate:>7.2f} {fmt.size(size):>10} {fmt.size(grown):>12} "
              f"{(f'{times:.2f}' if times is not None else 'not measured'):>9}")
    for name, why in failed.items():
        print(f"{name:{width}} not measured: {why}")
    best = max(rates, key=lambda n: np.median(rates[n]))
    speed = float(np.median(rates[best])) / copy_rate
    print(f"\nspeed: the fastest, {best}, reads at {speed:.0%} of the server's COPY rate "
          f"(target ≥ {SPEED_TARGET:.0%}): {'met' if speed >= SPEED_TARGET else 'NOT met'}")
    print(f"memory: the largest peak growth is {worst_memory:.2f}× its result (target ≤ {MEMORY_TARGET:g}×): "
          f"{'met' if not over else 'NOT met by ' + ', '.join(over)}")
    return 0 if speed >= SPEED_TARGET and not over else 1


if __name__ == "__main__":
    sys.exit(main())
