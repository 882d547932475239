"""Ruby pages under Puma: the Rack app (workers/ruby/config.ru, lib/accessbench/web.rb) in
Puma's cluster mode, worker processes of one thread each, so a process serves one request at a
time and a persistent connection belongs to its process (as gunicorn's sync workers). Debian's
puma and ruby-rack on Debian's Ruby, with the Ruby worker's own drivers (ruby-pg, ruby-mysql2)."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache

from ...methods.toolchains import LIBRARY_PROBES
from ...worker_process import workers_dir
from .base import STATIC_PAGE, TFB_PAGES, AppServer


@cache
def _rack() -> bool:
    """Whether Ruby finds Rack (Debian's ruby-rack; Puma runs without it, the pages do not), by
    the probe the Ruby methods' libraries are found by."""
    try:
        done = subprocess.run([*LIBRARY_PROBES["ruby"], "rack"], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return done.stdout.split() == ["rack"]


class Puma(AppServer):
    name = "puma"
    pages = {**AppServer.pages, **TFB_PAGES}
    binaries = ("ruby", "puma")

    @classmethod
    def missing(cls) -> str | None:
        absent = super().missing()
        if absent:
            return absent
        if not (workers_dir() / "ruby" / "config.ru").exists():
            return "the Ruby pages are not in the workers directory (workers/ruby/config.ru)"
        return None if _rack() else "ruby-rack not installed (make setup installs it)"

    def commands(self) -> list[list[str]]:
        self.env = {**self.env, "ACCESSBENCH_STATIC_PAGE": str(STATIC_PAGE)}
        # --no-config: no config/puma.rb of the working directory; -e production: no development
        # defaults; --preload: the app loaded once, before the workers fork (it connects nothing)
        return [[shutil.which("puma") or "puma", "--no-config", "--environment", "production",
                 "--bind", f"tcp://127.0.0.1:{self.port}", "--workers", str(self.processes), "--threads", "1:1",
                 "--preload", "--pidfile", str(self.dir / "puma.pid"), "--quiet", "--tag", "accessbench",
                 str(workers_dir() / "ruby" / "config.ru")]]

    def settings(self) -> dict[str, str]:
        version = subprocess.run(["ruby", "-e", "print Gem::Specification.find_by_name('puma').version, ' ', "
                                  "Gem::Specification.find_by_name('rack').version, ' ', RUBY_VERSION"],
                                 capture_output=True, text=True).stdout.split()
        puma, rack, ruby = (version + ["?", "?", "?"])[:3]
        return {"app server": f"Puma {puma} (Rack {rack}) on Ruby {ruby} (Debian's), cluster mode: "
                              f"{self.processes} worker processes of one thread each (--threads 1:1), so a process "
                              "serves one request at a time and a persistent connection belongs to its process; the "
                              "app loaded before they fork (--preload), connecting nothing",
                "keep-alive": "on (Puma's defaults): a connection belongs to the process that accepted it (which "
                              "accepts only while its thread is free) and is kept 20 s idle; its next request is "
                              "awaited 0.2 s on the thread, then by the process's reactor; after 10 requests in a "
                              "row Puma closes it when another connection waits to be accepted",
                "access log": "off"}
