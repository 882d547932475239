"""Methods at another version of their driver (``py-psycopg@3.2.10``): what versions.toml
declares, where each is installed, and the installing itself (`make setup` calls ``install``).

A versioned method is its catalog entry under another name, at another version of the driver:
the same worker, the same driver code, only the driver's own packages swapped. Python's are
installed with pip into a directory per method and version, without their dependencies (those
are accessbench's environment's), and the worker puts that directory first on its module path
before it imports the driver — so the pinned version stays installed and untouched beside it.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ..worker_process import workers_dir

INSTALLED = ".installed"  # written last into a version's directory: it is whole


@dataclass(frozen=True)
class Versions:
    method: str
    versions: tuple[str, ...]
    packages: tuple[str, ...]   # pip requirements, "{version}" standing for each version


@cache
def declared() -> dict[str, Versions]:
    text = (resources.files("accessbench") / "methods" / "versions.toml").read_text()
    return {v["method"]: Versions(v["method"], tuple(v["versions"]), tuple(v["packages"]))
            for v in tomllib.loads(text).get("versions", [])}


def root() -> Path:
    """Where versions are installed: the checkout's .cache/versions (beside workers/)."""
    return workers_dir().parent / ".cache" / "versions"


def directory(method: str, version: str) -> Path:
    return root() / "python" / f"{method}@{version}"


def installed(method: str, version: str) -> bool:
    return (directory(method, version) / INSTALLED).exists()


def install(log=print) -> int:
    """Every declared version not yet installed; 1 when one could not be."""
    status = 0
    for entry in declared().values():
        for version in entry.versions:
            if installed(entry.method, version):
                continue
            target = directory(entry.method, version)
            packages = [p.replace("{version}", version) for p in entry.packages]
            log(f"installing {entry.method}@{version}: {' '.join(packages)}")
            done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade",
                                   "--target", str(target), *packages])
            if done.returncode:
                status = 1
                continue
            (target / INSTALLED).write_text(" ".join(packages) + "\n")
    return status

