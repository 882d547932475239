"""This machine's loopback: a port free to listen on, for the servers a run starts (managed
targets, poolers, app servers)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
