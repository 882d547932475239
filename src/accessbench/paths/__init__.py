"""Paths: how bytes travel between a worker and its target. One module per kind:

- ``direct``: ``inproc`` (embedded engines), ``unix``, ``tcp``, as the target offers them;
- ``proxied``: ``tcp+DELAY[~JITTER][@BANDWIDTH]``, TCP through accessbench's latency proxy;
- ``netem``: ``netem:DELAY``, the same delay from the kernel's netem qdisc in a network
  namespace, where the kernel has netem;
- ``pooler``: ``pooler`` (``pooler:transaction``) and ``pooler:session``, PgBouncer in that
  pool mode between the workers and a managed PostgreSQL;
- ``pgpool``: ``pgpool``, pgpool-II in its connection-pooling mode before a managed PostgreSQL.

Any of them may carry attributes (``tls``): ``+tls…`` (TLS with the run's own authority) and
``+compress`` (MariaDB's protocol compression), ``tcp+250us+tls``.

Each kind answers the same questions (``base.Path``); a new kind is a new module here and one
entry in ``KINDS``.
"""

from __future__ import annotations

from ..errors import InputError
from .base import Path, PathRun
from .direct import Direct
from .netem import Netem, netem_missing
from .pgpool import PgpoolPath
from .pooler import Pooler
from .proxied import Proxied
from .tls import FORMS as TLS_FORMS
from .tls import split

# In the order they are started for a target (and their settings stored).
KINDS: tuple[type[Path], ...] = (Direct, Proxied, Netem, Pooler, PgpoolPath)

# The keys of a target's settings that describe its paths, for the reports' headers.
SETTINGS = tuple(kind.setting for kind in KINDS if kind.setting)
# Every form of path name, for --help.
HELP = ", ".join(kind.help for kind in KINDS) + f"; each may add {TLS_FORMS} (e.g. tcp+tls, tcp+250us+tls1.2)"

__all__ = ["KINDS", "SETTINGS", "Path", "PathRun", "netem_missing", "parse"]


def parse(name: str) -> Path:
    """A path by its name (not started), with its attributes (``+tls…``, ``+compress``); an
    unknown form is an input error naming it."""
    try:
        base, tls, compress = split(name)
    except ValueError as e:
        raise InputError(f"--path {e}") from None
    for kind in KINDS:
        path = kind.parse(base)
        if path is not None:
            path.name, path.tls, path.compress = name, tls, compress
            why = path.carries()
            if why:
                raise InputError(f"--path {name}: {why}")
            return path
    raise InputError(f"--path {name}: expected {', '.join(kind.forms for kind in KINDS)}, each optionally with "
                     f"{TLS_FORMS}")
