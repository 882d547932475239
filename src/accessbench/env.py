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


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def power() -> dict:
    """What decides how fast an idle CPU wakes: round-trip-bound steps depend on it more
    than on anything else (in a VM with the haltpoll idle driver, two runs can differ 3x
    for one-row queries), so it is kept with every run."""
    info = {
        "cpuidle_driver": _read("/sys/devices/system/cpu/cpuidle/current_driver"),
        "cpufreq_governor": _read("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"),
    }
    folder = "/sys/module/haltpoll/parameters"
    if os.path.isdir(folder):
        info["haltpoll"] = {name: _read(os.path.join(folder, name)) for name in sorted(os.listdir(folder))}
    return {k: v for k, v in info.items() if v is not None}


# How a run's idle CPUs were held (runner/awake.py), stored as "idle_cpus": one of these words,
# then how or why in brackets.
IDLE_AWAKE, IDLE_MAY_HALT = "kept awake", "may halt"


def held_awake(environment: dict) -> bool:
    """Whether a stored run held its idle CPUs awake (runs from before accessbench did: no)."""
    return str(environment.get("idle_cpus") or IDLE_MAY_HALT).startswith(IDLE_AWAKE)


def _user() -> str | None:
    """Who ran it (a team's store lists everyone's runs)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for the uid (a bare container)
        return None


def environment() -> dict:
    mem = _first("/proc/meminfo", "MemTotal")
    return {
        "hostname": platform.node(),
        "user": _user(),
        "os": _first("/etc/os-release", "PRETTY_NAME") or platform.platform(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(mem.split()[0]) / 1024 / 1024, 1) if mem else None,
        "power": power(),
        "python": platform.python_version(),
        "accessbench": __version__,
    }
