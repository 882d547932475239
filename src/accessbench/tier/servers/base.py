"""What an app server is to the tier worker: started on a loopback port it picks, as an
unprivileged user, in a directory of its own; asked for its pages by URL; its processes'
CPU read around a trial; stopped, with every process it started, at the end."""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import ClassVar

from ...cputime import TICK_NS, descendants, reaped_ticks
from ...net import PORT_TAKEN, on_a_free_port

# The URLs of TechEmpower's tests' pages (tier/tfb.py) in the Python and Node pages.
TFB_PAGES = {"db": "/db", "queries": "/queries", "fortunes": "/fortunes", "updates": "/updates"}

# Where the pages and the static page live in the checkout.
ROOT = Path(__file__).resolve().parents[4]
STATIC_PAGE = Path(__file__).resolve().parents[1] / "static.html"
UNPRIVILEGED = "www-data"  # as root, app servers run as Debian's web user, as its packages do


class ServerFailed(Exception):
    """The app server could not start or stopped answering; the message says why."""


def die_with_parent() -> None:
    """In the child before exec: a signal when the tier worker dies, however it dies (a
    SIGKILL from a timed-out runner included), so that no app server outlives its run."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def run_as() -> dict:
    """subprocess arguments that run a server unprivileged: as www-data when we are root."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam(UNPRIVILEGED)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def give_to_server(path: Path) -> None:
    """The server's user owns its directory (as root; otherwise it is ours already)."""
    if os.geteuid() == 0:
        user = pwd.getpwnam(UNPRIVILEGED)
        for p in [path, *path.rglob("*")]:
            os.chown(p, user.pw_uid, user.pw_gid)


class AppServer:
    """One app server kind per module. A subclass names itself, writes its configuration in
    ``configure`` and gives the command that runs it in the foreground."""

    name: ClassVar[str] = ""
    binaries: ClassVar[tuple[str, ...]] = ()  # what must be installed (make setup installs it)
    pages: ClassVar[dict[str, str]] = {"static": "/static.html", "hello": "/hello", "op": "/op"}

    def __init__(self, directory: Path, tier_dir: Path, env: dict[str, str], processes: int) -> None:
        self.dir = directory          # the server's own files: configuration, pid, logs, sockets
        self.tier_dir = tier_dir      # endpoint.json and steps/ (docs/tier.md)
        self.env = env                # the pages' environment (ACCESSBENCH_TIER_DIR, the password)
        self.processes = processes    # worker processes (prefork children, FPM children, gunicorn workers)
        self.port = 0
        self.procs: list[subprocess.Popen] = []

    @classmethod
    def missing(cls) -> str | None:
        absent = [b for b in cls.binaries if not (shutil.which(b) or os.path.exists(b))]
        return f"{', '.join(absent)} not installed (make setup installs it)" if absent else None

    def settings(self) -> dict[str, str]:
        """Every setting of the stack that changes behaviour, in words a reader can check."""
        return {}

    def commands(self) -> list[list[str]]:
        """The processes to start, in order, each in the foreground (the last one serves HTTP)."""
        raise NotImplementedError

    def configure(self) -> None:
        """Write the configuration into ``self.dir`` (``self.port`` is chosen)."""

    def url(self, page: str, query: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{self.pages[page]}{'?' + query if query else ''}"

    def start(self, timeout: float = 30.0) -> None:
        on_a_free_port(lambda port: self._start_on(port, timeout))

    def _start_on(self, port: int, timeout: float) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.procs = []
        self.configure()
        give_to_server(self.dir)
        commands = self.commands()
        # As root the pages run as the web user, with its home: libpq reads ~/.postgresql's client
        # certificate whenever it starts TLS, and root's home is closed to the web user.
        home = {"HOME": pwd.getpwnam(UNPRIVILEGED).pw_dir} if os.geteuid() == 0 else {}
        env = {**os.environ, **home, **self.env}
        log = self.log = open(self.dir / "server.log", "ab")
        since = log.tell()  # this start's own lines
        for command in commands:
            self.procs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                               cwd=self.dir, preexec_fn=die_with_parent, **run_as()))
            self._started(self.procs[-1])
        deadline = time.monotonic() + timeout
        while True:  # until the static page answers
            try:
                with urllib.request.urlopen(self.url("static"), timeout=2) as r:
                    if r.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            dead = [p for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                with open(self.dir / "server.log", "rb") as f:
                    f.seek(since)
                    lines = f.read().decode(errors="replace").strip().splitlines()
                taken = [line for line in lines if PORT_TAKEN.search(line)][-1:]  # among a retrying server's lines
                tail = taken + [line for line in lines[-3:] if line not in taken]
                why = f"exited with status {dead[0].returncode}" if dead else f"did not answer within {timeout:g} s"
                raise ServerFailed(f"{self.name} {why}" + (f": {' / '.join(tail)}" if tail else ""))
            time.sleep(0.05)

    def _started(self, proc: subprocess.Popen) -> None:
        """After each process starts (FPM's socket must exist before Apache is asked)."""

    def cpu_ns(self) -> tuple[int, int]:
        """User and system CPU of every process of the app server so far, children it has
        reaped included (a prefork child that exited mid-trial still counts), at the
        clock-tick resolution of /proc."""
        user = system = 0
        for pid in descendants({p.pid for p in self.procs if p.poll() is None}):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    own = [int(x) for x in f.read().rsplit(")", 1)[1].split()[11:13]]
            except (OSError, ValueError):
                continue
            reaped = reaped_ticks(pid)
            user += own[0] + reaped[0]
            system += own[1] + reaped[1]
        return user * TICK_NS, system * TICK_NS

    def stop(self) -> None:
        """SIGTERM to each process (the servers stop their children on it), newest first;
        SIGKILL to what is left after a grace period."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pid in self._orphans():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.procs = []
        if getattr(self, "log", None) is not None:
            self.log.close()
            self.log = None

    def _orphans(self) -> list[int]:
        """Processes still running with this server's directory as their working directory."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.readlink(f"/proc/{entry}/cwd") == str(self.dir):
                        found.append(int(entry))
                except OSError:
                    pass
        return found
