"""Client load from many hosts: ``--cluster``.

A step under load (clients, duration, rate) can outgrow the machine its clients run on long
before the server's. With ``--cluster`` the runner places such a step's worker processes on
the hosts of a Dask distributed cluster (``dask.py``), starts them at one barrier with each
host's clock offset taken into account, and merges their latency histograms by adding counts
(never averaging percentiles). ``local:N`` is such a cluster made here for trying it and for
the tests (``local.py``): N Dask workers, each in a network namespace of its own joined to the
managed server's by a veth pair, optionally each held to a CPU limit (``local:3@0.5cpu``).

    cluster spec  →  parse()  →  ClusterSpec  →  start()  →  Cluster (hosts, offsets, trials)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError

FORMS = "local:N[@CPUScpu] (N hosts made here, in network namespaces) or dask://HOST:PORT (a running scheduler)"
_LOCAL = re.compile(r"^local:(\d+)(?:@(\d+(?:\.\d+)?)cpus?)?$", re.IGNORECASE)
_DASK = re.compile(r"^dask://([^/:@\s]+|\[[0-9a-fA-F:]+\]):(\d{1,5})/?$", re.IGNORECASE)
MAX_LOCAL_HOSTS = 16


@dataclass(frozen=True)
class ClusterSpec:
    text: str
    local_hosts: int | None = None      # local:N
    cpus: float | None = None           # local:N@Xcpu: each host's CPU limit
    scheduler: str | None = None        # dask://HOST:PORT as Dask names it (tcp://HOST:PORT)

    @property
    def local(self) -> bool:
        return self.local_hosts is not None


def parse(text: str, option: str = "--cluster") -> ClusterSpec:
    """A cluster spec, or one InputError naming the option and the forms it takes."""
    local, dask = _LOCAL.match(text.strip()), _DASK.match(text.strip())
    if local:
        hosts, cpus = int(local.group(1)), float(local.group(2)) if local.group(2) else None
        if not 1 <= hosts <= MAX_LOCAL_HOSTS:
            raise InputError(f"{option} {text}: a local cluster has 1 to {MAX_LOCAL_HOSTS} hosts")
        if cpus is not None and not 0.05 <= cpus <= 1024:
            raise InputError(f"{option} {text}: a host's CPU limit is from 0.05 to 1024 CPUs")
        return ClusterSpec(text, local_hosts=hosts, cpus=cpus)
    if dask:
        port = int(dask.group(2))
        if not 0 < port < 65536:
            raise InputError(f"{option} {text}: port {port} is not from 1 to 65535")
        return ClusterSpec(text, scheduler=f"tcp://{dask.group(1)}:{port}")
    raise InputError(f"{option} {text}: not a cluster; give {FORMS}")
