"""The tier worker's message loop (protocol/PROTOCOL.md), for one tier method: ``open``
starts the method's app server over the endpoint; a ``step`` writes the step for the pages
(docs/tier.md) and is answered by the operation page's verify form (a verification pass) or
by the load generator against the page (a loaded trial); ``close`` stops the app server.

The clock of a trial is the load generator's: it times every request from its side of the
HTTP connection, as a user's browser would see the page (app server, page and database
together). The app server's CPU is read around the trial from /proc; on a page of
TechEmpower's tests, where each request's time went is read on one of the load's connections,
which the tier worker drives itself (tier/sampler.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import nullcontext
from pathlib import Path

from ..protocol import PROTOCOL_VERSION, generators, sqltext, vectors
from ..protocol.prng import derive_seed
from ..pyworker.host import error_answer, failure, generate, histogram, serve
from . import tfb
from .languages import LANGUAGES, printed
from .loadgen import GENERATORS, LoadFailed, whole_seconds
from .sampler import Sampler
from ..methods import catalog
from .methods import METHODS, TierMethod, settings_of
from .settings import PROCESSES
from .servers import SERVERS, ServerFailed
from ..targets.base import TargetUnavailable, server_can_enter
from ..worker_process import WorkerFailed, WorkerProcess
from .servers.base import STATIC_PAGE, TICK_NS, UNPRIVILEGED, give_to_server

HELLO = b"Hello, world!\n"
FORTUNES_SHOWN = 1000  # rows of the fortunes verify form's dump: more than one request's


class Failed(Exception):
    """Answered as ``{"ok": false}`` with this kind (``unsupported``, ``db``, ``internal``)."""

    def __init__(self, kind: str, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.sqlstate = kind, sqlstate


class Session:
    def __init__(self, method: TierMethod, chosen: dict[str, str], name: str, why: str | None = None) -> None:
        self.method, self.chosen, self.name, self.why = method, chosen, name, why
        self.server = None
        self.dir: Path | None = None
        self.dbms = ""
        self.rows_per_op: dict[str, float] = {}  # per step file: rows one operation read (verification)
        self.tests: dict[str, tuple[int, int, int]] = {}  # a TechEmpower test's step file: queries, keys lo, hi
        self.page_driver: WorkerProcess | None = None  # the page driver's own worker (_ask_page_driver)

    def handle(self, msg: dict) -> dict:
        if self.why and msg.get("op") != "bye":  # a name it cannot honour: every message says why
            raise Failed("unsupported", self.why)
        handler = getattr(self, f"on_{msg.get('op')}", None)
        if handler is None:
            raise Failed("protocol", f"unknown op {msg.get('op')!r}")
        return {"ok": True, **handler(msg)}

    # --- what the method is -------------------------------------------------------------------
    def on_hello(self, msg: dict) -> dict:
        m = self.method
        server = SERVERS[self.chosen["server"]]
        generator = GENERATORS[self.chosen["load"]]
        language = LANGUAGES[m.language]
        settings = {"pages": f"{m.language} pages ({language.pages})", "processes": str(PROCESSES)}
        settings.update(server(Path("."), Path("."), {}, PROCESSES).settings())
        settings.update(generator(Path(".")).settings())
        settings["connection policy"] = ("per-request: connect and disconnect inside each page; persistent: "
                                         + language.persistent)
        settings["where a request's time went"] = (
            "on TechEmpower's pages, one of a trial's C connections is the tier worker's own, as the load generator "
            "drives its others (C - 1): it reads each answer's Server-Timing (db, app), and its requests count in the "
            "trial's (tier/sampler.py)")
        settings.update({mode: f"unsupported: {why}" for mode, why in m.unsupported})
        settings.update(_page_settings(m, self._ask_page_driver({"op": "hello"})))
        self._close_page_driver()  # nothing of it left idle beside the trials of the cells to come
        return {
            "protocol": PROTOCOL_VERSION, "name": self.name, "language": m.language, "runtime": printed(language.runtime),
            "driver": m.driver, "driver_version": language.driver_version(m.driver), "settings": settings, "methods": sorted(METHODS),
            "capabilities": {
                "dbms": list(m.dbms), "kinds": ["scan", "exec", "page"], "modes": list(m.modes), "batch": "",
                "concurrency": "HTTP connections (the load generator's clients, one request at a time each)",
                # a load generator's closed loop by duration only (no count, no open-loop rate), and
                # a latency distribution only from wrk (ab prints a table of percentiles)
                "load": {"policies": list(m.policies), "by": "duration", "histogram": self.chosen["load"] == "wrk"},
                "cpu_resolution_ns": TICK_NS,
            },
        }

    # --- the app server's life ------------------------------------------------------------------
    def on_open(self, msg: dict) -> dict:
        endpoint = dict(msg["endpoint"])
        password = endpoint.pop("password", None)
        self.dbms = endpoint["dbms"]
        # In the run's work directory, which goes at the end of the run whatever happens here;
        # the app server's user must be able to pass through it.
        run_dir = os.environ.get("ACCESSBENCH_RUN_DIR")
        base = run_dir or tempfile.gettempdir()
        if os.geteuid() == 0:
            try:
                server_can_enter(os.path.join(base, "x"), UNPRIVILEGED)
            except TargetUnavailable as e:
                raise Failed("internal", str(e)) from None
            if run_dir:  # the run's own directory, and nothing else, opened for passing through
                os.chmod(run_dir, os.stat(run_dir).st_mode | 0o011)
        self.dir = Path(tempfile.mkdtemp(prefix="tier-", dir=base))
        os.chmod(self.dir, 0o755)
        tier = self.dir / "pages"
        (tier / "steps").mkdir(parents=True)
        # the page driver as the catalog declares it ([methods.web]): the pages keep no list of their own
        (tier / "endpoint.json").write_text(json.dumps({"method": self.name, "settings": self.chosen,
                                                        "page_driver": self.method.page_driver,
                                                        "endpoint": endpoint}))
        env = {"ACCESSBENCH_TIER_DIR": str(tier)}
        if password:
            env["ACCESSBENCH_DB_PASSWORD"] = password  # the app server's environment only
        server = SERVERS[self.chosen["server"]](self.dir / "server", tier, env, PROCESSES)
        give_to_server(tier)
        start = time.perf_counter_ns()
        try:
            server.start()
        except ServerFailed as e:
            raise Failed("internal", str(e)) from None
        self.server = server
        elapsed = time.perf_counter_ns() - start
        self._connect_once()
        return {"connect_ns": elapsed}

    def _connect_once(self) -> None:
        """What a worker's open does: one connection made and closed by a page, so an endpoint
        its driver cannot reach as asked (TLS it lacks, a certificate of another authority)
        fails here with the driver's message, not at the first step."""
        url = self.server.url("op", "connect=1")
        _answer(url, *_get(url, timeout=120))

    def on_close(self, msg: dict) -> dict:
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return {}

    def on_bye(self, msg: dict) -> dict:
        self._close_page_driver()
        return self.on_close(msg)

    # --- the page driver's own worker (its hello, its checksum: the pages' encoder) -------------
    def _ask_page_driver(self, message: dict) -> dict | None:
        """The answer of the worker whose driver the pages run (``page_driver``), started at the
        first question and kept until bye (the conformance kit asks for some thirty checksums),
        or None where there is no such worker or it did not answer."""
        driver = next((m for m in catalog() if m.name == self.method.page_driver), None)
        if driver is None:
            return None
        try:
            if self.page_driver is None or not self.page_driver.alive:
                self.page_driver = WorkerProcess(driver.command(), os.devnull)
            return self.page_driver.request(message, 60)
        except WorkerFailed:
            self._close_page_driver()
            return None

    def _close_page_driver(self) -> None:
        if self.page_driver is not None:
            self.page_driver.close()
            self.page_driver = None

    def failure(self, e: Exception) -> dict:
        if isinstance(e, Failed):
            return error_answer(e.kind, str(e), e.sqlstate)
        return failure(e)

    # --- a step ---------------------------------------------------------------------------------
    def on_step(self, msg: dict) -> dict:
        if self.server is None:
            raise Failed("protocol", "step before open")
        kind = msg["kind"]
        if kind == "page" and msg["page"] in tfb.PAGES:  # TechEmpower's tests: the page runs the statements
            page = msg["page"]
            if page not in self.server.pages:
                raise Failed("unsupported", f"the {self.method.language} pages have no TechEmpower {page} test")
            # no mode: the method's own, as its framework's test runs it (parameters bound where the
            # driver binds them, else its client-side text: MySQLdb's)
            msg = {**msg, "mode": msg.get("mode") or ("extended" if "extended" in self.method.modes
                                                      else self.method.modes[0])}
            if msg["mode"] not in self.method.modes:
                why = dict(self.method.unsupported).get(msg["mode"], f"it has {', '.join(self.method.modes)}")
                raise Failed("unsupported", f"{self.name} has no {msg['mode']} mode: {why}")
            step_id = self._write_step(msg)
            query = f"step={step_id}"
        elif kind == "page":
            page, query, step_id = msg["page"], "", None
        elif kind == "scan":
            step_id = self._write_step(msg)
            page, query = "op", f"step={step_id}"
        elif kind == "exec":
            if msg.get("mode") not in self.method.modes:
                why = dict(self.method.unsupported).get(msg.get("mode"), f"it has {', '.join(self.method.modes)}")
                raise Failed("unsupported", f"{self.name} has no {msg.get('mode')} mode: {why}")
            step_id = self._write_step(msg)
            page, query = "op", f"step={step_id}"
        else:
            raise Failed("unsupported", f"a tier method serves pages: exec and scan steps (the operation page) "
                                        f"and page steps, not {kind}")
        if msg.get("verify"):
            dump = int(msg.get("dump") or 0) if step_id else 0  # the rows the runner asks to see
            return self._verify(page, query, step_id, dump)
        if not msg.get("duration_ms"):
            raise Failed("unsupported", "a tier method is measured under HTTP load: give the step clients and a "
                                        "duration")
        if msg.get("rate"):
            raise Failed("unsupported", "ab and wrk (as Debian packages them) have no open-loop rate")
        policy = msg.get("policy", "persistent")
        if policy not in self.method.policies:
            raise Failed("unsupported", f"{self.name} has no {policy} connection policy")
        return self._loaded(page, query, step_id, msg)

    def _write_step(self, msg: dict) -> str:
        """The step as the pages read it (docs/tier.md): every argument made here, by the
        shared generators, so that every language's page runs the same operations."""
        params, count = msg.get("params", []), int(msg["iterations"])
        step = {"kind": msg["kind"], "page": msg.get("page"), "sql": msg["sql"], "mode": msg.get("mode"),
                "policy": msg.get("policy", "persistent"), "pool_size": msg.get("pool_size"),
                "fetch": bool(msg.get("fetch")), "params": params, "types": [p.get("type", "int") for p in params],
                "count": count}
        values = generators.rows(params, count)
        step["args"] = [[vectors.to_json(v) for v in row] for row in values]
        if msg.get("page") in tfb.PAGES:
            step.update(queries=msg.get("queries"), write=msg.get("write"))
            if msg.get("write"):  # the verify form's new numbers: the key's range, a stream of their own
                numbers = {**params[0], "seed": derive_seed(params[0]["seed"], "numbers")}
                step["numbers"] = [v for (v,) in generators.rows([numbers], count)]
        if msg.get("mode") == "literal" and msg.get("page") not in tfb.PAGES:  # a test's page draws its own keys
            step["statements"] = [sqltext.inline(msg["sql"], row, self.dbms) for row in values]
        text = json.dumps(step, sort_keys=True)
        step_id = hashlib.sha1(text.encode()).hexdigest()[:16]
        path = self.dir / "pages" / "steps" / f"{step_id}.json"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            os.chmod(tmp, 0o644)
            tmp.rename(path)
        if msg.get("page") in tfb.PAGES:  # what its real answer is held to (_verify_tfb)
            key = params[0] if params else {"lo": 1, "hi": 1}
            self.tests[step_id] = (int(msg.get("queries") or 1), key["lo"], key["hi"])
        return step_id

    def _verify(self, page: str, query: str, step_id: str | None, dump: int = 0) -> dict:
        """Untimed: the operation page's verify form (every argument in order, every value
        checksummed by the page), or a static or hello page read once and compared. A page of
        TechEmpower's tests is also asked once as the load will ask it, and its answer held to
        the test's rules (tier/tfb.py) against the rows the verify form read."""
        if page in tfb.PAGES:
            return self._verify_tfb(page, query, step_id, dump)
        url = self._verify_url(page, query, dump) if step_id else self.server.url(page, "")
        status, body = _get(url)
        if step_id is None:
            expected = STATIC_PAGE.read_bytes() if page == "static" else HELLO
            if status != 200 or body != expected:
                raise Failed("internal", f"{url} answered {status} with {body[:80]!r}, not the {page} page")
            return {"n": 1, "rows": 0}
        answer = _answer(url, status, body)
        self.rows_per_op[step_id] = answer["rows"] / answer["n"] if answer["n"] else 0.0
        return {k: answer[k] for k in ("n", "rows", "values", "checksum", "dump") if k in answer}

    def _verify_url(self, page: str, query: str, dump: int) -> str:
        """The page's verify form: every argument in order, every value checksummed, the first
        ``dump`` rows shown."""
        return self.server.url(page, f"{query}&verify=1" + (f"&dump={dump}" if dump else ""))

    def _verify_tfb(self, page: str, query: str, step_id: str, dump: int) -> dict:
        queries, lo, hi = self.tests[step_id]
        # the fortunes page is held to the rows it read: the verify form shows them (at least as
        # many as the runner asked to see)
        shown = max(dump, FORTUNES_SHOWN) if page == "fortunes" else dump
        url = self._verify_url(page, query, shown)
        answer = _answer(url, *_get(url))
        per_request = answer["rows"] // max(answer["n"], 1)  # the fortunes of one request, as the page showed them
        fortunes = [tuple(map(vectors.native, row)) for row in answer.get("dump", [])][:per_request]
        real = self.server.url(page, query)
        status, content_type, body = _fetch(real)
        wrong = tfb.problem(page, status, content_type, body, queries, lo, hi, fortunes)
        if wrong:
            raise Failed("internal", f"{wrong} ({real})")
        self.rows_per_op[step_id] = answer["rows"] / answer["n"] if answer["n"] else 0.0
        found = {k: answer[k] for k in ("n", "rows", "values", "checksum") if k in answer}
        return {**found, "dump": answer.get("dump", [])[:dump]} if dump else found

    def _loaded(self, page: str, query: str, step_id: str | None, msg: dict) -> dict:
        clients, seconds = int(msg.get("clients", 1)), float(msg["duration_ms"]) / 1000
        generator = GENERATORS[self.chosen["load"]](self.dir)
        url = self.server.url(page, query)
        start_at = msg.get("start_at_unix_ns")
        if start_at:  # the runner's barrier
            time.sleep(max(0.0, (int(start_at) - time.time_ns()) / 1e9))
        # a TechEmpower test's page says where its time went: one of the load's connections reads it
        sampler = Sampler(url, generator.keep_alive) if page in tfb.PAGES and clients > 1 else None
        before = self.server.cpu_ns()
        try:
            with sampler or nullcontext():
                load = generator.run(url, clients - 1 if sampler else clients, seconds)
        except LoadFailed as e:
            raise Failed("internal", str(e)) from None
        after = self.server.cpu_ns()
        if sampler:
            load = sampler.joined(load)
        if load.failed or load.non_2xx:  # never dropped: the cell fails and says how
            _, body = _get(url)
            raise Failed("db", f"{load.failed + load.non_2xx:,} of {load.requests:,} requests failed "
                               f"({load.non_2xx:,} non-2xx, {load.failed:,} without an answer); the page now "
                               f"answers: {body.decode(errors='replace').strip()[:200]}")
        if not load.requests:  # no answer within the trial: nothing was measured, and 0/s would be a figure
            raise Failed("timeout", f"no request was answered within the trial's {whole_seconds(seconds)} s "
                                    f"({generator.name}, {clients} connections): each took longer than the "
                                    "trial; a longer duration measures it")
        answer = {"n": load.requests, "elapsed_ns": load.elapsed_ns,
                  "rows": round(load.requests * self.rows_per_op.get(step_id, 0.0)) if step_id else 0,
                  "user_ns": after[0] - before[0], "sys_ns": after[1] - before[1], "clients": clients,
                  "late": 0, "skipped": 0}  # a closed loop: nothing is scheduled, so nothing is late
        # no per_client: neither ab nor wrk says what each of its connections did
        if load.histogram is not None:
            answer["histogram"] = load.histogram.to_json()
        if sampler and (sampled := sampler.answer()):
            answer["sampled"] = sampled
        return answer

    # --- conformance: the arguments are the shared generators'; the checksum the pages' ----------
    def on_histogram(self, msg: dict) -> dict:  # wrk's latencies go into accessbench's own histogram
        return histogram(msg)

    def on_generate(self, msg: dict) -> dict:
        return generate(msg)

    def on_checksum(self, msg: dict) -> dict:
        """The pages' encoder is their worker's (the page driver's): its own checksum op."""
        answer = self._ask_page_driver({"op": "checksum", "rows": msg["rows"]})
        if not answer or not answer.get("ok"):
            raise Failed("internal", f"{self.method.page_driver}'s checksum: {answer or 'no answer'}")
        return {key: answer[key] for key in ("checksum", "rows")}


def _answer(url: str, status: int, body: bytes) -> dict:
    """A JSON form's answer (verify, connect); its error as the worker's own."""
    try:
        answer = json.loads(body)
    except ValueError:
        raise Failed("internal", f"{url} answered {status}: {body[:200]!r}") from None
    if status != 200 or "error" in answer:
        error = answer.get("error", {})
        raise Failed(error.get("kind", "internal"), error.get("message", f"status {status}"), error.get("sqlstate"))
    return answer


def _page_settings(method, hello: dict | None) -> dict[str, str]:
    """What the pages' own drivers say of their settings (TLS, compression, read-only sessions):
    the ``hello`` of the worker whose driver the pages run (``page_driver``). PHP's pages run the
    very class the PHP worker does, so its words are theirs; Python's and Node's say they are their
    workers' (of TLS and read_only)."""
    said = (hello or {}).get("settings", {})
    if method.language == "php":
        return {key: said[key] for key in ("tls", "compress", "read_only") if said.get(key)}
    return {key: f"as {method.page_driver}'s worker: {said[key]}" for key in ("tls", "read_only") if said.get(key)}


def _get(url: str, timeout: float = 600) -> tuple[int, bytes]:
    status, _, body = _fetch(url, timeout)
    return status, body


def _fetch(url: str, timeout: float = 600) -> tuple[int, str, bytes]:
    """The page's status, Content-Type and body."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()
    except OSError as e:
        raise Failed("internal", f"{url}: {e}") from None


def main(argv: list[str]) -> int:
    base = argv[0].partition("/")[0] if len(argv) == 1 else ""
    if base not in METHODS:
        print(f"usage: python -m accessbench.tier METHOD  (one of {', '.join(METHODS)})", file=sys.stderr)
        return 2
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")  # stdout belongs to the protocol
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    method = METHODS[base]
    chosen, why = settings_of(method, argv[0].partition("/")[2])
    session = Session(method, chosen, argv[0], why)
    try:
        serve(session, sys.stdin, out)
    finally:
        session.on_bye({})  # however the loop ends (stdin closed by a dying runner included)
    return 0
