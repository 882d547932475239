"""Generated columns kept between runs, in the user's cache directory.

A column's values depend only on its generator's spec (which carries the column's own seed)
and its row count, so they are made once and read back afterwards: generating them in Python
costs about 3 s of CPU for the quick suite's 122,000 rows, for every target of every run,
where reading them back costs a few milliseconds. A kept column is named by a digest of its
spec, its count and the source of the generators themselves, so a change to any of them makes
the values anew; a file that cannot be read is made again. Columns longer than ``LONGEST``
are generated as they are loaded, as before, and not kept (they would be held in memory whole).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path

from .. import usercache
from ..protocol import generators, prng

LONGEST = 250_000


def folder() -> Path:
    return usercache.folder() / "data"


@lru_cache(maxsize=1)
def _code() -> str:
    digest = hashlib.sha256()
    for module in (generators, prng):
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def column(spec: dict, count: int):
    """The column's ``count`` values: kept ones when they are there, else made (and kept)."""
    if count > LONGEST:
        return generators.values(spec, count)
    key = hashlib.sha256(json.dumps([_code(), spec, count], sort_keys=True, default=str).encode()).hexdigest()
    path = folder() / f"{key}.pickle"
    try:
        with open(path, "rb") as f:
            values = pickle.load(f)
        if isinstance(values, list) and len(values) == count:
            return values
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
        pass
    values = list(generators.values(spec, count))
    _keep(path, values)
    return values


def _keep(path: Path, values: list) -> None:
    """Written whole under a temporary name, then renamed: two runs at once never read half a
    file. A cache that cannot be written (a read-only home) only costs the next run the time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".column-")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(values, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
