"""The wire's floor (docs/transfer.md): a step's result as CSV, moved raw along the same path
as the methods read it — the netcat line of Raasveldt and Mühleisen's transfer study, measured
by accessbench itself. A sender serves the files of one directory: a client sends one line
naming a file, gets its bytes (``sendfile``: the kernel copies, no user-space loop between
the file and the socket) and the connection closes. A path starts one on first use, in front
of which a proxied path puts a latency proxy of its own shape.

The files are held in memory while the sender serves them, as the servers hold the table in
their buffer caches: the floor is the wire's cost, not the disk's. A file only in the page
cache does not stay there on every host. This project's VM pages out file pages that no
process maps once they sit unread for a minute (a DAMON ``pageout`` scheme, kept in the run's
environment as ``page_cache``); the full transfer grid reads each floor file once a round, 12
minutes apart, and its loopback floor then waited on the disk: 70–1,505 ms for a read of
10–18 ms, the sender idle between ACKs while the reader waited (docs/transfer.md)."""

from __future__ import annotations

import ctypes
import csv
import datetime as dt
import hashlib
import mmap
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


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value


class Resident:
    """A file's pages kept in memory: mapped shared and read-only with every page faulted in
    (``MAP_POPULATE``), so that they are the very page-cache pages ``sendfile`` reads, and
    locked (``mlock``) where the kernel allows this process that much locked memory. A mapped
    page is already out of reach of a reclaim of unmapped file pages; locked, of any reclaim.
    Python's own mmap cannot be locked, hence libc's."""

    def __init__(self, path: str) -> None:
        self.size = os.path.getsize(path)
        self.address, self.locked = None, False
        if not self.size:
            return
        with open(path, "rb") as f:
            address = _libc.mmap(None, self.size, mmap.PROT_READ, mmap.MAP_SHARED | mmap.MAP_POPULATE, f.fileno(), 0)
        if address in (None, _MAP_FAILED):
            return  # served all the same, from wherever its pages are
        self.address = address
        self.locked = _libc.mlock(address, self.size) == 0

    def release(self) -> None:
        if self.address is not None:
            _libc.munmap(self.address, self.size)  # unlocks too
            self.address = None


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        name = self.rfile.readline(64).decode("ascii", "replace").strip()
        path = os.path.join(self.server.directory, name)
        if not _NAME.match(name) or not os.path.isfile(path):
            return  # closed at once: the worker reads nothing and says so
        self.server.held.hold(path)
        with open(path, "rb") as f:
            self.connection.sendfile(f)


class _Held:
    """What a sender keeps: each file it has served, resident until it stops (the first
    request, a verification's, maps it; the timed trials then find it in memory)."""

    def __init__(self) -> None:
        self.files: dict[str, Resident] = {}
        self.lock = threading.Lock()

    def hold(self, path: str) -> None:
        with self.lock:
            if path not in self.files:
                self.files[path] = Resident(path)

    def release(self) -> None:
        with self.lock:
            for resident in self.files.values():
                resident.release()
            self.files.clear()


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
        self.server.held = _Held()
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
        self.server.held.release()
        if self.unix and os.path.exists(self.unix):
            os.remove(self.unix)
