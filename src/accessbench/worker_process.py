"""A worker process seen from the runner: JSON lines on its stdin/stdout, stderr to a log,
every request answered within a deadline or the process is killed."""

from __future__ import annotations

import configparser
import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path


def workers_dir() -> Path:
    """Where the compiled workers live: the checkout's ``workers/`` (accessbench is installed
    editable from its checkout), or ``ACCESSBENCH_WORKERS_DIR``."""
    override = os.environ.get("ACCESSBENCH_WORKERS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "workers"


class WorkerFailed(Exception):
    """The worker timed out, died or broke the protocol. ``kind`` is timeout|internal|protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def worker_environment(workdir: str) -> dict[str, str]:
    """The environment workers run in: the ODBC driver registry is a private copy of the
    system's with the drivers' own logging off (Debian's odbcinst.ini switches psqlODBC's
    CommLog on, and it writes a file per process into /tmp before any connection string can
    say otherwise). Kept in the run's work directory, so it goes with it."""
    env = dict(os.environ)
    env["ACCESSBENCH_RUN_DIR"] = workdir  # where a worker keeps what it starts (a tier method's app server)
    system = "/etc/odbcinst.ini"
    if os.path.exists(system):
        folder = os.path.join(workdir, "odbc")
        os.makedirs(folder, exist_ok=True)
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.optionxform = str  # keep the keys' case
        parser.read(system)
        for section in parser.sections():
            if parser.has_option(section, "CommLog") or parser.has_option(section, "Debug"):
                parser.set(section, "CommLog", "0")
                parser.set(section, "Debug", "0")
        with open(os.path.join(folder, "odbcinst.ini"), "w") as f:
            parser.write(f)
        open(os.path.join(folder, "odbc.ini"), "a").close()
        env["ODBCSYSINI"] = folder
    return env


class WorkerProcess:
    def __init__(self, command: list[str], log_path: str, env: dict[str, str] | None = None) -> None:
        self.log = open(log_path, "ab")
        # A session of its own: Ctrl-C reaches the runner only, which then ends the
        # worker in order instead of having it die mid-answer.
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
            start_new_session=True, text=True, encoding="utf-8", bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def request(self, message: dict, timeout: float, before_kill=None) -> dict:
        """Send one message and return the worker's answer (``ok`` true or false). With no
        answer in time the worker is killed — after ``before_kill()`` (which cancels what it
        started on the server)."""
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerFailed("internal", f"worker exited (status {self.proc.poll()})") from None
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            if before_kill is not None:
                before_kill()
            self.kill()
            cancelled = "its statement cancelled on the server, " if before_kill is not None else ""
            raise WorkerFailed("timeout", f"no answer within {timeout:g} s; {cancelled}worker killed") from None
        if line is None:
            self.proc.wait()
            raise WorkerFailed("internal", f"worker exited (status {self.proc.returncode}) without answering")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            self.kill()
            raise WorkerFailed("protocol", f"not a JSON answer: {line[:80]!r}") from None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def close(self, timeout: float = 10.0) -> None:
        """Say bye and wait; kill if the worker does not leave."""
        if self.alive:
            try:
                self.request({"op": "bye"}, timeout)
                self.proc.wait(timeout)
            except (WorkerFailed, subprocess.TimeoutExpired):
                pass
        self.kill()
        self.log.close()
