"""Paths: how bytes travel between a worker and its target.

- ``inproc`` (embedded engines), ``unix``, ``tcp``: as the target offers them;
- ``tcp+DELAY[~JITTER][@BANDWIDTH]``: TCP through accessbench's latency proxy, which adds
  DELAY to every chunk in each direction (``250us``, ``1ms``), optionally with normal jitter
  of σ = JITTER and a bandwidth cap (``@10mbit``, ``@1MB`` per second), and counts round trips
  and bytes;
- ``netem:DELAY``: the same delay from the kernel's netem qdisc in a network namespace, where
  the kernel has netem;
- ``pooler`` (``pooler:transaction``) and ``pooler:session``: PgBouncer in that pool mode
  between the workers and a managed PostgreSQL, reached over TCP.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass

from ..errors import InputError

_DURATION = r"(\d+(?:\.\d+)?)(us|µs|ms)"
_BANDWIDTH = r"(\d+(?:\.\d+)?)(kbit|mbit|gbit|kb|mb|gb|b)"
_PROXIED = re.compile(rf"^tcp\+{_DURATION}(?:~{_DURATION})?(?:@{_BANDWIDTH})?$", re.IGNORECASE)
_NETEM = re.compile(rf"^netem:{_DURATION}$", re.IGNORECASE)
_BYTES_PER = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kbit": 125, "mbit": 125e3, "gbit": 125e6}


def _us(number: str, unit: str) -> float:
    return float(number) * (1000 if unit.lower() == "ms" else 1)


@dataclass(frozen=True)
class Path:
    name: str
    base: str                   # inproc | unix | tcp | netem
    delay_us: float = 0.0       # added one way
    jitter_us: float = 0.0
    bandwidth: float | None = None  # bytes per second, each direction
    pool_mode: str | None = None    # pooler paths: PgBouncer's pool_mode

    @property
    def proxied(self) -> bool:
        return self.name.lower().startswith("tcp+")

    @property
    def rides_on(self) -> str:
        """The path a target must offer for this one: proxied, netem and pooler paths are TCP."""
        return "tcp" if self.base in ("netem", "pooler") else self.base


def parse(name: str) -> Path:
    """A path by its name; an unknown form is an input error naming it."""
    if name in ("inproc", "unix", "tcp"):
        return Path(name, name)
    match = _PROXIED.match(name)
    if match:
        delay, dunit, jitter, junit, bw, bwunit = match.groups()
        return Path(name, "tcp", _us(delay, dunit), _us(jitter, junit) if jitter else 0.0,
                    float(bw) * _BYTES_PER[bwunit.lower()] if bw else None)
    match = _NETEM.match(name)
    if match:
        return Path(name, "netem", _us(*match.groups()))
    if name in ("pooler", "pooler:transaction", "pooler:session"):
        return Path(name, "pooler", pool_mode=name.partition(":")[2] or "transaction")
    raise InputError(
        f"--path {name}: expected inproc, unix, tcp, tcp+DELAY[~JITTER][@BANDWIDTH] "
        "(e.g. tcp+250us, tcp+1ms~50us@100mbit), netem:DELAY, pooler or pooler:session"
    )


def netem_missing(delay_us: float = 1.0) -> str | None:
    """Why a kernel netem path cannot run here, or None. Without a delay (netem:0us) only the
    network namespace is needed."""
    import shutil

    if os.geteuid() != 0:
        return "netem paths need root (network namespaces and qdiscs)"
    if not shutil.which("ip") or not shutil.which("tc"):
        return "netem paths need iproute2 (ip, tc)"
    release = platform.release()
    if not delay_us or os.path.isdir("/sys/module/sch_netem"):
        return None
    modules = f"/lib/modules/{release}"
    for index in ("modules.builtin", "modules.dep"):
        try:
            with open(os.path.join(modules, index)) as f:
                if "sch_netem" in f.read():
                    return None
        except OSError:
            pass
    return f"kernel netem is absent (no sch_netem for kernel {release}); use tcp+DELAY, accessbench's own proxy"
