"""Perl pages under Starman: the PSGI application (workers/perl/app.psgi, AccessBench::Web) in
Starman's preforked worker processes, each serving one request at a time (the process's
connection belongs to it), on Debian's perl with the Perl worker's modules on its path.

Two of Starman's defaults are changed, each because it would change what is measured:

- keep-alive. Starman keeps a connection on the process that accepted it until the client has
  been idle for a second, with no cap on its requests (Apache has ``MaxKeepAliveRequests``), so
  under wrk, whose connections are never idle, the connections beyond the N processes would get
  no answer in the whole trial while the first N are served: ``--disable-keepalive`` closes the
  connection after each answer and every connection queues for a process again, as under
  gunicorn's sync workers.
- ``--max-requests``. Starman replaces a process after 1,000 connections (Net::Server counts
  connections, not requests): without keep-alive, every 1,000 requests, and with it the
  process's connection and statements, mid-trial. It is set far beyond a run's requests, so a
  process lives as long as the app server, as gunicorn's and Apache's do by default."""

from __future__ import annotations

import shutil
import subprocess

from ...worker_process import workers_dir
from .base import STATIC_PAGE, TFB_PAGES, AppServer

MAX_REQUESTS = 1_000_000_000  # connections a process serves before Starman replaces it: never, in a run


class Starman(AppServer):
    name = "starman"
    pages = {**AppServer.pages, **TFB_PAGES}
    binaries = ("starman",)

    @classmethod
    def missing(cls) -> str | None:
        if shutil.which("starman") is None:
            return "starman is not installed (make system-deps installs it)"
        if not (workers_dir() / "perl" / "app.psgi").exists():
            return "the Perl pages are not here: workers/perl/app.psgi"
        return None

    def commands(self) -> list[list[str]]:
        # ACCESSBENCH_RUN_DIR: where the Perl worker's code keeps the files it makes (Connector/C's
        # option file for a pinned tls_version): the server's own directory, which its user owns
        self.env = {**self.env, "ACCESSBENCH_STATIC_PAGE": str(STATIC_PAGE), "ACCESSBENCH_RUN_DIR": str(self.dir)}
        perl = workers_dir() / "perl"
        # --env deployment: Plack adds no middleware (no access log, no Lint, no StackTrace)
        return [["starman", "--listen", f"127.0.0.1:{self.port}", "--workers", str(self.processes),
                 "--disable-keepalive", "--max-requests", str(MAX_REQUESTS), "--env", "deployment",
                 "--pid", str(self.dir / "starman.pid"), "-I", str(perl / "lib"), str(perl / "app.psgi")]]

    def settings(self) -> dict[str, str]:
        def said(command: list[str]) -> str:
            try:
                return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip() or "?"
            except OSError:
                return "?"

        starman = said(["starman", "--version"]).removeprefix("Starman ")
        perl, plack = (said(["perl", "-MPlack", "-e", "printf '%vd %s', $^V, $Plack::VERSION"]).split() + ["?", "?"])[:2]
        return {"app server": f"Starman {starman} (Plack {plack}) on Perl {perl} (Debian's), {self.processes} preforked "
                              "worker processes, each serving one request at a time, so a persistent connection "
                              "belongs to its process; the application loaded in each process after it forks "
                              "(no --preload-app); --max-requests " f"{MAX_REQUESTS:,} (Starman's 1,000 would "
                              "replace a process, its connection with it, every 1,000 connections)",
                "keep-alive": "none (--disable-keepalive): Starman closes the connection after each response, as "
                              "gunicorn's sync workers do (with keep-alive, a connection keeps its process until "
                              "idle for 1 s, so wrk's connections beyond the processes would wait the whole trial)",
                "access log": "off (--env deployment: no Plack middleware)"}
