#!/usr/bin/env python3
"""How close is an accessbench worker to PostgreSQL's own client? pgbench and a worker run
the same one-statement loop (SELECT 1, one client, unix socket) on the same managed server,
in the same protocol modes, interleaved round by round; the script prints each one's time
per statement and the ratio worker/pgbench with a 95% bootstrap interval (rounds paired).

    .venv/bin/python bench/pgbench_vs_libpq.py [--method c-libpq] [--rounds 7] [--ops 20000] [--busy-core]

pgbench's figure is 1 / its tps "without initial connection time"; the worker's is
elapsed / n from its own timed loop. Target for c-libpq: within 5% of pgbench.

Two things to know when reading the result on a virtual machine:
- one-row round trips are dominated by how fast an idle CPU wakes up (the `haltpoll` idle
  driver makes the same loop 20 µs or 70 µs per statement); --busy-core keeps the other core
  busy for the whole measurement so that neither client's CPU idles, which shows the cost
  without that effect;
- pgbench's per-transaction log (-l) is not a usable reference at these timescales: it reads
  the clock lazily and logs 0 µs for most transactions that did not wait. Whole-loop
  throughput is what both tools measure the same way.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from accessbench.methods import select
from accessbench.runner.cleanup import interruptible
from accessbench.runner.run import make_workdir
from accessbench.worker_process import WorkerProcess
from accessbench.stats.summary import bootstrap_median_ci
from accessbench.targets.postgresql import ManagedPostgres

MODES = {"prepared": "prepared", "extended": "extended", "simple": "literal"}  # pgbench -M → accessbench mode


def pgbench_ns(server: ManagedPostgres, script: str, mode: str, ops: int) -> float:
    result = subprocess.run(
        [f"{server.bindir}/pgbench", "-n", "-c", "1", "-j", "1", "-t", str(ops), "-M", mode, "-f", script,
         "-h", server.sockdir, "-p", str(server.port), "-U", "accessbench", "accessbench"],
        capture_output=True, text=True, check=True,
    )
    tps = float(re.search(r"tps = ([0-9.]+) \(without initial connection time\)", result.stdout).group(1))
    return 1e9 / tps


def worker_ns(worker: WorkerProcess, mode: str, ops: int) -> float:
    answer = worker.request({"op": "step", "kind": "exec", "sql": "SELECT 1", "params": [], "mode": mode,
                             "iterations": ops, "fetch": True}, 600)
    if not answer.get("ok"):
        sys.exit(f"worker failed: {answer.get('error')}")
    return answer["elapsed_ns"] / answer["n"]


def busy_core(seconds: int) -> subprocess.Popen:
    """A bounded busy loop on another core: it stops by itself after ``seconds``."""
    return subprocess.Popen([sys.executable, "-c", f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", default="c-libpq", help="the accessbench method to compare (default c-libpq)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per mode (default 7)")
    parser.add_argument("--ops", type=int, default=20000, help="statements per measurement (default 20000)")
    parser.add_argument("--busy-core", action="store_true", help="keep another core busy (see above)")
    args = parser.parse_args()
    (method,) = select([args.method])
    if method.missing():
        sys.exit(f"{method.name}: {method.missing()}")

    workdir = make_workdir(None)  # marked as this script's: if it is killed outright, the next run removes it
    os.chmod(workdir, 0o755)
    server = ManagedPostgres()
    process = spinner = None
    try:
        server.start(workdir)
        script = os.path.join(workdir, "select1.sql")
        with open(script, "w") as f:
            f.write("SELECT 1;\n")
        os.chmod(script, 0o644)
        process = WorkerProcess(method.command(), os.path.join(workdir, "worker.log"))
        spinner = busy_core(900) if args.busy_core else None
        process.request({"op": "hello"}, 30)
        process.request({"op": "open", "endpoint": server.endpoint("unix"), "options": {}, "clients": 1}, 30)
        times: dict[tuple[str, str], list[float]] = {}
        for mode, ours in MODES.items():  # warm both up once, untimed
            pgbench_ns(server, script, mode, args.ops // 10)
            worker_ns(process, ours, args.ops // 10)
        for r in range(args.rounds):
            for mode, ours in MODES.items():
                times.setdefault(("pgbench", mode), []).append(pgbench_ns(server, script, mode, args.ops))
                times.setdefault((method.name, mode), []).append(worker_ns(process, ours, args.ops))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        print(f"SELECT 1, one client, unix socket, {args.ops:,} statements × {args.rounds} interleaved rounds"
              f"{', another core kept busy' if spinner else ''}")
        print(f"  {'mode':10} {'pgbench µs':>11} {method.name + ' µs':>18} {'ratio':>7}  95% CI of ratio")
        missed = 0
        for mode in MODES:
            base, ours = np.array(times[("pgbench", mode)]), np.array(times[(method.name, mode)])
            ratio = ours / base  # paired by round: both saw the same moment of the machine
            low, high = bootstrap_median_ci(ratio)
            verdict = "within 5%" if 0.95 <= np.median(ratio) <= 1.05 else "OUTSIDE 5%"
            missed += verdict != "within 5%"
            print(f"  {mode:10} {np.median(base) / 1000:11.2f} {np.median(ours) / 1000:18.2f} "
                  f"{np.median(ratio):7.3f}  [{low:.3f}–{high:.3f}]  {verdict}")
    finally:
        if spinner:
            spinner.kill()
        if process is not None:
            process.close()
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)  # the server's data and the worker's log
    return 1 if missed else 0


if __name__ == "__main__":
    interruptible(main)  # a kill, like Ctrl-C, stops the server and removes its data
