#!/usr/bin/env python3
"""The transfer suite's two targets, as ratios measured in one run on one managed PostgreSQL:

1. speed: the fastest method's full read of the lineitem-shaped table (rows/s) against the
   server's own `COPY lineitem TO '/dev/null'` on the same table — what the server can produce
   when nothing crosses a wire. Target: at least 90%, for the fastest method on the fastest
   path. Every path given is measured in the same rounds and shown beside it.
2. memory: each method's peak memory growth during one read (its worker's VmHWM over its
   resident set at the read's start: runner/memory.py) against the size of the result in the
   method's own native form (the worker's `result_bytes`: an Arrow table's buffers, a Python
   driver's row objects). Target: at most 3×. Methods whose worker cannot tell that size (the
   COPY scans decode each value and keep none) are listed as not measured.

    .venv/bin/python bench/transfer_targets.py [--rows 1000000] [--rounds 5] [--path unix,tcp]
        [--method c-libpq,py-psycopg,...]

Each round reads once with every method on every path, and every read is paired with a
server COPY made right beside it (before it in one round, after it in the next): "× COPY" is
the median over rounds of the read's rate over its own COPY's, since the host's speed drifts
between regimes for seconds at a time and two measurements side by side share one. The
verdict is against `COPY … TO '/dev/null'` as written, in text; each read also has a binary
COPY one step further off ("× binary"), the measure of the target's own reference figure (the
best scan at "about 95% of binary COPY"). Methods
default to the transfer group's that reach PostgreSQL (the wire's floor aside); at the
defaults the run takes about 42 minutes on 2 cores.

Where the time went: beside each rate, the CPU the server's backend spent per row (from its
process CPU clock) and the worker's own (getrusage), both in µs. The server's COPY to
/dev/null has no wire; serving a reader over a unix socket the backend spends some 5–15% more
a row (its sends, and waking the reader), over loopback TCP some 20–40% more (it also runs the
receiving side's TCP stack: the kernel does that work in the sender's context), so a fast
reader is held back by the server's CPU, not by its own.

Idle CPUs are kept from halting while it measures, as `accessbench run` does (a PM QoS
request, or idle-priority busy loops where there is no cpuidle driver: accessbench.runner.awake),
as the header says: on a VM whose idle vCPUs halt, every wake-up of the reader by the server
(one per 8 KiB the server sends) also costs the server an interrupt to a halted vCPU, which is
the VM's cost, not the method's.
--allow-idle-halt measures with them halting.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

import numpy as np

from accessbench import formatting as fmt
from accessbench.data.generate import table_rows
from accessbench.methods import select
from accessbench import cputime
from accessbench.runner import memory
from accessbench.runner.awake import KeepAwake
from accessbench.runner.cleanup import interruptible
from accessbench.runner.run import make_workdir
from accessbench.worker_process import WorkerProcess, worker_environment
from accessbench.suite.loader import load
from accessbench.targets.postgresql import ManagedPostgres

SPEED_TARGET, MEMORY_TARGET = 0.90, 3.0
FORMATS = ("text", "binary")  # the server's COPYs beside each read: the verdict's first
SQL = "SELECT * FROM lineitem"


def step(**extra) -> dict:
    return {"op": "step", "kind": "scan", "sql": SQL, "params": [], "iterations": 1, "fetch": True, **extra}


def ask(worker: WorkerProcess, message: dict) -> dict:
    answer = worker.request(message, 1800)
    if not answer.get("ok"):
        raise RuntimeError(answer.get("error", {}).get("message"))
    return answer


def sig3(value: float) -> str:
    """A rate at the precision one run knows it: three significant digits."""
    return f"{float(f'{value:.3g}'):,.0f}" if value >= 100 else f"{value:.3g}"


def per_row(ns: float | None, rows: int) -> str:
    return "—" if ns is None else f"{ns / rows / 1000:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of lineitem (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--path", default="unix,tcp",
                        help="comma-separated paths the workers reach the server by: unix, tcp (default unix,tcp)")
    parser.add_argument("--method", help="comma-separated methods (default: the transfer group's on PostgreSQL)")
    parser.add_argument("--allow-idle-halt", action="store_true",
                        help="do not keep idle CPUs from halting while measuring (see above)")
    args = parser.parse_args()
    paths = [p.strip() for p in args.path.split(",") if p.strip()]
    if not paths or any(p not in ("unix", "tcp") for p in paths):
        parser.error(f"--path {args.path}: give unix, tcp or both (unix,tcp)")
    if args.rows < 1 or args.rounds < 1:
        parser.error("--rows and --rounds must be at least 1")
    methods = [m for m in select(args.method.split(",") if args.method else ["transfer"])
               if "postgresql" in m.dbms and m.reads != "floor" and not m.missing()]
    if not methods:
        sys.exit("no method to measure here (see accessbench methods)")
    table = load("transfer").variants[0].tables[0].model_copy(update={"rows": args.rows})

    workdir = make_workdir(None)  # marked as this script's: if it is killed outright, the next run removes it
    os.chmod(workdir, 0o755)
    server = ManagedPostgres()
    workers: dict[tuple[str, str], WorkerProcess] = {}  # (path, method) → its worker
    awake, how = None, ""
    try:
        server.start(workdir)
        print(f"loading lineitem: {args.rows:,} rows", file=sys.stderr)
        server.create([table])
        server.load(table, table_rows(table, 2017))
        own_backend = server.query("SELECT pg_backend_pid()")[0][0]
        usable, sizes, failed, backends = [], {}, {}, {}
        for path in paths:
            endpoint = server.endpoint(path)
            for m in methods:
                key = (path, m.name)
                worker = WorkerProcess(m.command(), os.path.join(workdir, f"{path}-{m.name.replace('/', '_')}.log"),
                                       worker_environment(workdir))
                try:
                    ask(worker, {"op": "hello"})
                    opened = ask(worker, {"op": "open", "endpoint": endpoint, "options": {}, "clients": 1})
                    if opened.get("server_pid"):  # a reader that connects per read (ConnectorX) has none
                        backends[key] = opened["server_pid"]
                    verified = ask(worker, step(verify=True, size=True))  # warms the worker, and sizes the result
                    if verified["rows"] != args.rows:
                        raise RuntimeError(f"read {verified['rows']:,} rows of {args.rows:,}")
                    sizes[key] = verified.get("result_bytes")
                    workers[key] = worker
                    usable.append(key)
                except Exception as e:  # noqa: BLE001 — a method that cannot read is listed, not fatal
                    failed[key] = str(e)
                    worker.kill()
        copies: dict[str, list[float]] = {f: [] for f in FORMATS}  # every server COPY's rate, by format
        copy_cpu: dict[str, list[int]] = {f: [] for f in FORMATS}  # and its backend's CPU
        rates: dict[tuple[str, str], list[float]] = {key: [] for key in usable}
        server_cpu: dict[tuple[str, str], list[int]] = {key: [] for key in usable}
        client_cpu: dict[tuple[str, str], list[int]] = {key: [] for key in usable}
        growth: dict[tuple[str, str], list[int]] = {key: [] for key in usable}
        # to the COPY beside it, in each format
        ratios: dict[str, dict[tuple[str, str], list[float]]] = {f: {key: [] for key in usable} for f in FORMATS}

        def server_copy(form: str) -> float:
            cpu0 = cputime.process_cpu_ns(own_backend)
            start = time.perf_counter_ns()
            server.execute(f"COPY lineitem TO '/dev/null' (FORMAT {form})")
            rate = args.rows / ((time.perf_counter_ns() - start) / 1e9)
            cpu1 = cputime.process_cpu_ns(own_backend)
            copies[form].append(rate)
            if cpu0 is not None and cpu1 is not None:
                copy_cpu[form].append(cpu1 - cpu0)
            return rate

        def server_copies(order: tuple[str, ...]) -> dict[str, float]:
            return {form: server_copy(form) for form in order}

        awake = None if args.allow_idle_halt else KeepAwake(spin=True)
        how = f"idle CPUs {awake.how if awake else 'may halt (--allow-idle-halt)'}"
        print(how, file=sys.stderr)
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", file=sys.stderr)
            for key in usable:
                # Each read is paired with a server COPY made right next to it, before it in
                # even rounds and after it in odd ones: the host's speed flips between regimes
                # for seconds at a time, and two measurements side by side share one. The
                # verdict's COPY (text) is the read's neighbour; the binary one a step further.
                copy_rate = server_copies(tuple(reversed(FORMATS))) if r % 2 == 0 else None
                pid = workers[key].proc.pid
                before = memory.start(pid)
                backend = backends.get(key)
                cpu0 = cputime.process_cpu_ns(backend) if backend else None
                answer = ask(workers[key], step())
                cpu1 = cputime.process_cpu_ns(backend) if backend else None
                peak = memory.peak(pid)
                if copy_rate is None:
                    copy_rate = server_copies(FORMATS)
                rate = answer["rows"] / (answer["elapsed_ns"] / 1e9)
                rates[key].append(rate)
                for form in FORMATS:
                    ratios[form][key].append(rate / copy_rate[form])
                if cpu0 is not None and cpu1 is not None:
                    server_cpu[key].append(cpu1 - cpu0)
                if before is not None and peak is not None:
                    growth[key].append(peak - before)
                if "user_ns" in answer and "sys_ns" in answer:
                    client_cpu[key].append(answer["user_ns"] + answer["sys_ns"])
    finally:
        if awake is not None:
            awake.close()
        for worker in workers.values():
            worker.close()
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)  # the server's data and the workers' logs
    text, met = report(args, how, paths, copies, copy_cpu, rates, ratios, server_cpu, client_cpu, growth, sizes, failed)
    print(text)
    return 0 if met else 1


def median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def report(args, how, paths, copies, copy_cpu, rates, ratios, server_cpu, client_cpu, growth, sizes,
           failed) -> tuple[str, bool]:
    """The tables (one per path, fastest first) and the two verdicts; whether both targets are met."""
    rows = args.rows
    text, binary = ratios["text"], ratios["binary"]
    lines = [f"\n{how}", f"lineitem, {rows:,} rows; the server's own COPY TO '/dev/null' (medians of its "
             f"{len(copies['text'])} runs in each format, beside the reads):"]
    for form in FORMATS:
        lines.append(f"  {form + ':':8} {sig3(median(copies[form]))} rows/s, its backend's CPU "
                     f"{per_row(median(copy_cpu[form]), rows)} µs a row")
    width = max(len(name) for _, name in [*rates, *failed, ("", "method")])
    worst_memory, over, best = None, [], None
    for path in paths:
        keys = sorted((k for k in rates if k[0] == path), key=lambda k: -median(text[k]))
        lines += [f"\nover {path}:",
                  f"{'method':{width}} {'rows/s':>10} {'× COPY':>7} {'× binary':>9} {'server µs/row':>14} "
                  f"{'client µs/row':>14} {'result':>10} {'peak growth':>12} {'× result':>12}"]
        for key in keys:
            rate = median(rates[key])
            grown = median(growth[key])
            size = sizes.get(key)
            times = grown / size if grown is not None and size else None
            if times is not None:
                worst_memory = max(worst_memory or 0.0, times)
                if times > MEMORY_TARGET:
                    over.append(f"{key[1]} over {path}")
            if best is None or median(text[key]) > median(text[best]):
                best = key
            lines.append(f"{key[1]:{width}} {sig3(rate):>10} {median(text[key]):>7.2f} {median(binary[key]):>9.2f} "
                         f"{per_row(median(server_cpu[key]), rows):>14} {per_row(median(client_cpu[key]), rows):>14} "
                         f"{fmt.size(size):>10} {fmt.size(grown):>12} "
                         f"{(f'{times:.2f}' if times is not None else 'not measured'):>12}")
        for (p, name), why in failed.items():
            if p == path:
                lines.append(f"{name:{width}} not measured: {why}")
    if best is None:
        return "\n".join([*lines, "\nno method read the table: no verdict"]), False
    speed = median(text[best])
    lines.append(f"\nspeed: the fastest, {best[1]} over {best[0]}, reads at {speed:.0%} of the server's COPY rate "
                 f"(target ≥ {SPEED_TARGET:.0%}): {'met' if speed >= SPEED_TARGET else 'NOT met'}")
    # The verdict rests on a median of few pairs; each pair's ratio shows how near the target it sits.
    lines.append(f"       round by round: {', '.join(f'{r:.0%}' for r in text[best])}")
    lines.append(f"       of the server's binary COPY: {median(binary[best]):.0%} "
                 f"(round by round {', '.join(f'{r:.0%}' for r in binary[best])})")
    for path in paths:
        if path != best[0] and any(k[0] == path for k in rates):
            top = max((k for k in rates if k[0] == path), key=lambda k: median(text[k]))
            lines.append(f"       over {path} the fastest, {top[1]}, reads at {median(text[top]):.0%}")
    if worst_memory is None:
        lines.append("memory: no method told its result's size: not measured")
    else:
        lines.append(f"memory: the largest peak growth is {worst_memory:.2f}× its result (target ≤ {MEMORY_TARGET:g}×): "
                     f"{'met' if not over else 'NOT met by ' + ', '.join(over)}")
    return "\n".join(lines), speed >= SPEED_TARGET and not over and worst_memory is not None


if __name__ == "__main__":
    interruptible(main)  # a kill, like Ctrl-C, stops the server and removes its data
