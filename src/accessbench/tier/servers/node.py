"""Node pages under Node's own http server: one process, every request on its event loop
(Node's default; a cluster of processes is a choice this stack does not make)."""

from __future__ import annotations

import shutil
import subprocess

from ...worker_process import workers_dir
from .base import STATIC_PAGE, TFB_PAGES, AppServer


class NodeHttp(AppServer):
    name = "node-http"
    pages = {**AppServer.pages, **TFB_PAGES}
    binaries = ("node",)

    @classmethod
    def missing(cls) -> str | None:
        if shutil.which("node") is None:
            return "node is not on PATH"
        if not (workers_dir() / "node" / "node_modules").exists():
            return "the node worker is not built: make workers"
        return None

    def commands(self) -> list[list[str]]:
        self.env = {**self.env, "ACCESSBENCH_TIER_PORT": str(self.port), "ACCESSBENCH_STATIC_PAGE": str(STATIC_PAGE)}
        return [["node", str(workers_dir() / "node" / "src" / "web" / "server.js")]]

    def settings(self) -> dict[str, str]:
        version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        return {"app server": f"Node.js {version} node:http, one process", "keep-alive": "on (Node's default, 5 s)",
                "access log": "off"}
