"""This machine's loopback: a port free to listen on, for the servers a run starts (managed
targets, poolers, app servers)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
