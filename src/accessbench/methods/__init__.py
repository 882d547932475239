"""The method catalog: which access methods exist, which are usable here, and why not."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from functools import cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

from ..errors import InputError


class Method(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    language: str
    driver: str
    module: str
    package: str | None = None
    dbms: list[str]
    summary: str = ""

    def command(self) -> list[str]:
        """How to start this method's worker."""
        if self.language == "python":
            return [sys.executable, "-m", "accessbench.pyworker", self.name]
        raise NotImplementedError(self.language)

    def missing(self) -> str | None:
        """Why the method cannot run here (one line), or None."""
        if self.language == "python" and importlib.util.find_spec(self.module) is None:
            hint = f" (pip install {self.package})" if self.package else ""
            return f"Python module {self.module} is not installed{hint}"
        return None


@cache
def catalog() -> tuple[Method, ...]:
    doc = tomllib.loads((resources.files("accessbench") / "methods" / "catalog.toml").read_text())
    return tuple(Method(**m) for m in doc["methods"])


def select(names: list[str] | None) -> list[Method]:
    """Methods by name (all when ``names`` is empty); an unknown name is an input error."""
    known = {m.name: m for m in catalog()}
    if not names:
        return list(known.values())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"--method {','.join(unknown)}: unknown (known: {', '.join(known)})")
    return [known[n] for n in names]
