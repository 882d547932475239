"""The results store: a SQLite file, or a schema in a PostgreSQL database that a team shares
(store/backend.py). Every trial is committed when it ends, so a crash or Ctrl-C loses at most
the trial in flight; several runs may write to a PostgreSQL store at once."""

from __future__ import annotations

import functools
import json
import os
import zlib
from typing import Any

from ..errors import Fault, InputError, first_line
from .backend import open_backend
from .migrations import MIGRATIONS
from .model import Cell, Method, Run, StoredRun, Target, Trial


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _writes(method):
    """A write the store cannot make (disk full, file gone read-only) stops the run as one line:
    what was committed before stays."""

    @functools.wraps(method)
    def write(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except self.backend.errors as e:
            raise Fault(f"--store {self.path}: cannot write ({self._reason(e)}); every trial stored before is kept") from None

    return write


class Store:
    def __init__(self, spec: str) -> None:
        self.backend = open_backend(spec)
        self.path = self.backend.name  # as messages show it: a URL without its password
        self.server = self.backend.server
        try:
            self._migrate()
        except self.backend.errors as e:
            self.backend.close()
            raise InputError(f"--store {self.path}: cannot use it ({self._reason(e)})") from None
        except InputError:
            self.backend.close()
            raise

    def _reason(self, error: Exception) -> str:
        return self.backend.redact(error) if self.server else str(error)

    def _migrate(self) -> None:
        try:
            with self.backend.migrating() as version:
                if version > len(MIGRATIONS):
                    raise InputError(f"--store {self.path}: made by a newer accessbench (schema {version})")
                for number in range(version, len(MIGRATIONS)):
                    self.backend.migrate(number + 1, MIGRATIONS[number])
        except self.backend.errors as e:
            if self.server:
                raise
            raise InputError(f"--store {self.path}: not an accessbench store, or damaged ({first_line(e)})") from None

    def execute(self, sql: str, params: tuple = ()):
        return self.backend.execute(sql, params)

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # writing: each call is its own transaction
    @_writes
    def begin_run(self, run_id: str, suite, settings: dict, environment: dict, version: str) -> None:
        with self.backend.transaction():
            self.execute(
                "INSERT INTO runs (id, started_at, status, suite, suite_source, suite_text, settings,"
                " environment, version, pid) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (run_id, _now(), suite.name, suite.source, suite.text, json.dumps(settings),
                 json.dumps(environment), version, os.getpid()),
            )

    @_writes
    def resume_run(self, run_id: str, settings: dict) -> None:
        """A stopped run carried on: running again, its message cleared, the time it was resumed
        added to its settings' ``resumed`` (settings it lacks, from an older accessbench, filled in).
        Its trials only grow: a larger ``trials`` is kept, and when it was raised, from what."""
        with self.backend.transaction():
            stored = json.loads(self.execute("SELECT settings FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
            merged = {**settings, **stored, "resumed": [*stored.get("resumed", []), _now()]}
            if settings.get("trials") is not None and settings["trials"] > stored.get("trials", settings["trials"]):
                merged["trials"] = settings["trials"]
                merged["trials_raised"] = [*stored.get("trials_raised", []),
                                           {"from": stored["trials"], "to": settings["trials"], "at": _now()}]
            self.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, message = NULL, settings = ?, pid = ?"
                " WHERE id = ?", (json.dumps(merged), os.getpid(), run_id),
            )

    @_writes
    def end_run(self, run_id: str, status: str, message: str | None = None) -> None:
        with self.backend.transaction():
            self.execute(
                "UPDATE runs SET status = ?, finished_at = ?, message = ? WHERE id = ?",
                (status, _now(), message, run_id),
            )

    @_writes
    def note_environment(self, run_id: str, key: str, value) -> None:
        """Something learnt of the environment while the run went (e.g. how steady the host was)."""
        with self.backend.transaction():
            stored = json.loads(self.execute("SELECT environment FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
            stored[key] = value
            self.execute("UPDATE runs SET environment = ? WHERE id = ?", (json.dumps(stored), run_id))

    @_writes
    def add_target(self, run_id: str, target, description: dict) -> None:
        with self.backend.transaction():
            self.execute(
                "INSERT INTO run_targets VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, target) DO UPDATE SET"
                " dbms = excluded.dbms, managed = excluded.managed, server_version = excluded.server_version,"
                " settings = excluded.settings",
                (run_id, target.name, target.dbms, int(target.managed), description.get("server_version"),
                 json.dumps(description.get("settings", {}))),
            )

    @_writes
    def add_method(self, run_id: str, hello: dict) -> None:
        with self.backend.transaction():
            self.execute(
                "INSERT INTO run_methods VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (run_id, hello["name"], hello.get("language"), hello.get("runtime"), hello.get("driver"),
                 hello.get("driver_version"), json.dumps(hello.get("settings", {})),
                 json.dumps(hello.get("capabilities", {}))),
            )

    @_writes
    def add_cell(self, run_id: str, cell, existing: int | None = None) -> int:
        """The cell's row: a new one, or ``existing`` (a resumed run's) set back to planned."""
        s = cell.step
        with self.backend.transaction():
            if existing is not None:
                self.execute("UPDATE cells SET status = 'planned', message = NULL WHERE id = ?", (existing,))
                return existing
            cur = self.execute(
                "INSERT INTO cells (run_id, variant, target, path, method, step, step_index, kind, mode,"
                " description, status, clients, policy, rate, sweep, sweep_series)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?, ?, ?) RETURNING id",
                (run_id, cell.variant, cell.target, cell.path, cell.method, s.name, cell.step_index,
                 s.kind, s.mode, s.description, s.clients, s.policy, s.rate, s.sweep, s.sweep_series if s.sweep else None),
            )
            return cur.fetchone()[0]

    @_writes
    def update_cell(self, cell_id: int, **fields: Any) -> None:
        names = ", ".join(f"{k} = ?" for k in fields)
        with self.backend.transaction():
            self.execute(f"UPDATE cells SET {names} WHERE id = ?", (*fields.values(), cell_id))

    @_writes
    def add_trial(self, cell_id: int, phase: str, seq: int, started_at: str, answer: dict,
                  latencies: bytes | None, server_ns: int | None = None, wire: dict | None = None,
                  server_scope: str | None = None) -> None:
        """A trial as it ends. Plain trials keep every latency; loaded ones their histogram.
        ``server_scope``: whose CPU ``server_ns`` is, the serving backends' or the whole server's."""
        wire = wire or {}
        optional_json = lambda key: json.dumps(answer[key]) if answer.get(key) is not None else None  # noqa: E731
        with self.backend.transaction():
            self.execute(
                "INSERT INTO trials (cell_id, phase, seq, started_at, n, elapsed_ns, rows, values_read,"
                " user_ns, sys_ns, first_op_ns, server_pids, latencies, server_ns, round_trips,"
                " bytes_to_server, bytes_to_client, histogram, late, skipped, per_client, processes, server_scope,"
                " start_rss_bytes, peak_rss_bytes, per_host, sampled)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (cell_id, phase, seq, started_at, answer["n"], answer["elapsed_ns"], answer["rows"],
                 answer.get("values"), answer.get("user_ns"), answer.get("sys_ns"), answer.get("first_op_ns"),
                 json.dumps(answer.get("server_pids")) if answer.get("server_pids") else None,
                 zlib.compress(latencies) if latencies else None, server_ns, wire.get("round_trips"),
                 wire.get("c2s_bytes"), wire.get("s2c_bytes"), optional_json("histogram"), answer.get("late"),
                 answer.get("skipped"), optional_json("per_client"), answer.get("processes"),
                 server_scope if server_ns is not None else None, answer.get("start_rss_bytes"),
                 answer.get("peak_rss_bytes"), optional_json("per_host"), optional_json("sampled")),
            )

    @_writes
    def add_profile(self, cell_id: int, side: str, sampler: str | None, folded: str | None = None,
                    samples: int | None = None, seconds: float | None = None, operations: int | None = None,
                    note: str | None = None) -> None:
        """A cell's profile of one side (client or server), or why there is none (``note``)."""
        with self.backend.transaction():
            self.execute("INSERT INTO profiles VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (cell_id, side) DO UPDATE"
                         " SET sampler = excluded.sampler, seconds = excluded.seconds, operations = excluded.operations,"
                         " samples = excluded.samples, folded = excluded.folded, note = excluded.note",
                         (cell_id, side, sampler, seconds, operations, samples, folded, note))

    def profiles(self, run_id: str) -> list[dict]:
        """Every profile of the run's cells, with the cell's coordinates."""
        return [dict(r) for r in self.execute(
            "SELECT c.id AS cell_id, c.variant, c.target, c.path, c.method, c.step, p.side, p.sampler, p.seconds,"
            " p.operations, p.samples, p.folded, p.note FROM profiles p JOIN cells c ON c.id = p.cell_id"
            " WHERE c.run_id = ? ORDER BY c.step_index, c.step, c.target, c.path, c.method, p.side", (run_id,))]

    def add_drift(self, host: str, run_a: str, run_b: str, cells: int, floor: float) -> None:
        """A calibration: two runs of identical settings on ``host`` differ by ``floor``."""
        with self.backend.transaction():
            self.execute("INSERT INTO drift VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (host, run_a, run_b) DO UPDATE SET"
                         " measured_at = excluded.measured_at, cells = excluded.cells, floor = excluded.floor",
                         (host, run_a, run_b, _now(), cells, floor))

    def drift(self, host: str) -> tuple[float | None, int]:
        """This host's calibrated drift floor (the largest stored) and the cells behind it."""
        row = self.execute("SELECT max(floor), sum(cells) FROM drift WHERE host = ?", (host,)).fetchone()
        return (row[0], row[1] or 0) if row and row[0] is not None else (None, 0)

    @_writes
    def copy_run(self, source: "Store", run_id: str) -> int:
        """A run of another store copied whole, in one transaction, under its own id (its cells,
        trials and profiles get this store's row ids); how many trials were copied."""
        if self.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
            raise InputError(f"RUN {run_id}: already in {self.path}")
        read = lambda sql: [dict(r) for r in source.execute(sql, (run_id,)).fetchall()]  # noqa: E731
        copied = 0
        with self.backend.transaction():
            for table in ("runs", "run_targets", "run_methods"):
                for row in read(f"SELECT * FROM {table} WHERE {'id' if table == 'runs' else 'run_id'} = ?"):
                    self._insert(table, row)
            cell_ids = {}
            for cell in read("SELECT * FROM cells WHERE run_id = ? ORDER BY id"):
                old = cell.pop("id")
                cell_ids[old] = self._insert("cells", cell, returning=True)
            for trial in read("SELECT t.* FROM trials t JOIN cells c ON c.id = t.cell_id WHERE c.run_id = ?"
                              " ORDER BY t.id"):
                del trial["id"]
                self._insert("trials", {**trial, "cell_id": cell_ids[trial["cell_id"]]})
                copied += 1
            for profile in read("SELECT p.* FROM profiles p JOIN cells c ON c.id = p.cell_id WHERE c.run_id = ?"):
                self._insert("profiles", {**profile, "cell_id": cell_ids[profile["cell_id"]]})
        return copied

    def _insert(self, table: str, row: dict[str, Any], returning: bool = False):
        names = ", ".join(row)
        cursor = self.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})"
                              f"{' RETURNING id' if returning else ''}", tuple(row.values()))
        return cursor.fetchone()[0] if returning else None

    # reading
    def measured(self, run_id: str) -> int:
        """How many timed trials the run has stored."""
        return self.execute("SELECT count(*) FROM trials t JOIN cells c ON c.id = t.cell_id"
                               " WHERE c.run_id = ? AND t.phase = 'trial'", (run_id,)).fetchone()[0]

    def stored_cells(self, run_id: str) -> list[tuple[Cell, list[int], list[int]]]:
        """The run's cells as stored, each with the seqs of its timed trials and their elapsed
        nanoseconds (what a resume keeps, and how long its trials took)."""
        cells = [Cell.from_row(r) for r in self.execute("SELECT * FROM cells WHERE run_id = ? ORDER BY id",
                                                        (run_id,)).fetchall()]
        seqs: dict[int, list[int]] = {c.id: [] for c in cells}
        took: dict[int, list[int]] = {c.id: [] for c in cells}
        for t in self.execute("SELECT t.cell_id, t.seq, t.elapsed_ns FROM trials t JOIN cells c ON c.id = t.cell_id"
                              " WHERE c.run_id = ? AND t.phase = 'trial' ORDER BY t.id", (run_id,)).fetchall():
            seqs[t["cell_id"]].append(t["seq"])
            took[t["cell_id"]].append(t["elapsed_ns"])
        return [(c, seqs[c.id], took[c.id]) for c in cells]

    def runs(self, limit: int = 50) -> list[Run]:
        """The newest runs, newest first."""
        return [Run.from_row(r) for r in self.execute(
            "SELECT * FROM runs ORDER BY started_at DESC, id DESC LIMIT ?", (limit,)).fetchall()]

    def contents(self, runs: list[Run]) -> dict[str, tuple[list[str], int]]:
        """What each run measured, as a list of runs shows it: its targets' names and how many
        methods — two queries for the whole list, not two per run (a team's store is remote)."""
        found: dict[str, tuple[list[str], int]] = {r.id: ([], 0) for r in runs}
        if not runs:
            return found
        marks = ", ".join("?" * len(runs))
        ids = tuple(found)
        for row in self.execute(f"SELECT run_id, target FROM run_targets WHERE run_id IN ({marks})"
                                " ORDER BY run_id, target", ids).fetchall():
            found[row[0]][0].append(row[1])
        for row in self.execute(f"SELECT run_id, count(DISTINCT method) FROM cells WHERE run_id IN ({marks})"
                                " GROUP BY run_id", ids).fetchall():
            found[row[0]] = (found[row[0]][0], row[1])
        return found

    def history(self, **equal: list[str] | None) -> tuple[list[Run], list[Cell], dict[int, list[Trial]]]:
        """Every verified cell over every run, oldest run first, narrowed by ``equal`` (column →
        the values it may have: method, step, target, path), with its timed trials — for
        ``accessbench history``. Latencies and histograms are not read."""
        where, params = ["c.status = 'ok'"], []
        for column, values in equal.items():
            if values:
                where.append(f"c.{column} IN ({', '.join('?' * len(values))})")
                params += values
        cells = [Cell.from_row(r) for r in self.execute(
            f"SELECT c.* FROM cells c JOIN runs r ON r.id = c.run_id WHERE {' AND '.join(where)}"
            " ORDER BY r.started_at, r.id, c.variant, c.step_index, c.target, c.path, c.method", tuple(params)).fetchall()]
        ids = list(dict.fromkeys(c.run_id for c in cells))
        found = {r["id"]: Run.from_row(r) for r in self.execute(
            f"SELECT * FROM runs WHERE id IN ({', '.join('?' * len(ids))})", tuple(ids)).fetchall()} if ids else {}
        runs = [found[i] for i in ids]  # one query for them all (a team's store is remote)
        trials: dict[int, list[Trial]] = {}
        columns = "t.id, t.cell_id, t.seq, t.n, t.rows, t.elapsed_ns, t.phase"
        for r in self.execute(f"SELECT {columns} FROM trials t JOIN cells c ON c.id = t.cell_id JOIN runs r ON "
                              f"r.id = c.run_id WHERE t.phase = 'trial' AND {' AND '.join(where)} ORDER BY t.cell_id, "
                              "t.seq", tuple(params)).fetchall():
            trial = Trial.from_row(r)
            trials.setdefault(trial.cell_id, []).append(trial)
        return runs, cells, trials

    def resolve(self, ref: str) -> str:
        """A run id from a full id, a unique prefix, or ``last``."""
        if ref in ("last", "latest"):
            row = self.execute("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()
            if row is None:
                raise InputError(f"no runs in {self.path} yet")
            return row[0]
        rows = self.execute("SELECT id FROM runs WHERE id LIKE ? || '%'", (ref,)).fetchall()
        if len(rows) != 1:
            raise InputError(
                f"RUN {ref}: {'no run' if not rows else f'{len(rows)} runs'} in {self.path} match "
                "(see `accessbench runs`)"
            )
        return rows[0][0]

    def run(self, run_id: str) -> Run:
        """The run's own row, its settings and environment decoded."""
        return Run.from_row(self.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone())

    def load(self, run_id: str) -> StoredRun:
        """The run whole, typed: its targets, methods, cells and timed trials (warmups stay stored)."""
        rows = lambda sql: self.execute(sql, (run_id,)).fetchall()  # noqa: E731
        stored = StoredRun(
            self.run(run_id),
            [Target.from_row(r) for r in rows("SELECT * FROM run_targets WHERE run_id = ? ORDER BY target")],
            [Method.from_row(r) for r in rows("SELECT * FROM run_methods WHERE run_id = ? ORDER BY method")],
            [Cell.from_row(r) for r in rows(
                "SELECT * FROM cells WHERE run_id = ? ORDER BY variant, step_index, target, path, method")],
        )
        for r in rows("SELECT t.* FROM trials t JOIN cells c ON c.id = t.cell_id WHERE c.run_id = ? AND t.phase = 'trial'"
                      " ORDER BY t.cell_id, t.seq"):
            trial = Trial.from_row(r)
            stored.trials.setdefault(trial.cell_id, []).append(trial)
        stored.profiles = self.profiles(run_id)
        return stored
