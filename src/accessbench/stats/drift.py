"""Between runs, the trials' spread says too little. Two runs of identical settings made
minutes apart differ by more than either run's intervals: the host itself drifts (CPU
frequency and placement, caches, the neighbours of a VM), and a trial-to-trial test cannot
see that. So a run-to-run comparison calls a difference only beyond a **drift floor**:

- this comparison's own estimate: most cells of two runs of one suite do not change, so the
  robust spread of their log ratios (1.4826 × MAD around the median) is the drift a cell
  shows by itself; 1.96 of those is what a cell must exceed to stand out;
- the host's calibration: `compare A B --calibrate` on two runs of identical settings stores
  the 95th percentile of |ratio − 1| over their cells, per host; the largest stored is a floor
  that also covers a drift shared by every cell, which the first estimate cannot see;
- and never under the noise threshold of a single comparison (3%).

The floor is the smallest change the comparison could have detected, and it says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..env import IDLE_AWAKE, held_awake
from ..errors import InputError
from ..store.model import Run

Z95 = 1.959964
MIN_PAIRS = 8      # fewer paired cells say nothing about a spread


@dataclass(frozen=True)
class Drift:
    floor: float                    # the relative change a cell must exceed (0.08 = ±8%)
    spread: float | None            # this comparison's robust sd of log ratios (None: too few pairs)
    shift: float | None             # median ratio − 1 over the paired cells
    host_floor: float | None        # the host's calibrated floor, if any
    host_cells: int = 0             # A/A cells behind it

    @property
    def sources(self) -> str:
        parts = []
        if self.spread is not None:
            parts.append(f"the cells' own scatter between the runs ±{math.expm1(Z95 * self.spread):.1%}")
        if self.host_floor is not None:
            parts.append(f"this host's calibrated run-to-run drift ±{self.host_floor:.1%} "
                         f"(from {self.host_cells:,} cells of identical runs)")
        return " and ".join(parts) or "no estimate of the drift (too few cells; calibrate with --calibrate)"


def log_ratios(ratios: list[float]) -> np.ndarray:
    return np.log(np.asarray([r for r in ratios if r > 0], dtype=float))


def robust(logs: np.ndarray) -> tuple[float, float]:
    """The median of log ratios and their robust sd (1.4826 × MAD around it)."""
    centre = float(np.median(logs))
    return centre, 1.4826 * float(np.median(np.abs(logs - centre)))


def estimate(ratios: list[float], noise: float, host_floor: float | None = None, host_cells: int = 0) -> Drift:
    """The drift floor for a comparison whose paired cells moved by ``ratios`` (B ÷ A)."""
    logs = log_ratios(ratios)
    spread = shift = None
    own = 0.0
    if len(logs) >= MIN_PAIRS:
        centre, spread = robust(logs)
        shift = math.expm1(centre)
        own = math.expm1(Z95 * spread)
    floor = max(noise, own, host_floor or 0.0)
    return Drift(floor, spread, shift, host_floor, host_cells)


def calibration_host(environment: dict) -> str | None:
    """What a calibration is kept under: the host, and whether the run held its idle CPUs awake
    (runner/awake.py), for that changes the drift: calibrated at ±36% halting and ±12–18%
    awake on the project's VM. Runs that let them halt, and runs from before accessbench held
    them, share the host's bare name."""
    name = environment.get("hostname")
    return None if name is None else f"{name} (idle CPUs {IDLE_AWAKE})" if held_awake(environment) else name


def calibration(ratios: list[float]) -> float:
    """From two runs of identical settings: the 95th percentile of |ratio − 1| over their cells."""
    logs = log_ratios(ratios)
    return float(math.expm1(np.percentile(np.abs(logs), 95))) if len(logs) else 0.0


@dataclass(frozen=True)
class StepShifts:
    low: float       # the step that moved most down: its median ratio − 1
    high: float      # … and most up
    within: float    # 95% of a cell's move around its own step's shift (like the floor)


def step_shifts(ratios_by_step: dict[tuple, list[float]]) -> StepShifts | None:
    """How whole steps moved between two runs. A step's cells on one target are measured in the
    same rounds, so a host that changes speed between steps moves them together: each step's
    shift is the median ratio of its cells, and a cell's move around its own step's shift is
    what is left. None when fewer than two steps have enough cells to tell."""
    shifts, residuals = [], []
    for ratios in ratios_by_step.values():
        logs = log_ratios(ratios)
        if len(logs) < 2:  # one cell has no scatter around its step
            continue
        centre = float(np.median(logs))
        shifts.append(centre)
        residuals += list(logs - centre)
    if len(shifts) < 2 or len(residuals) < MIN_PAIRS:
        return None
    _, spread = robust(np.asarray(residuals))
    return StepShifts(math.expm1(min(shifts)), math.expm1(max(shifts)), math.expm1(Z95 * spread))


@dataclass(frozen=True)
class RunDrift:
    """The drift a comparison of two runs weighs: what was estimated, and the calibration it
    stored first (``compare --calibrate``: host, floor, cells), if any."""

    found: Drift
    calibrated: tuple[str, float, int] | None
    floor: float | None  # the floor the verdicts weigh beyond --noise (None: --noise alone)


def between_runs(store, reference: Run, candidate: Run, ratios: list[float], noise: float,
                 calibrate: bool = False, own: bool = True) -> RunDrift:
    """The floor a comparison of two stored runs (their ``run`` rows) calls differences above;
    with ``calibrate``, the two runs' drift is stored for their host first. ``own``: the paired
    cells' scatter estimates the drift (most of them did not change; not so across a path)."""
    hosts = {calibration_host(reference.environment), calibration_host(candidate.environment)}
    host = hosts.pop() if len(hosts) == 1 else None
    calibrated = None
    if calibrate:
        if host is None:
            raise InputError("compare --calibrate: the two runs were made on different hosts, or one held idle "
                             "CPUs awake and the other did not; calibrate with two runs of identical settings "
                             "on one host")
        if not own:
            raise InputError("compare --calibrate: the two runs measured different paths; calibrate with two "
                             "runs of identical settings")
        floor = calibration(ratios)
        store.add_drift(host, reference.id, candidate.id, len(ratios), floor)
        calibrated = (host, floor, len(ratios))
    host_floor, host_cells = store.drift(host) if host else (None, 0)
    found = estimate(ratios if own else [], noise, host_floor, host_cells)
    return RunDrift(found, calibrated, found.floor if found.floor > noise else None)
