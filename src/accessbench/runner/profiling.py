"""Profiles (``run --profile``): where a cell's client and its server backend spend their CPU.

A cell is profiled after its timed trials, in a trial of its own: the sampler attaches to the
worker (and to the backends serving it), the step runs as many operations as last the
profile's seconds, and the sampler stops. That trial is not stored as a timed figure, so a
profile never changes one — perf's DWARF stacks (16 KB copied per sample) or a recorder that
starts a JIT's own machinery (JFR) cost only its own trial. One exception, said in
docs/profiles.md: a profiled run's Node workers write V8's perf map from their start.

What cannot be profiled says why, stored in place of the profile: a language with no sampler
installed, a step under load (many clients; a profile is of one worker's trials), workers on
other hosts, a server not on this machine or reached through a pooler (its backends are not
known), a connect step's server side (its backends come and go within an operation).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time

from ..profile.folded import text
from ..profile.samplers import NATIVE, SERVER, Recording, Sampler, for_language
from ..targets import EMBEDDED
from .context import RunContext
from .executor import Executor
from .plan import Cell
from .state import CellFailed, CellState

MAX_OPERATIONS = 10_000_000  # a profile's trial of the fastest steps (a latency file of 80 MB)


def node_options(env: dict[str, str]) -> dict[str, str]:
    """Node's V8 writes a map of the JavaScript it compiles (/tmp/perf-PID.map), by which perf
    names its frames: set for every Node worker of a profiled run (a line per function compiled,
    written while it warms up)."""
    flag = "--perf-basic-prof-only-functions"
    options = env.get("NODE_OPTIONS", os.environ.get("NODE_OPTIONS", ""))
    return {**env, "NODE_OPTIONS": f"{options} {flag}".strip()}


class Profiler:
    def __init__(self, ctx: RunContext, executor: Executor, seconds: float) -> None:
        self.ctx, self.executor, self.seconds = ctx, executor, seconds
        self.maps: set[str] = set()  # the JIT maps Node workers wrote, removed at the run's end

    def take(self, cell: Cell, state: CellState) -> None:
        """The cell's profiles, every side, stored, or why there are none. The cell's timed
        figure stands whatever happens here: a profile that fails says so in its place."""
        try:
            why = self._cannot(cell) or self._take(cell, state)
        except CellFailed as e:
            why = f"not profiled: {e.message}"
        if why:
            for side in self._sides(cell):
                self.ctx.store.add_profile(state.id, side, None, note=why)

    def _sides(self, cell: Cell) -> dict[str, Sampler]:
        """client (the worker's own sampler), native (perf beside py-spy: a Python worker's C
        extensions and libraries, which py-spy reads as its calling Python frame) and server."""
        language = self.ctx.method(cell).language
        return {"client": for_language(language), **({"native": NATIVE[language]} if language in NATIVE else {}),
                "server": SERVER}

    def _take(self, cell: Cell, state: CellState) -> None:
        pid, backends = self.executor.processes(cell)
        samplers = self._sides(cell)
        pids = {side: backends if side == "server" else [pid] for side in samplers}
        notes = {side: sampler.missing() for side, sampler in samplers.items()}
        notes["server"] = self._server_cannot(cell, backends) or notes["server"]
        operations = self._operations(cell)
        directory = tempfile.mkdtemp(prefix="profile-", dir=self.ctx.workdir)
        recordings: dict[str, Recording] = {}
        try:
            for side, sampler in samplers.items():
                if notes[side] is None:
                    recordings[side] = self._start(cell, sampler, side, pids[side], directory)
            began = time.monotonic()
            self.executor.trial(cell, operations)
            seconds = time.monotonic() - began
            for side, sampler in samplers.items():
                self._store(state, side, sampler.name, recordings.pop(side, None), notes[side], seconds, operations)
        finally:
            for recording in recordings.values():  # a trial failed: stop what still samples
                try:
                    recording.stop()
                except RuntimeError:
                    pass
            shutil.rmtree(directory, ignore_errors=True)
        if self.ctx.method(cell).language == "node":
            self.maps.add(f"/tmp/perf-{pid}.map")

    def _operations(self, cell: Cell) -> int:
        """How many operations make one trial of the profile's length: timed by a trial of the
        step's own length first, outside the profile. One long trial rather than many short
        ones, so that what a worker does between its timed loops (writing its latencies,
        answering) and the runner's reset between trials stay out of the samples."""
        answer = self.executor.trial(cell).answer
        per_op_s = answer["elapsed_ns"] / 1e9 / max(answer["n"], 1)
        return max(cell.step.iterations, min(MAX_OPERATIONS, math.ceil(self.seconds / max(per_op_s, 1e-9))))

    def _start(self, cell: Cell, sampler, side: str, pids: list[int], directory: str) -> Recording:
        os.makedirs(path := os.path.join(directory, side))
        threads = side == "server" and self.ctx.target(cell).serves_by_thread
        try:
            return sampler.start(pids, threads, path)
        except (RuntimeError, OSError) as e:
            raise CellFailed("error", f"profile: {sampler.name} could not attach to the {side}: {e}") from None

    def _store(self, state: CellState, side: str, sampler: str, recording: Recording | None, note: str | None,
               seconds: float, operations: int) -> None:
        if recording is None:
            self.ctx.store.add_profile(state.id, side, None, note=note)
            return
        try:
            stacks = recording.stop()
        except (RuntimeError, OSError) as e:
            self.ctx.store.add_profile(state.id, side, sampler, note=f"{sampler} failed: {e}")
            return
        samples = sum(stacks.values())
        self.ctx.store.add_profile(state.id, side, sampler, text(stacks), samples, round(seconds, 3), operations,
                                   None if samples else f"{sampler} saw no samples of the {side} in {seconds:.1f} s")

    def _cannot(self, cell: Cell) -> str | None:
        if cell.step.loaded:
            return "not profiled: a step under load (a profile is of one worker's own trials)"
        if self.executor.processes(cell) is None:
            return "not profiled: its workers run on other hosts"
        return None

    def _server_cannot(self, cell: Cell, backends: list[int]) -> str | None:
        if self.ctx.target(cell).dbms in EMBEDDED:
            return "in-process: the engine runs inside the client, in its profile"
        if not self.ctx.server_cpu_known(cell):
            return "not profiled: the server's backends are not known here (another host, or a pooler between)"
        if cell.step.kind == "connect" or not backends:
            return "not profiled: its backends come and go within each operation"
        return None

    def close(self) -> None:
        for path in self.maps:
            try:
                os.remove(path)
            except OSError:
                pass
