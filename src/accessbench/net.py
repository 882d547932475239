"""This machine's loopback: a port free to listen on, for the servers a run starts (managed
targets, poolers, app servers)."""

from __future__ import annotations

import re
import socket
from typing import Callable, TypeVar

T = TypeVar("T")

# How a server says its port was taken: the C library's words (PostgreSQL, MariaDB, Apache,
# PgBouncer, pgpool-II, PHP), Node.js's error code, gunicorn's own.
PORT_TAKEN = re.compile(r"address already in use|EADDRINUSE|connection in use", re.IGNORECASE)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def on_a_free_port(start: Callable[[int], T], attempts: int = 3) -> T:
    """``start(port)`` on a port free when chosen. Anything on this machine may take it before the
    server binds it (a client's outgoing connection draws its own port from the same range):
    when the error says so, it starts again on another."""
    for attempt in range(attempts):
        try:
            return start(free_port())
        except Exception as e:
            if attempt == attempts - 1 or not PORT_TAKEN.search(str(e)):
                raise
    raise AssertionError("unreachable")


def connections_to(pid: int, port: int) -> int:
    """The established TCP connections a process and its children hold to ``port``: what a
    worker keeps open to a server (conformance holds each to its catalog's ``connections``)."""
    import psutil

    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    held = set()
    for process in processes:
        try:
            held.update(c.laddr for c in process.net_connections(kind="tcp")
                        if c.status == psutil.CONN_ESTABLISHED and c.raddr and c.raddr.port == port)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return len(held)  # by local address: a socket a child inherited is one connection
