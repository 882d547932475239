"""Python pages under gunicorn: the WSGI app (accessbench.pyworker.web) in sync worker
processes, each serving one request at a time (a persistent connection or a pool belongs to
a process). It runs on the web tier's own Python (`make setup` builds it: Debian's python3,
which the unprivileged user can run, with gunicorn and the drivers at the versions of
accessbench's environment), with accessbench's sources on its path."""

from __future__ import annotations

import subprocess

from .base import ROOT, TFB_PAGES, AppServer

WEB_PYTHON = ROOT / ".cache" / "web-python" / "bin" / "python"


class Gunicorn(AppServer):
    name = "gunicorn"
    pages = {**AppServer.pages, **TFB_PAGES}

    @classmethod
    def missing(cls) -> str | None:
        if not WEB_PYTHON.exists() or not (WEB_PYTHON.parents[1] / ".installed").exists():
            return "the web tier's Python is not built: make setup"
        return None

    def commands(self) -> list[list[str]]:
        self.env = {**self.env, "PYTHONPATH": str(ROOT / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
        return [[str(WEB_PYTHON), "-m", "gunicorn", "accessbench.pyworker.web:app", "--bind", f"127.0.0.1:{self.port}",
                 "--workers", str(self.processes), "--worker-class", "sync", "--pid", str(self.dir / "gunicorn.pid"),
                 "--worker-tmp-dir", str(self.dir), "--log-level", "warning", "--no-control-socket"]]

    def settings(self) -> dict[str, str]:
        version = subprocess.run([str(WEB_PYTHON), "-c", "import gunicorn, platform; print(gunicorn.__version__, "
                                  "platform.python_version())"], capture_output=True, text=True).stdout.split()
        gunicorn, python = (version + ["?", "?"])[:2]
        return {"app server": f"gunicorn {gunicorn} on Python {python} (Debian's), {self.processes} sync workers",
                "keep-alive": "none: gunicorn's sync workers close the connection after each response",
                "access log": "off"}
