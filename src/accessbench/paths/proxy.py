"""The latency proxy (proxy/build/abproxy) as a process: start it in front of a
target, read its counters around each trial, stop it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path as FilePath

from .base import Path


def binary() -> FilePath:
    override = os.environ.get("ACCESSBENCH_PROXY")
    return FilePath(override) if override else FilePath(__file__).resolve().parents[3] / "proxy" / "build" / "abproxy"


def missing() -> str | None:
    if not binary().exists():
        return f"the latency proxy is not built ({binary()}): make setup builds it (needs a C compiler)"
    return None


class LatencyProxy:
    def __init__(self, path: Path, host: str, port: int, log_path: str) -> None:
        args = [str(binary()), "--listen", "127.0.0.1:0", "--target", f"{host}:{port}",
                "--delay-us", f"{path.delay_us:g}", "--control", "127.0.0.1:0"]
        if path.jitter_us:
            args += ["--jitter-us", f"{path.jitter_us:g}"]
        if path.bandwidth:
            args += ["--bandwidth", f"{path.bandwidth:.0f}"]
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     start_new_session=True)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise RuntimeError(f"the latency proxy did not start (status {self.proc.returncode}; see {log_path})")
        ready = json.loads(line)
        self.port = int(ready["listen"].rsplit(":", 1)[1])
        self.hop_us: float | None = ready.get("hop_us")  # its own loopback hop, taken out of each delay
        host, control = ready["control"].rsplit(":", 1)
        self.control = socket.create_connection((host, int(control)))
        self.replies = self.control.makefile("r")

    def command(self, text: str) -> dict:
        self.control.sendall(text.encode() + b"\n")
        return json.loads(self.replies.readline())

    def totals(self) -> dict:
        """Counters since the proxy started: chunks and bytes each way, round trips."""
        return self.command("stats")["totals"]

    def stop(self) -> None:
        try:
            self.command("quit")
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.control.close()
        self.log.close()
