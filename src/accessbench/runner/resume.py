"""Carrying on a stopped run: ``accessbench run --resume RUN``.

``Done`` is what a run already stored, read once from the store: per cell its row, status,
first verification and which timed trials it has. The runner asks it which cells to leave as
they are and which trials are still missing; a new run's ``Done`` is empty. ``Resume`` is
the run to carry on as the command line sees it: whether it may be resumed here, and the
settings, suite, targets, paths and methods it keeps — a refusal is one line naming the
difference.
"""

from __future__ import annotations

import os
import platform
from collections import Counter
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ..errors import InputError
from ..paths import parse as parse_path
from .plan import Cell

if TYPE_CHECKING:
    from ..store.model import Run

# Options a resumed run keeps, and where its settings hold them.
KEPT = (("--trials", "trials"), ("--warmup", "warmup"), ("--max-warmup", "max_warmup_jit"),
        ("--timeout", "timeout_s"), ("--quick", "quick"), ("--unconfined-sql", "unconfined_sql"),
        ("--precision", "precision"), ("--budget", "budget_s"), ("--max-trials", "max_trials"),
        ("--allow-idle-halt", "allow_idle_halt"), ("--step", "steps"), ("--rows", "rows"))
# Kept options a run stores only when given: none stored means the run ran without it (its
# suite's own sizes), not that an older accessbench did not store it.
STORED_WHEN_GIVEN = ("--rows",)
_ADVICE = "a resumed run keeps its settings; start a new run for other ones"


def identity(cell: Cell) -> tuple[str, str, str, str, str]:
    """What names a cell in the store (UNIQUE in ``cells``)."""
    return cell.variant, cell.target, cell.path, cell.method, cell.step.name


@dataclass(frozen=True)
class StoredCell:
    id: int
    status: str
    key: tuple | None        # what its first verification read: (rows, checksum, check checksum)
    seqs: frozenset[int]     # the timed trials it has
    took_s: float | None = None  # the mean seconds of those trials (None: none yet)


@dataclass(frozen=True)
class Done:
    """What a run has already stored; empty (``run_id`` None) for a new run."""

    run_id: str | None = None
    cells: dict[tuple, StoredCell] = field(default_factory=dict)

    @classmethod
    def of(cls, store, run_id: str) -> "Done":
        return cls(run_id, {
            c.key: StoredCell(
                c.id, c.status,
                (c.verify_rows, c.checksum, c.check_checksum) if c.verify_rows is not None else None,
                frozenset(seqs), sum(took) / len(took) / 1e9 if took else None)
            for c, seqs, took in store.stored_cells(run_id)
        })

    @property
    def resumed(self) -> bool:
        return self.run_id is not None

    def stored(self, cell: Cell) -> StoredCell | None:
        return self.cells.get(identity(cell))

    def kept(self, cell: Cell, trials: int) -> StoredCell | None:
        """The stored cell, if it is left as it is: unsupported, or verified with every timed trial."""
        s = self.stored(cell)
        if s and (s.status == "unsupported" or s.status in ("ok", "mismatch") and s.seqs >= set(range(trials))):
            return s
        return None

    def row(self, cell: Cell) -> int | None:
        s = self.stored(cell)
        return s.id if s else None

    def verified(self, cell: Cell) -> tuple | None:
        """What the cell's first verification read, if it got that far."""
        s = self.stored(cell)
        return s.key if s else None

    def again(self, cells: list[Cell]) -> set[Cell]:
        """The cells a resumed run verifies again before it measures them: every cell that has no
        first verification, and of the others one per target, step and method, on its quickest
        path (one without the latency proxy: loopback, a socket, in process). That read shows the
        new server holds the same data and the method reads it as it did; the method's other
        paths differ from it only by what carries the same bytes, so their first verifications
        stand. (Reading every cell again cost a resumed hostage grid two hours of reads at
        10 Mbit/s before its first trial.) A mismatch its method read alike on another path is
        such a first verification too: the comparison judges it again. A new run verifies every cell."""
        if not self.resumed:
            return set(cells)

        def group(cell: Cell) -> tuple:  # one method's cells of one step on one target
            return cell.variant, cell.target, cell.step.name, cell.method
        read = Counter((group(c), s.key) for c in cells if (s := self.stored(c)) and s.key is not None)
        again, chosen = set(), {}
        for cell in cells:
            s = self.stored(cell)
            # verified: ok, or set back to planned by an earlier resume that stopped before it
            # came to the cell, or a mismatch its method read alike on another path too (a reading
            # of its own, such as decimals at another scale: compared again, not read again); a
            # failure, or a mismatch on this path alone, is verified again
            trusted = s is not None and s.key is not None and (
                s.status in ("ok", "planned") or s.status == "mismatch" and read[group(cell), s.key] > 1)
            if not trusted:
                again.add(cell)
                continue
            g = group(cell)
            if g not in chosen or (parse_path(chosen[g].path).proxied and not parse_path(cell.path).proxied):
                chosen[g] = cell
        return again | set(chosen.values())

    def took(self, cell: Cell) -> float | None:
        """The seconds one of the cell's stored timed trials took, on average (None: none stored)."""
        s = self.stored(cell)
        return s.took_s if s else None

    def missing(self, cell: Cell, trials: int) -> list[int]:
        """The seqs of the timed trials still to measure."""
        s = self.stored(cell)
        return [seq for seq in range(trials) if not s or seq not in s.seqs]

    def unmeasured(self, order: Iterable[tuple[Cell, str, int]]) -> Iterator[tuple[Cell, str, int]]:
        """``order`` without the timed trials already stored: the rest keep their interleaving."""
        for cell, phase, seq in order:
            s = self.stored(cell)
            if not (phase == "trial" and s and seq in s.seqs):
                yield cell, phase, seq

    def executions(self, groups: list[list[Cell]], warmup: int, trials: int) -> int:
        """Worker executions still to run: verification, warmups and missing trials of every cell not kept."""
        return sum(1 + warmup + len(self.missing(c, trials)) for g in groups for c in g if not self.kept(c, trials))

    def to_measure(self, targets: list, groups: list[list[Cell]], trials: int) -> list:
        """The targets with a cell still to measure (only they need the variant's data loaded)."""
        names = {c.target for g in groups for c in g if not self.kept(c, trials)}
        return [t for t in targets if t.name in names]

    def summary(self, cells: list[Cell], trials: int) -> tuple[int, int]:
        """(cells kept as they are, timed trials still to measure)."""
        kept = sum(self.kept(c, trials) is not None for c in cells)
        return kept, sum(len(self.missing(c, trials)) for c in cells if not self.kept(c, trials))


def _alive(pid: int | None) -> bool:
    """Another accessbench process with this pid is running (on this host)."""
    if pid == os.getpid():
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"accessbench" in f.read()
    except (OSError, TypeError):
        return False


def orphaned(run: Run) -> bool:
    """A run stored as running, measured on this host, whose process is gone: it ended without
    a word (killed, or the machine stopped) and can be carried on with --resume."""
    return run.status == "running" and run.environment.get("hostname") == platform.node() and not _alive(run.pid)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def _short(line: str | None, width: int = 40) -> str:
    if line is None:
        return "(no such line)"
    line = line.strip()
    return repr(line if len(line) <= width else line[: width - 1] + "…")


class Resume:
    """A stored run to carry on, and what it keeps. Every method refuses with one line."""

    def __init__(self, store, ref: str) -> None:
        self.store = store
        self.run_id = store.resolve(ref)
        self.run = store.run(self.run_id)
        self.settings = self.run.settings

    def refusal(self, why: str) -> InputError:
        return InputError(f"--resume {self.run_id}: {why}")

    def adds_trials(self, trials: int | None) -> bool:
        """``--trials`` asks for more timed trials a cell than the run has: each cell carries on to them."""
        stored = self.settings.get("trials")
        return trials is not None and stored is not None and trials > stored

    def check(self, trials: int | None = None) -> None:
        """The run can be carried on here: not complete (unless ``trials`` adds to its trials),
        measured on this host, not still going."""
        run = self.run
        if run.status == "complete" and not self.adds_trials(trials):
            raise self.refusal("the run is complete: nothing to resume (a larger --trials adds trials to each cell)")
        host, here = run.environment.get("hostname"), platform.node()
        if host != here:
            raise self.refusal(f"the run was measured on host {host}, this is {here} (a run's trials come from "
                               "one machine; start a new run here)")
        if run.status == "running" and _alive(run.pid):
            raise self.refusal(f"the run is still being measured by process {run.pid} (stop it first)")

    def settings_for(self, given: dict[str, Any]) -> dict[str, Any]:
        """The run's value of each kept option; a given one must agree (``given``: option → value,
        None where not given)."""
        out = {}
        for option, key in KEPT:
            value, stored = given.get(option), self.settings.get(key)
            if stored is None and option in STORED_WHEN_GIVEN and value is not None:
                raise self.refusal(f"{option} {_shown(value)} differs from the run's: it ran without it ({_ADVICE})")
            if stored is None:  # a setting an older accessbench did not store: as given, else the default
                out[option] = value
                continue
            if option == "--trials" and self.adds_trials(value):  # more trials, never fewer
                out[option] = value
                continue
            if option == "--trials" and value is not None and value < stored:
                raise self.refusal(f"--trials {value} is fewer than the run's {stored} (a resumed run may add "
                                   "trials, never drop them)")
            if value is not None and value != stored:
                shown = (f"{option} differs from the run's: it ran without it" if isinstance(stored, bool)
                         else f"{option} {_shown(value)} differs from the run's {_shown(stored)}")
                raise self.refusal(f"{shown} ({_ADVICE})")
            out[option] = stored
        return out

    def suite(self, given: str | None):
        """The run's suite, parsed from its stored text as at the start; ``--suite`` given must
        be that same text."""
        from ..suite.loader import builtin_names, load

        run, quick = self.run, bool(self.settings.get("quick"))
        if given is not None:
            source = run.suite_source
            if given in builtin_names() and source.startswith("builtin:") and source != f"builtin:{given}":
                raise self.refusal(f"--suite {given} differs from the run's {source.removeprefix('builtin:')} "
                                   f"({_ADVICE})")
            text = load(given, quick=quick, rows=self.settings.get("rows")).text
            if text != run.suite_text:
                lines = zip_longest(text.splitlines(), run.suite_text.splitlines())
                number, (mine, theirs) = next((n, pair) for n, pair in enumerate(lines, 1) if pair[0] != pair[1])
                raise self.refusal(f"--suite {given} differs from the run's suite ({source}) at line {number}: "
                                   f"{_short(mine)} here, {_short(theirs)} in the run ({_ADVICE})")
        return run.parse_suite()

    def target_specs(self, given: list[str] | None, name_of) -> list[str]:
        """What to make the run's targets from, in the run's order: managed ones by name,
        external ones from the URL given again (passwords are never stored). ``name_of(spec)``
        is the name a target made from ``spec`` is stored under."""
        stored = self.settings["targets"]
        if given is None:
            if any("://" in name for name in stored):
                raise self.refusal(f"give --target {','.join(stored)} again, with the password in the URL or "
                                   "PGPASSWORD/MYSQL_PWD: passwords are never stored")
            return list(stored)
        by_name = {name_of(spec): spec for spec in given}
        if sorted(by_name) != sorted(stored) or len(by_name) != len(given):
            raise self.refusal(f"--target {','.join(by_name)} differs from the run's {','.join(stored)} ({_ADVICE})")
        return [by_name[name] for name in stored]

    def paths(self, given: list[str] | None, name_of) -> list[str] | None:
        """The paths the run asked for (None: every path each target has)."""
        stored = self.settings.get("paths")
        if given is not None and (stored is None or sorted(map(name_of, given)) != sorted(map(name_of, stored))):
            theirs = ",".join(stored) if stored else "(every path each target has)"
            raise self.refusal(f"--path {','.join(given)} differs from the run's {theirs} ({_ADVICE})")
        return stored

    def methods(self, given: list[str] | None) -> list[str]:
        stored = self.settings["methods"]
        if given is not None and sorted(set(given)) != sorted(stored):
            raise self.refusal(f"--method {','.join(given)} differs from the run's {','.join(stored)} ({_ADVICE})")
        return list(stored)

    def done(self) -> Done:
        return Done.of(self.store, self.run_id)
