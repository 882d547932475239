"""The wire's floor (docs/transfer.md): a step's result as CSV, moved raw along the same path
as the methods read it — the netcat line of Raasveldt and Mühleisen's transfer study, measured
by accessbench itself. A sender serves the files of one directory: a client sends one line
naming a file, gets its bytes (``sendfile``: the kernel copies, no user-space loop between
the file and the socket) and the connection closes. A path starts one on first use, in front
of which a proxied path puts a latency proxy of its own shape."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import os
import re
import socketserver
import threading
from typing import Any, Iterable

_NAME = re.compile(r"^[0-9a-f]{40}$")


class NoFloor(Exception):
    """This path has no wire whose floor can be measured; the message says why, in one line."""


def name_of(sql: str) -> str:
    """The file a step's result is served as: named by its statement, as the floor worker
    asks for it."""
    return hashlib.sha1(sql.encode()).hexdigest()


def _text(value: Any) -> str:
    """A value as CSV text (PostgreSQL's text forms): what the floor moves is the result's size."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(value).hex()
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    return str(value)


def write_csv(path: str, rows: Iterable[tuple]) -> tuple[int, int]:
    """The rows as CSV (one line each, no header); (rows, bytes) written."""
    count = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        for row in rows:
            writer.writerow([_text(v) for v in row])
            count += 1
    return count, os.path.getsize(path)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        name = self.rfile.readline(64).decode("ascii", "replace").strip()
        path = os.path.join(self.server.directory, name)
        if not _NAME.match(name) or not os.path.isfile(path):
            return  # closed at once: the worker reads nothing and says so
        with open(path, "rb") as f:
            self.connection.sendfile(f)


class _TCP(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Unix(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


class Sender:
    """Serves ``directory``'s files on loopback TCP (``unix``: a socket file of that name)."""

    def __init__(self, directory: str, unix: str | None = None) -> None:
        self.server = _Unix(unix, _Handler) if unix else _TCP(("127.0.0.1", 0), _Handler)
        self.server.directory = directory
        self.unix = unix
        self.thread = threading.Thread(target=self.server.serve_forever, name="floor sender", daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def endpoint(self) -> dict[str, Any]:
        return {"socket": self.unix} if self.unix else {"host": "127.0.0.1", "port": self.port}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.unix and os.path.exists(self.unix):
            os.remove(self.unix)
