#!/usr/bin/env python3
"""How precise is the default quick run, and how often do two identical runs disagree?

Runs the default `accessbench run --quick` (every default target and method, the precision
target at its default) N times, one after the other, into a store of its own, and measures:

1. precision: each run's wall time and the share of its measured cells whose median's 95% CI
   half-width ended within ±3%, ±5% and ±10% (and the trials a cell took). Goal: at most
   12 minutes, with 80% of cells within ±5%.
2. A/A: each run against the one before it, as `accessbench compare` pairs them: the share of
   cells called different, with the drift floor and by the trials alone (the 3% noise
   threshold). With two runs the floor comes from the paired cells' own scatter (the store is
   fresh); with three or more the first pair calibrates the host, as `compare --calibrate`
   does, and the later pairs are judged with that calibration too, as a user's later
   comparisons on this host would be. Target: at most 5% with the floor (of the later pairs).

    .venv/bin/python bench/quick_precision.py [--runs 3] [--store FILE] [-- RUN OPTIONS ...]

Options after `--` go to every `run` (e.g. `-- --target sqlite --precision 0` to see what the
precision target buys). A run's own output goes to a log, shown when a run fails. At the
defaults (three runs) this takes about 25 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

from accessbench.runner.cleanup import interruptible
from accessbench.runner.run import make_workdir
from accessbench.stats import drift
from accessbench.stats.cells import analyse
from accessbench.stats.compare import ALPHA, NOISE, pair_runs
from accessbench.store import Store

WALL_GOAL_S, WITHIN_GOAL, AA_TARGET = 12 * 60, 0.80, 0.05


def precision_line(run_id: str, wall_s: float, cells) -> tuple[str, float]:
    """One run's figures, and its share of cells within ±5%."""
    widths = np.array([c.half_width for c in cells if c.measured and c.half_width is not None])
    trials = np.array([c.rate.n for c in cells if c.measured and c.rate is not None])
    if not len(widths):
        return f"{run_id}: no measured cell with a CI", 0.0
    within = {limit: float(np.mean(widths <= limit)) for limit in (0.03, 0.05, 0.10)}
    minutes, seconds = divmod(round(wall_s), 60)
    return (f"{run_id}  {minutes} min {seconds:02d} s  {len(widths):>5,} cells  median ±{np.median(widths):.1%}  "
            f"within ±3%: {within[0.03]:.0%}  ±5%: {within[0.05]:.0%}  ±10%: {within[0.10]:.0%}  "
            f"trials a cell: median {np.median(trials):.0f}, max {trials.max()}, {trials.sum():,} in all",
            within[0.05])


def aa_line(a: str, b: str, cells_a, cells_b, calibration: float | None = None) -> tuple[str, float, list[float]]:
    """Two runs of identical settings compared as `compare` does (with this host's calibration,
    when one was made); the share called different, and the paired cells' ratios."""
    pairs, _ = pair_runs(cells_a, cells_b, ALPHA, NOISE)
    if not pairs:
        return f"{a} vs {b}: no cell measured in both", 1.0, []
    ratios = [p.comparison.ratio for p in pairs]
    alone = sum(p.comparison.significant for p in pairs) / len(pairs)
    found = drift.estimate(ratios, NOISE, calibration, 1 if calibration else 0)
    if found.floor > NOISE:
        pairs, _ = pair_runs(cells_a, cells_b, ALPHA, found.floor)
    called = sum(p.comparison.significant for p in pairs) / len(pairs)
    floor = (f"drift floor ±{found.floor:.1%}" if calibration is None else
             f"drift floor ±{found.floor:.1%} (the calibration ±{calibration:.1%}, the pair's own scatter "
             f"±{drift.estimate(ratios, NOISE).floor:.1%})")
    return (f"{a} vs {b}: {len(pairs):,} cells paired; {floor}; median cell moved {found.shift:+.1%}; called "
            f"different: {called:.1%} with the floor, {alone:.1%} by the trials alone", called, ratios)


def main() -> int:
    argv = sys.argv[1:]
    passed = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs to make, one after the other (default 3: a pair "
                        "calibrates, the next is judged with it; 2: judged by their own scatter; 1: precision only)")
    parser.add_argument("--store", help="keep the runs in this results file (default: a temporary one, removed)")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: make at least 1 run")
    if args.store and os.path.exists(args.store):
        parser.error(f"--store {args.store}: exists already (give a new file: its runs are counted as this script's)")

    temp = make_workdir(None)  # marked as this script's: if it is killed outright, the next run removes it
    store = args.store or os.path.join(temp, "precision.db")
    log = os.path.join(temp, "runs.log")
    lines, results = [], []
    try:
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}: accessbench run --quick --no-report {' '.join(passed)}".rstrip(),
                  file=sys.stderr)
            start = time.monotonic()
            with open(log, "a") as out:
                # In a session of its own, so that Ctrl-C reaches the run once, forwarded
                # (a second would cut its clean-up short).
                run = subprocess.Popen([sys.executable, "-m", "accessbench", "--store", store, "run", "--quick",
                                        "--no-report", *passed], stdout=out, start_new_session=True)
                try:
                    status = run.wait()
                except KeyboardInterrupt:  # the run ends as on Ctrl-C: servers stopped, work directory removed
                    run.send_signal(signal.SIGTERM)
                    run.wait()
                    raise
            wall = time.monotonic() - start
            if status != 0:
                with open(log) as f:
                    tail = f.read()[-2000:]
                sys.exit(f"run {i + 1} ended with status {status}; its output ends:\n{tail}")
            with Store(store) as s:
                run_id = s.resolve("last")
                results.append((run_id, wall, analyse(s.load(run_id))))
    finally:
        shutil.rmtree(temp, ignore_errors=True)

    lines.append(f"precision of the {'default ' if not passed else ''}quick run{' with ' + ' '.join(passed) if passed else ''} "
                 "(95% CI half-width of each measured cell's median):")
    worst_within, slowest = 1.0, 0.0
    for run_id, wall, cells in results:
        text, within = precision_line(run_id, wall, cells)
        lines.append("  " + text)
        worst_within, slowest = min(worst_within, within), max(slowest, wall)
    verdicts = [(slowest <= WALL_GOAL_S and worst_within >= WITHIN_GOAL,
                 f"precision: the slowest run took {slowest / 60:.1f} min (goal ≤ {WALL_GOAL_S // 60}), the least "
                 f"precise had {worst_within:.0%} of its cells within ±5% (goal ≥ {WITHIN_GOAL:.0%})")]
    if len(results) > 1:
        lines.append("A/A: each run against the one before it, as `accessbench compare` calls them"
                     + (" (the first pair calibrates the host, as `compare --calibrate` does; the others are judged "
                        "with it):" if len(results) > 2 else ":"))
        worst, calibration = 0.0, None
        for i, ((a, _, cells_a), (b, _, cells_b)) in enumerate(zip(results, results[1:])):
            text, called, ratios = aa_line(a, b, cells_a, cells_b, calibration)
            if len(results) > 2 and i == 0:
                calibration = drift.calibration(ratios)
                text += f"; calibrates: ±{calibration:.1%}"
            else:
                worst = max(worst, called)
            lines.append("  " + text)
        verdicts.append((worst <= AA_TARGET, f"A/A: at most {worst:.1%} of cells called different"
                                             f"{' with the calibration' if calibration else ''} (target ≤ {AA_TARGET:.0%})"))
    lines += [f"{'met' if ok else 'NOT met'}  {text}" for ok, text in verdicts]
    print("\n".join(lines))
    return 0 if all(ok for ok, _ in verdicts) else 1


if __name__ == "__main__":
    interruptible(main)  # a kill, like Ctrl-C, ends the run it is making as Ctrl-C would
