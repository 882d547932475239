"""wire-floor: not an access method but the floor every reader of a result is set against —
the result as CSV moved raw along the same path (paths/floor.py), read to its end into a
buffer, nothing decoded: the netcat line of Raasveldt and Mühleisen's transfer study. Each
operation connects, names the file (the statement's hash), reads every byte and counts its
lines (one per row), as netcat piped to /dev/null did."""

from __future__ import annotations

import socket

from ...paths.floor import name_of
from ..base import Op, Unsupported
from .columnar import ReadsOnly

CHUNK = 1 << 20


class Lines:
    """What a floor operation read: its lines, one per row, and no values (``len`` is the
    rows, all the timed loop asks of a result)."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count


class Driver(ReadsOnly):
    name = "wire-floor"
    driver = "accessbench"
    dbms = ("postgresql", "mariadb", "sqlite", "duckdb")

    def settings(self) -> dict[str, str]:
        return {
            "what": "the step's result as CSV (written once by the runner, PostgreSQL's text forms), sent by "
                    "sendfile along the same path: a latency proxy of the path's own delay and bandwidth where it "
                    "has one",
            "operation": f"connect, send the file's name, recv_into a {CHUNK >> 20} MiB buffer until the sender "
                         "closes, count the lines; nothing decoded",
        }

    def version(self) -> str:
        from ... import __version__

        return __version__

    def open(self, endpoint: dict, options: dict) -> dict:
        if "floor" not in endpoint:
            raise Unsupported("the runner gave no floor sender for this path")
        self.where = endpoint["floor"]
        return {}

    def result_size(self, result) -> int:
        return CHUNK  # the bytes pass through one buffer, kept nowhere

    def result_rows(self, result):
        return [()] * len(result)  # as many rows as lines, of no values: the runner checks the count only

    def scan_op(self, sql: str) -> Op:
        where, request = self.where, (name_of(sql) + "\n").encode()
        buffer = bytearray(CHUNK)
        view = memoryview(buffer)

        def connect() -> socket.socket:
            if "socket" in where:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(where["socket"])
                return s
            return socket.create_connection((where["host"], where["port"]))

        def read(_):
            lines = 0
            with connect() as s:
                s.sendall(request)
                while n := s.recv_into(view):
                    lines += buffer.count(b"\n", 0, n)
            if not lines:
                raise Unsupported(f"the floor sender has no file for this statement ({name_of(sql)})")
            return Lines(lines)

        return read
