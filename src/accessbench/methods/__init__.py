"""The method catalog: which access methods exist, which are usable here, and why not."""

from __future__ import annotations

import importlib.util
import os
import sys
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import InputError


def workers_dir() -> Path:
    """Where the compiled workers live: the checkout's ``workers/`` (accessbench is installed
    editable from its checkout), or ``ACCESSBENCH_WORKERS_DIR``."""
    override = os.environ.get("ACCESSBENCH_WORKERS_DIR")
    return Path(override) if override else Path(__file__).resolve().parents[3] / "workers"


# language → (worker program relative to workers_dir(), how to build it)
NATIVE_WORKERS = {
    "c": ("c/build/abworker-c", "make -C workers/c (needs gcc, pkg-config, libpq-dev, unixodbc-dev, libjansson-dev)"),
}


class Method(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    language: str
    driver: str
    module: str
    package: str | None = None
    dbms: list[str]
    summary: str = ""
    default: bool = True  # measured when no --method is given; variants are opt-in

    def command(self) -> list[str]:
        """How to start this method's worker: its program and the full method name."""
        if self.language == "python":
            return [sys.executable, "-m", "accessbench.pyworker", self.name]
        program, _ = NATIVE_WORKERS[self.language]
        return [str(workers_dir() / program), self.name]

    def missing(self) -> str | None:
        """Why the method cannot run here (one line), or None."""
        if self.language == "python" and importlib.util.find_spec(self.module) is None:
            hint = f" (pip install {self.package})" if self.package else ""
            return f"Python module {self.module} is not installed{hint}"
        if self.language in NATIVE_WORKERS:
            program, build = NATIVE_WORKERS[self.language]
            if not (workers_dir() / program).exists():
                return f"the {self.language.upper()} worker is not built: {build}"
        return None


@cache
def catalog() -> tuple[Method, ...]:
    doc = tomllib.loads((resources.files("accessbench") / "methods" / "catalog.toml").read_text())
    return tuple(Method(**m) for m in doc["methods"])


def select(names: list[str] | None) -> list[Method]:
    """Methods by name (all when ``names`` is empty); an unknown name is an input error."""
    known = {m.name: m for m in catalog()}
    if not names:
        return [m for m in known.values() if m.default]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"--method {','.join(unknown)}: unknown (known: {', '.join(known)})")
    return [known[n] for n in names]
