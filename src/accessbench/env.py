"""The environment a run happened in, stored with it so runs can be compared honestly."""

from __future__ import annotations

import os
import platform

from . import __version__


def _first(path: str, key: str) -> str | None:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def environment() -> dict:
    mem = _first("/proc/meminfo", "MemTotal")
    return {
        "hostname": platform.node(),
        "os": _first("/etc/os-release", "PRETTY_NAME") or platform.platform(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(mem.split()[0]) / 1024 / 1024, 1) if mem else None,
        "python": platform.python_version(),
        "accessbench": __version__,
    }
