"""The user's cache directory for what accessbench keeps between runs (a worker's hello, the
generated columns): $XDG_CACHE_HOME/accessbench, or ~/.cache/accessbench."""

from __future__ import annotations

import os
from pathlib import Path


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "accessbench"
