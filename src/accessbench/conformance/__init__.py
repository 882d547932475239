"""`accessbench conformance`: does a worker speak protocol v1 and compute what the reference
computes? Each method's worker goes through the shared vectors (PRNG, generators,
checksum), then a reference script against managed servers: hello, open, every step kind and
mode, an error, and bye. The first difference is reported; a worker that passes can be
measured.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable

from ..data.generate import table_rows
from ..methods import Method, catalog
from ..paths import parse as parse_path
from ..paths.tls import Authority, transport_differs
from ..protocol.capabilities import PROCESSES
from ..protocol.checksum import Checksum
from ..protocol.generators import rows as generated_rows
from ..protocol.schedule import uniform_starts_within
from ..protocol.vectors import default_dir, native
from ..suite import association
from ..suite.loader import parse
from ..suite.message import step_message
from ..suite.shape import FEATURES, unmapped
from ..suite.model import Step, Suite, Variant
from ..targets import Target, make
from ..targets.registry import described
from ..net import connections_to
from ..worker_process import WorkerFailed, WorkerProcess, worker_environment
from .relay import Relay

TIMEOUT = 60.0
# The whole script runs on one path per target (tcp where it has one), and on each other path
# only the steps that show the worker reaches the server by it and reads and writes there:
# connecting, a scan, selects and inserts in every mode. The rest — every type, record access,
# batches, a layer's mapping of each shape, the statements a load strategy sends, steps under
# load — checks what the worker does with the rows, which no path changes.
EVERY_PATH = ("connect", "scan-items", "select-", "insert-")
DUMP = 1_000  # rows a verification pass is asked to dump (every row of the script's steps but the largest)
# Conformance checks what a worker answers, never how fast: a JVM worker runs with its first
# compiler only (C1, no C2), which answers the same and spends a third less CPU on a kit of
# thousands of short steps that each compile code once. A run measures it as its users run it.
CHECKING_ENVIRONMENT = {"java": {"JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1"}}


def same_worker(method: Method) -> set[str]:
    """The catalog's methods (without settings or versions) that ``method``'s worker program
    runs: those of its language's worker, or every tier method (one tier worker runs them all)."""
    return {m.name.split("/")[0] for m in catalog() if not m.version
            and ((m.tier and method.tier) or (not m.tier and not method.tier and m.language == method.language))}


def types_ddl(dbms: str) -> str:
    """conf_types, a table of every SQL type the suites use, as ``dbms`` declares it (its
    description's ``conformance``: targets/registry.py)."""
    return described(dbms).conformance.types_ddl


def types_rows(dbms: str) -> tuple[tuple, ...]:
    """The fixed rows put in conf_types on ``dbms``: what every worker must read back alike."""
    return described(dbms).conformance.types_rows


def types_columns(dbms: str) -> dict[str, str]:
    """conf_types' columns on ``dbms`` and each one's type as the DDL names it (lower case, its
    first word: ``numeric``, ``double``, ``varchar``)."""
    ddl = types_ddl(dbms)
    inside = ddl[ddl.index("(") + 1:ddl.rindex(")")]
    return {m.group(1): m.group(2).lower() for m in re.finditer(r"(?:^|,)\s*(\w+)\s+(\w+)", inside)}


class Difference(Exception):
    """The first way a worker differs from the reference."""


@dataclass
class Outcome:
    method: str
    passed: bool
    checks: int = 0
    notes: list[str] = field(default_factory=list)  # modes answered `unsupported`, with why
    failure: str | None = None

    def note(self, text: str) -> None:
        """Keep a note once (a step refused on every path is noted for the first)."""
        if text not in self.notes:
            self.notes.append(text)


def script() -> Suite:
    text = (resources.files("accessbench") / "conformance" / "script.toml").read_text()
    return parse(text, "conformance/script.toml")


def load_vectors(folder: Path | None = None) -> dict[str, dict]:
    folder = folder or default_dir()
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in ("prng", "generators", "checksum", "load")}


class Check:
    """One method's run through the kit; every ``expect`` counts a check."""

    def __init__(self, method: Method, targets: dict[str, Target], workdir: str, seed: int,
                 stranger: Authority | None = None, references: "References | None" = None) -> None:
        self.method, self.targets, self.workdir, self.seed = method, targets, workdir, seed
        self.stranger = stranger  # an authority no server's certificate is of: its CA must fail verification
        self.outcome = Outcome(method.name, passed=False)
        self.references = references or References(frozenset())

    def expect(self, ok: bool, what: str) -> None:
        self.outcome.checks += 1
        if not ok:
            raise Difference(what)

    def ask(self, worker: WorkerProcess, message: dict) -> dict:
        try:
            answer = worker.request(message, TIMEOUT)
        except WorkerFailed as e:
            what = message["op"] if message["op"] != "step" else f"step {message['kind']} {message.get('sql', '')[:60]!r}"
            raise Difference(f"{what}{' (verify)' if message.get('verify') else ''}: {e}") from None
        self.expect(isinstance(answer.get("ok"), bool), f"{message['op']}: answer without ok: {answer}")
        return answer

    def ok(self, worker: WorkerProcess, message: dict, what: str) -> dict:
        answer = self.ask(worker, message)
        self.expect(answer["ok"], f"{what}: {answer.get('error')}")
        return answer

    def run(self, vectors: dict, variant: Variant) -> Outcome:
        """One worker process through the whole kit: the vectors, then on each target the
        script on every path and the TLS check, each an ``open`` after the last ``close`` (the
        protocol's): a worker that carries anything of one session into the next is caught."""
        self.tables = variant.tables  # a layer's step messages carry the statement's shape against these
        worker = self._start("worker")
        try:
            hello = self._vectors(worker, vectors)
            if self.method.reads == "floor":  # no method: it reads raw bytes from the runner's sender
                self.outcome.notes.append("the wire's floor reads from a sender the runner starts on a path; "
                                          "tests/test_transfer.py checks it")
            else:
                for target in (self.targets[d] for d in self.method.dbms if d in self.targets):
                    self._script(worker, hello, target, variant)
                    if target.authority is not None:
                        self._tls(worker, target)
            self._bye(worker)
            self.outcome.passed = True
        except Difference as e:
            self.outcome.failure = str(e)
        finally:
            worker.kill()
        return self.outcome

    def _start(self, tag: str) -> WorkerProcess:
        log = os.path.join(self.workdir, f"{self.method.name.replace('/', '_')}-{tag}.log")
        env = worker_environment(self.workdir)
        for key, value in CHECKING_ENVIRONMENT.get(self.method.language, {}).items():
            env[key] = f"{env[key]} {value}" if env.get(key) else value  # after the user's own options
        return WorkerProcess(self.method.command(), log, env)

    def _registry(self, hello: dict) -> None:
        """The worker's own list of its methods is the catalog's: a method is declared once, in
        its catalog entry, and a worker that has a driver no entry names (or lacks one an entry
        names) fails here."""
        declared = same_worker(self.method)
        have = set(hello.get("methods") or [])
        if self.method.version:  # a version's worker may be built for its own method only (versions.py)
            base = self.method.name.partition("@")[0].split("/")[0]
            self.expect(base in have and have <= declared,
                        f"hello: a version's worker lists {sorted(have)}: want {base} among the catalog's")
            return
        self.expect(have == declared, "hello: the worker's methods and the catalog's differ: "
                    + "; ".join(filter(None, (
                        f"the catalog has no {', '.join(sorted(have - declared))}" if have - declared else "",
                        f"the worker has no {', '.join(sorted(declared - have))}" if declared - have else ""))))

    def _vectors(self, worker: WorkerProcess, vectors: dict) -> dict:
        """hello, and the protocol's vectors (no database): the worker's hello answer."""
        hello = self.ok(worker, {"op": "hello"}, "hello")
        for key in ("protocol", "name", "language", "runtime", "driver", "driver_version", "settings", "capabilities"):
            self.expect(key in hello, f"hello: no '{key}'")
        self.expect(hello["protocol"] == 1, f"hello: protocol {hello['protocol']}, want 1")
        self.expect(hello["name"] == self.method.name, f"hello: name {hello['name']!r}, want {self.method.name!r}")
        self.expect(set(self.method.dbms) <= set(hello["capabilities"].get("dbms", [])),
                    f"hello: capabilities.dbms {hello['capabilities'].get('dbms')} lacks {self.method.dbms}")
        self._registry(hello)
        for case in vectors["generators"]["cases"]:
            got = self.ok(worker, {"op": "generate", "spec": case["spec"], "count": case["count"]}, "generate")["values"]
            for i, (have, want) in enumerate(zip(got, case["values"])):
                self.expect(have == want, f"generate {case['spec']}: value {i} is {have!r}, want {want!r}")
            self.expect(len(got) == len(case["values"]), f"generate {case['spec']}: {len(got)} values")
        for case in vectors["checksum"]["values"]:
            got = self.ok(worker, {"op": "checksum", "rows": [[case["value"]]]}, "checksum")
            self.expect(got["checksum"] == case["row_hash"],
                        f"checksum of {case['name']} {case['value']}: {got['checksum']}, want {case['row_hash']}")
        for case in vectors["checksum"]["rows"]:
            got = self.ok(worker, {"op": "checksum", "rows": case["rows"]}, "checksum")
            self.expect((got["checksum"], got["rows"]) == (case["checksum"], case["count"]),
                        f"checksum of rows '{case['name']}': {got['checksum']}/{got['rows']}, "
                        f"want {case['checksum']}/{case['count']}")
        if hello["capabilities"].get("load"):
            self._load_vectors(worker, vectors["load"], hello["capabilities"]["load"])
        return hello

    def _load_vectors(self, worker: WorkerProcess, load: dict, caps: dict) -> None:
        """The histogram's buckets and the arrival schedules, as the reference makes them
        (no schedules for a worker whose loops go by duration only: it has no open loop)."""
        got = self.ok(worker, {"op": "histogram", "values": load["histogram"]["values"]}, "histogram")["histogram"]
        want = load["histogram"]["wire"]
        for key in ("buckets", "overflow", "min", "max", "sum"):
            self.expect(got.get(key) == want[key], f"histogram of the vector values: {key} = {got.get(key)}, want {want[key]}")
        for case in load["schedules"] if caps.get("by") != "duration" else []:
            message = {"op": "schedule", "rate": case["rate"], "arrival": case["arrival"], "seed": case["seed"],
                       "count": len(case["offsets"])}
            offsets = self.ok(worker, message, "schedule")["offsets"]
            self.expect(len(offsets) == len(case["offsets"]), f"schedule {case['arrival']} {case['rate']}/s: {len(offsets)} offsets")
            for i, (have, want_ns) in enumerate(zip(offsets, case["offsets"])):
                self.expect(abs(have - want_ns) <= 1000, f"schedule {case['arrival']} {case['rate']}/s seed {case['seed']}: "
                                                         f"offset {i} is {have}, want {want_ns} (±1 µs)")

    def _bye(self, worker: WorkerProcess) -> None:
        self.ok(worker, {"op": "bye"}, "bye")
        try:
            status = worker.proc.wait(10)
        except Exception:
            status = None
        self.expect(status == 0, f"bye: the worker did not exit with status 0 (status {status})")

    # TLS as the protocol asks, on a server serving it
    def _tls(self, worker: WorkerProcess, target: Target) -> None:
        """A plain path stays plain on a server that offers TLS; ``tcp+tls`` (verify-full) and
        ``tcp+tls1.2`` are encrypted as asked, as the server sees it, or answered
        ``unsupported`` with why; a server certificate from another authority, or reached at an
        address it does not name, fails ``open``. One worker opens and closes each in turn
        (``open`` after ``close`` is the protocol's), the failing ones last."""
        endpoint = parse_path("tcp").endpoint(target)
        relay = Relay((endpoint["host"], endpoint["port"]))
        try:
            for name in ("tcp", "tcp+tls", "tcp+tls1.2", "tcp+tls (another authority's CA)",
                         "tcp+tls (another host's name)"):
                path = parse_path(name.split()[0])
                endpoint = path.endpoint(target)
                if name.endswith("CA)"):
                    endpoint["sslrootcert"] = self.stranger.ca
                if name.endswith("name)"):
                    endpoint["host"], endpoint["port"] = relay.host, relay.port
                mark = target.transport_mark()
                answer = self.ask(worker, {"op": "open", "endpoint": endpoint, "options": {}, "clients": 1})
                error = answer.get("error") or {}
                if not answer["ok"] and path.tls and error.get("kind") == "unsupported":
                    self.outcome.note(f"{target.name}/{path.name}: unsupported: {error.get('message')}")
                elif name.endswith("CA)"):
                    self.expect(not answer["ok"], f"open {target.name}/{name}: connected, though the server's "
                                                  "certificate is not of the CA it was given")
                elif name.endswith("name)"):
                    self.expect(not answer["ok"], f"open {target.name}/{name}: connected with verify-full at "
                                                  f"{relay.host}, an address the server's certificate does not name")
                else:
                    self.expect(answer["ok"], f"open {target.name}/{name}: {error}")
                    wrong = transport_differs(path, target.transport(mark, answer.get("server_pid")))
                    self.expect(wrong is None, f"open {target.name}/{name}: {wrong}")
                    self.ok(worker, {"op": "close"}, f"close {target.name}/{name}")
        finally:
            relay.close()

    # the reference script on one target
    def _script(self, worker: WorkerProcess, hello: dict, target: Target, variant: Variant) -> None:
        for path in target.paths:
            opened = self.ok(worker, {"op": "open", "endpoint": target.endpoint(path), "options": {}, "clients": 1},
                             f"open {target.name}/{path}")
            self.expect(isinstance(opened.get("connect_ns"), int), "open: no connect_ns")
            primary = path == ("tcp" if "tcp" in target.paths else target.paths[0])
            for step in variant.steps:
                if primary or step.name.startswith(EVERY_PATH):
                    self._step(worker, target, path, step, hello)
            if path == "tcp":
                self._connections(worker, target)
            if primary and hello["capabilities"].get("load"):
                self._loaded(worker, target, path, variant, hello["capabilities"])
            self._error(worker, target, path, hello["capabilities"])
            self._step(worker, target, path, variant.steps[1], hello)  # still usable after the error
            self.ok(worker, {"op": "close"}, "close")
            if primary:
                self._read_only(worker, target, path, variant, hello)  # open after close, as the protocol allows

    def _read_only(self, worker: WorkerProcess, target: Target, path: str, variant: Variant, hello: dict) -> None:
        """A session opened with ``read_only`` (a run over a user's existing data) reads as any
        other, and the server itself refuses its write: an UPDATE answers a ``db`` error (SQLSTATE
        25006 where the DBMS has one) and the table is as it was. The worker is not trusted to
        refuse it: it must not even try to tell a write from a read (no worker parses SQL)."""
        endpoint = {**target.endpoint(path), "read_only": True}
        self.ok(worker, {"op": "open", "endpoint": endpoint, "options": {}, "clients": 1},
                f"open {target.name}/{path} read-only")
        modes = hello["capabilities"].get("modes", [])
        read = next((s for s in variant.steps if s.name.startswith("select-") and s.mode in modes),
                    next(s for s in variant.steps if s.name == "scan-items"))
        self._step(worker, target, path, read, hello)
        update = next(s for s in variant.steps if s.name == "update")
        mode = next((m for m in ("prepared", "extended", "literal") if m in modes), "literal")
        update = update.model_copy(update={"mode": mode, "reset": []})
        before = self._check(target, update)
        answer = self.ask(worker, {**self._message(target, update), "verify": True})
        where = f"{target.name}/{path} read-only: {update.sql}"
        error = answer.get("error") or {}
        self.expect(not answer["ok"], f"{where}: the write succeeded; the session must be read-only "
                                      "(protocol/PROTOCOL.md, read_only)")
        if error.get("kind") == "unsupported":  # a reader that writes nothing at all
            self.outcome.note(f"{target.name} read-only: the write is unsupported: {error.get('message')}")
        else:
            self.expect(error.get("kind") == "db", f"{where}: answered {error}, want an error of kind db from the server")
            want = described(target.dbms).conformance.read_only_sqlstate
            caps = hello["capabilities"]
            if want and not (caps.get("sqlstate") in ("by kind", "none") and "sqlstate" not in error):
                self.expect(error.get("sqlstate") == want, f"{where}: sqlstate {error.get('sqlstate')}, want {want}")
        self.expect(self._check(target, update) == before, f"{where}: the table changed")
        self._step(worker, target, path, read, hello)  # still usable after the refusal
        self.ok(worker, {"op": "close"}, "close")

    def _connections(self, worker: WorkerProcess, target: Target) -> None:
        """After every step in every mode, the worker holds no more connections to the server
        than its catalog says (``connections``): the runner counts them against a session
        pooler's pool and a server's max_connections. A tier method's app server holds one
        per process (``Method.app_server``)."""
        held = connections_to(worker.proc.pid, target.endpoint("tcp")["port"])
        allowed = self.method.app_server or self.method.connections
        self.expect(held <= allowed, f"{target.name}/tcp: after its steps the worker holds {held} connections to the "
                                     f"server; its catalog entry says {allowed} (connections = N)")

    def _message(self, target: Target, step: Step) -> dict:
        return step_message(step, target.dbms, self.seed, self.tables)

    def _reference(self, target: Target, step: Step, message: dict) -> tuple[int, str, str | None, int | None]:
        """(rows, checksum, check, statements) as the runner's own connection sees the step's
        effect; statements: a load's, per operation, loaded lazily (one per parent and child).
        A read of tables the script never writes is the same for every method and path: made
        once per target (``References``)."""
        key = self.references.key(target, step, message)
        if key in self.references.made:
            return self.references.made[key]
        found = self._made_reference(target, step, message)
        if key is not None:
            self.references.made[key] = found
        return found

    def _made_reference(self, target: Target, step: Step, message: dict) -> tuple[int, str, str | None, int | None]:
        checksum, rows, statements = Checksum(), 0, None
        values = generated_rows(message["params"], step.iterations)
        if step.kind == "scan":
            with target.reading() as read:
                for _ in range(step.iterations):
                    checksum.add_rows(read(step.sql_on(target.dbms)))
            rows = checksum.rows
        elif step.kind == "load":
            sent = []  # a lazy load sends what the reference sends: one statement per parent and per child
            with target.reading() as read:
                def query(sql, params=()):
                    sent.append(sql)
                    return read(sql, params)
                for v in values:
                    checksum.add_rows(association.entities(query, message["sql"], v,
                                                           message["shape"]["table_columns"], message["load"]))
            rows, statements = checksum.rows, len(sent) // max(1, len(values))
        elif step.kind == "exec" and step.reads_rows:
            with target.reading() as read:
                for v in values:
                    checksum.add_rows(read(step.sql_on(target.dbms), v))
            rows = checksum.rows
        elif step.kind in ("exec", "batch"):
            for sql in step.reset:
                target.execute(sql)
            for v in values:
                rows += target.changes(step.sql_on(target.dbms), v)
        return rows, checksum.hexdigest(), self._check(target, step), statements

    def _unmapped(self, step: Step, target: Target, hello: dict) -> str | None:
        """Why the runner would not send ``step`` to this layer: a feature of its shape the
        layer's hello does not map (with its reason); None for a driver, or a mapped shape. A
        layer must say, for every feature, that it maps it or why not — or say nothing, when its
        API is SQL text (polars' read_database), and then answer "api": "raw" every time."""
        shapes = hello["capabilities"].get("shapes")
        if not self.method.layer or shapes is None:
            return None
        listed = set(shapes.get("maps", [])) | set(shapes.get("unsupported", {})) if isinstance(shapes, dict) else set()
        self.expect(listed >= set(FEATURES), f"hello: capabilities.shapes must list every feature as mapped or "
                                             f"unsupported (missing: {', '.join(sorted(set(FEATURES) - listed))})")
        return unmapped(self._message(target, step), shapes, self.method.layer)

    def _statements(self, answer: dict, message: dict, lazy: int | None, where: str) -> None:
        """A load's verification says how many statements it sent: a driver exactly what its
        strategy sends by hand (PROTOCOL.md, Loading associations), a layer at least one per
        operation."""
        sent = answer.get("statements")
        self.expect(isinstance(sent, int) and sent >= answer.get("n", 1),
                    f"{where} (verify): a load answers 'statements', the statements it sent: got {sent!r}")
        if self.method.layer:
            return
        strategy = message["load"]["strategy"]
        want = {"joined": 1, "selectin": 1 + len(message["load"]["levels"]),
                "lazy": lazy}[strategy]
        self.expect(sent == want * answer["n"], f"{where} (verify): sent {sent} statements, want {want} per "
                                                f"{strategy} load × {answer['n']}")

    def _dump(self, answer: dict, where: str) -> None:
        """The rows a verification pass dumps (to explain a mismatch) are the rows it read:
        their checksum is the pass's own, and there are as many as asked for or read."""
        dump = answer.get("dump")
        self.expect(isinstance(dump, list), f"{where} (verify): no 'dump' of the rows read")
        checksum = Checksum()
        try:
            checksum.add_rows([[native(v) for v in row] for row in dump])
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise Difference(f"{where} (verify): a dumped value is not a typed value: {e}") from None
        self.expect(len(dump) == min(DUMP, answer.get("rows") or 0),
                    f"{where} (verify): dumped {len(dump)} rows of {answer.get('rows')}")
        if len(dump) == answer.get("rows"):
            self.expect(checksum.hexdigest() == answer.get("checksum"),
                        f"{where} (verify): the dumped rows checksum {checksum.hexdigest()}, the pass "
                        f"{answer.get('checksum')}")

    def _check(self, target: Target, step: Step) -> str | None:
        if not step.check:
            return None
        checksum = Checksum()
        checksum.add_rows(target.query(step.check))
        return f"{checksum.hexdigest()}/{checksum.rows}"

    def _step(self, worker: WorkerProcess, target: Target, path: str, step: Step, hello: dict) -> None:
        where = f"{target.name}/{path} step {step.name}"
        if self._skips(target, step, hello):
            return
        deviating = hello["capabilities"].get("deviations", {}).get(target.dbms, {})
        if step.name == "scan-types" and deviating:  # the method says how it reads these types otherwise
            kept = [c for c, t in types_columns(target.dbms).items() if t not in deviating]
            step = step.model_copy(update={"sql": f"SELECT {', '.join(kept)} FROM conf_types", "sql_for": {}})
            for kind, how in deviating.items():
                self.outcome.note(f"{kind} on {target.dbms}: {how} (left out of its check of every type)")
        message = self._message(target, step)
        want_rows, want_checksum, want_check, want_statements = self._reference(target, step, message)
        for sql in step.reset:
            target.execute(sql)
        answer = self.ask(worker, {**message, "verify": True, **({"dump": DUMP} if step.reads_rows else {})})
        if not answer["ok"]:
            error = answer.get("error", {})
            self.expect(error.get("kind") == "unsupported", f"{where} (verify): {error}")
            self.outcome.note(f"{step.name} on {target.dbms}: {error.get('message')}")  # once, not once per path
            return
        self.expect(answer.get("n") == (step.iterations if step.kind != "batch" else -(-step.iterations // step.batch)),
                    f"{where} (verify): n = {answer.get('n')}")
        self.expect(answer.get("rows") == want_rows, f"{where} (verify): rows = {answer.get('rows')}, want {want_rows}")
        if step.kind == "load":
            self._statements(answer, message, want_statements, where)
        self.expect(answer.get("api") in (None, "raw") and (answer.get("api") is None or self.method.layer),
                    f"{where} (verify): api = {answer.get('api')!r}: only a layer answers \"api\": \"raw\"")
        if self.method.layer and "shapes" not in hello["capabilities"]:
            self.expect(answer.get("api") == "raw", f"{where} (verify): a layer whose hello lists no shapes runs SQL "
                                                    f"text, and answers \"api\": \"raw\"")
        if step.reads_rows:
            self.expect(answer.get("checksum") == want_checksum,
                        f"{where} (verify): checksum {answer.get('checksum')}, want {want_checksum}")
            self._dump(answer, where)
        if want_check:
            got = self._check(target, step)
            self.expect(got == want_check, f"{where} (verify): the table after it checksums {got}, want {want_check}")
        if hello["capabilities"].get("load", {}).get("by") == "duration":
            return  # measured under load only (a tier method): its loaded steps are checked in _loaded
        for sql in step.reset:
            target.execute(sql)
        self._timed(worker, message, want_rows, where)

    def _skips(self, target: Target, step: Step, hello: dict) -> bool:
        """Whether the step is not for this worker on this target (noted where it has a reason)."""
        if why := target.refuses_step(step):  # as the runner refuses it (DuckDB's workers only read)
            self.outcome.note(f"{step.name} on {target.dbms}: {why}")
            return True
        if step.mode == "record" and "record" not in hello["capabilities"].get("modes", []):
            return True  # record-level access is for workers that list it (MariaDB's HANDLER)
        if step.kind not in hello["capabilities"].get("kinds", [step.kind]):
            return True  # a kind the worker does not list is never sent to it (load, page)
        if why := self._unmapped(step, target, hello):
            self.outcome.note(f"{step.name} on {target.dbms}: {why}")
            return True
        return False

    def _timed(self, worker: WorkerProcess, message: dict, want_rows: int, where: str) -> None:
        """A timed pass: its counts, its rows, and a latency file that adds up to its time."""
        latency_file = os.path.join(self.workdir, "latencies.bin")
        answer = self.ok(worker, {**message, "latency_file": latency_file}, f"{where} (timed)")
        for key in ("n", "elapsed_ns", "rows", "user_ns", "sys_ns", "first_op_ns"):
            self.expect(isinstance(answer.get(key), int), f"{where} (timed): no integer '{key}' in {answer}")
        self.expect(answer["rows"] == want_rows, f"{where} (timed): rows = {answer['rows']}, want {want_rows}")
        size = os.path.getsize(latency_file) if os.path.exists(latency_file) else -1
        self.expect(size == 8 * answer["n"], f"{where} (timed): latency file has {size} bytes for n = {answer['n']}")
        latencies = Path(latency_file).read_bytes()
        total = sum(int.from_bytes(latencies[i:i + 8], "little") for i in range(0, len(latencies), 8))
        self.expect(abs(total - answer["elapsed_ns"]) <= max(1000, answer["elapsed_ns"] // 100),
                    f"{where} (timed): latencies add up to {total} ns, elapsed_ns is {answer['elapsed_ns']}")
        os.remove(latency_file)

    def _loaded(self, worker: WorkerProcess, target: Target, path: str, variant: Variant, caps: dict) -> None:
        """Steps under load: by duration with several clients (one for a worker that runs a
        client per process), open loop at a rate, and each connection policy it lists."""
        mode = next((m for m in ("prepared", "extended", "literal") if m in caps.get("modes", ["prepared"])), None)
        # a method with no statement mode (a layer over mysqlclient, which binds on the client and
        # offers neither) is loaded with the script's scan instead
        step = next(s for s in variant.steps if (s.name == f"select-{mode}" if mode else s.kind == "scan"))
        clients = 1 if caps.get("concurrency") == PROCESSES else 3
        base = {**self._message(target, step), "histogram": True, "clients": clients}
        # these check the protocol, not a figure: 50 ms holds many operations per client and,
        # at 500/s, an open-loop schedule of 25 starts (where one landing late or skipped shows);
        # the start is 100 ms ahead, and the checks hold however late a worker reaches it. A
        # closed loop keeps both cores busy for its duration: longer ones cost every check
        # CPU and say nothing more of the protocol.
        ms = 50
        cases = [(f"closed loop, {clients} client{'s' if clients > 1 else ''}, {ms} ms", {"duration_ms": ms}),
                 (f"open loop, 500/s uniform, {ms} ms", {"duration_ms": ms, "rate": 500.0, "arrival": "uniform",
                                                         "schedule_seed": 7}),
                 (f"open loop, 500/s uniform, 3 ms phase, {ms} ms",
                  {"duration_ms": ms, "rate": 500.0, "arrival": "uniform", "schedule_seed": 7, "phase_ns": 3_000_000}),
                 ("by count", {})]
        if caps["load"].get("by") == "duration":  # closed loops by duration only (a load generator's)
            cases = cases[:1]
        cases += [(f"policy {p}", {"duration_ms": ms, "policy": p, "pool_size": 2})
                  for p in caps["load"].get("policies", []) if p != "persistent"]
        for what, extra in cases:
            where = f"{target.name}/{path} loaded step ({what})"
            start_at = time.time_ns() + 100_000_000
            answer = self.ok(worker, {**base, **extra, "start_at_unix_ns": start_at}, where)
            ended = time.time_ns()
            for key in ("n", "elapsed_ns", "rows", "user_ns", "sys_ns", "late", "skipped"):
                self.expect(isinstance(answer.get(key), int), f"{where}: no integer '{key}' in {answer}")
            if caps["load"].get("histogram", True):  # ab prints a percentile table, not a distribution
                histogram = answer.get("histogram") or {}
                counted = sum(c for _, c in histogram.get("buckets", [])) + histogram.get("overflow", 0)
                self.expect(counted == answer["n"], f"{where}: the histogram counts {counted} operations, n is {answer['n']}")
            per_client = answer.get("per_client") or []
            if per_client or caps["load"].get("by") != "duration":  # a load generator may not say (ab, wrk)
                self.expect(len(per_client) == clients and sum(c["n"] for c in per_client) == answer["n"],
                            f"{where}: per_client {per_client} does not add up to {clients} clients and n = {answer['n']}")
            self.expect(answer["n"] > 0, f"{where}: no operation ran")
            if "duration_ms" in extra:
                self.expect(answer["elapsed_ns"] >= extra["duration_ms"] * 1_000_000 * 0.99,
                            f"{where}: elapsed {answer['elapsed_ns']} ns, shorter than the duration")
                self.expect(ended >= start_at + extra["duration_ms"] * 1_000_000,
                            f"{where}: answered before start_at + duration: the barrier was not kept")
            else:
                self.expect(answer["n"] == step.iterations * clients,
                            f"{where}: n = {answer['n']}, want {step.iterations} per client")
            if "rate" in extra:
                # uniform arrivals dealt to the clients in turn after the phase; none starts
                # at or after the duration (PROTOCOL.md, steps under load)
                want = uniform_starts_within(extra["rate"], clients, extra["duration_ms"] * 1_000_000,
                                             extra.get("phase_ns", 0))
                self.expect(answer["n"] + answer["skipped"] == want,
                            f"{where}: {answer['n']} operations and {answer['skipped']} skipped; the schedule "
                            f"has {want} intended starts inside the duration")

    def _error(self, worker: WorkerProcess, target: Target, path: str, caps: dict) -> None:
        answer = self.ask(worker, {"op": "step", "kind": "scan", "iterations": 1, "fetch": True,
                                   "sql": "SELECT * FROM conformance_no_such_table", "params": [], "verify": True})
        error = answer.get("error") or {}
        self.expect(not answer["ok"] and error.get("kind") == "db",
                    f"{target.name}/{path}: a query of a missing table answered {answer}, want an error of kind db")
        # a layer that names only some kinds of error (capabilities.sqlstate "by kind") may
        # answer this one without a SQLSTATE, never with another
        want = described(target.dbms).conformance.missing_table_sqlstate
        if want and not (caps.get("sqlstate") in ("by kind", "none") and "sqlstate" not in error):
            self.expect(error.get("sqlstate") == want, f"{target.name}/{path}: sqlstate {error.get('sqlstate')}, want {want}")


@dataclass
class References:
    """The references of reads whose answer no method can change: reads (no reset, no check) of
    tables that no statement of the script writes, neither a step nor a reset. The others are
    made before each step, since a method that answers a write ``unsupported`` leaves the tables
    otherwise than one that makes it."""

    unchanging: frozenset[str]             # the steps (by name) whose references are kept
    made: dict = field(default_factory=dict)

    @classmethod
    def of(cls, variant: Variant) -> "References":
        import sqlglot
        from sqlglot import exp

        def tables(sql: str) -> set[str] | None:
            try:
                return {t.name.lower() for t in sqlglot.parse_one(sql).find_all(exp.Table)}
            except sqlglot.errors.SqlglotError:
                return None

        written: set[str] = set()
        reads: dict[str, set[str] | None] = {}
        for step in variant.steps:
            texts = [t for t in {step.sql, *step.sql_for.values()} if t]
            if step.kind in ("scan", "load") or (step.kind == "exec" and step.reads_rows
                                                 and " returning " not in (step.sql or "").lower()):
                if not step.reset and not step.check:
                    found = [tables(t) for t in texts]
                    reads[step.name] = None if None in found else set().union(*found)
                    continue
            for sql in [*texts, *step.reset]:
                named = tables(sql)
                if named is None:
                    return cls(frozenset())  # a write whose tables are not known: keep nothing
                written |= named
        return cls(frozenset(name for name, named in reads.items() if named is not None and not named & written))

    def key(self, target: Target, step: Step, message: dict) -> tuple | None:
        if step.name not in self.unchanging:
            return None
        return target.name, json.dumps(message, sort_keys=True, default=str)


def prepare(dbms: str, workdir: str, variant: Variant, seed: int) -> Target:
    target = make(dbms)
    if "tls" in target.helps:  # servers serve TLS too: workers are held to the protocol's TLS keys
        target.authority = Authority(os.path.join(workdir, f"tls-{dbms}"))
    target.start(workdir)
    try:
        _fill(target, dbms, variant, seed)
    except BaseException:
        target.stop()  # a server that started is never left behind
        raise
    return target


def _fill(target: Target, dbms: str, variant: Variant, seed: int) -> None:
    target.create(variant.tables)
    for table in variant.tables:
        target.load(table, table_rows(table, seed))
    target.execute("DROP TABLE IF EXISTS conf_types")
    target.execute(types_ddl(dbms))
    marks = ", ".join("?" * len(types_rows(dbms)[0]))
    for row in types_rows(dbms):
        target.changes(f"INSERT INTO conf_types VALUES ({marks})", row)


def check(methods: list[Method], progress: Callable[[str], None] = lambda _: None) -> list[Outcome]:
    """Run every method through the kit, starting the servers their DBMSs need once."""
    suite = script()
    variant, seed = suite.variants[0], suite.seed
    vectors = load_vectors()
    needed = sorted({d for m in methods for d in m.dbms})
    workdir = tempfile.mkdtemp(prefix="accessbench-conformance-")
    os.chmod(workdir, 0o755)
    targets: dict[str, Target] = {}
    references = References.of(variant)
    outcomes = []
    try:
        stranger = Authority(os.path.join(workdir, "tls-stranger")) if needed else None
        for dbms in needed:
            progress(f"starting {dbms}")
            targets[dbms] = prepare(dbms, workdir, variant, seed)
        for method in methods:
            progress(f"checking {method.name}")
            why = method.missing()
            if why:
                outcomes.append(Outcome(method.name, passed=False, failure=f"unavailable: {why}"))
                continue
            outcomes.append(Check(method, targets, workdir, seed, stranger, references).run(vectors, variant))
    finally:
        for target in targets.values():
            target.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return outcomes
