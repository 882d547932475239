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


def _numbered(folder: str) -> list[str]:
    """A sysfs folder's numbered entries (kdamonds, contexts, schemes, filters), as paths."""
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return [os.path.join(folder, name) for name in sorted(names) if name.isdigit()]


def _damon_pages(scheme: str) -> str:
    """Which pages a DAMON scheme's filters leave it: {type: allowed} over its filters."""
    kinds = {}
    for entry in (e for folder in ("filters", "ops_filters", "core_filters") for e in _numbered(os.path.join(scheme, folder))):
        kind, matching, allow = (_read(os.path.join(entry, name)) for name in ("type", "matching", "allow"))
        if kind and matching == "Y":  # before kernel 6.14 a matching filter only excluded
            kinds[kind] = allow == "Y"
    if kinds.get("anon") is False and kinds.get("unmapped"):
        return "file pages no process maps"
    return "file pages" if kinds.get("anon") is False else "memory"


def page_cache(sys: str = "/sys") -> str | None:
    """Whether this host pages out memory left idle on its own (DAMON's ``pageout`` schemes,
    or its damon_reclaim module), however much is free: a file only in the page cache (an
    embedded engine's database, a table larger than the server's own cache, the floor's CSV
    before the sender held it) is then read from the disk after that long unread. None where
    nothing does."""
    words = []
    running = [k for k in _numbered(os.path.join(sys, "kernel/mm/damon/admin/kdamonds"))
               if _read(os.path.join(k, "state")) == "on"]
    for context in (c for k in running for c in _numbered(os.path.join(k, "contexts"))):
        aggregation = _read(os.path.join(context, "monitoring_attrs", "intervals", "aggr_us"))
        for scheme in _numbered(os.path.join(context, "schemes")):
            age = _read(os.path.join(scheme, "access_pattern", "age", "min"))
            if _read(os.path.join(scheme, "action")) == "pageout" and age and aggregation:
                words.append(f"DAMON pages out {_damon_pages(scheme)} idle ≥ {int(age) * int(aggregation) / 1e6:g} s")
    if _read(os.path.join(sys, "module/damon_reclaim/parameters/enabled")) == "Y":
        age = _read(os.path.join(sys, "module/damon_reclaim/parameters/min_age"))
        words.append(f"damon_reclaim pages out memory idle ≥ {int(age) / 1e6:g} s" if age else "damon_reclaim on")
    return "; ".join(dict.fromkeys(words)) or None


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
        "page_cache": page_cache(),
        "python": platform.python_version(),
        "accessbench": __version__,
    }
