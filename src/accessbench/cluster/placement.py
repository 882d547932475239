"""Where a step's clients run: which host each worker process is on, and how many clients it
drives. Clients are dealt to the hosts in turn, so no host has more than one client more
than another; a worker that drives one client per process (Python's) gets a process per
client, any other one process per host used."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Placed:
    host: int       # index into the cluster's hosts
    process: int    # the process's number on that host (0, 1, …)
    clients: int    # clients it drives


def place(clients: int, hosts: int, one_client_per_process: bool) -> list[Placed]:
    """The worker processes for ``clients`` clients over the first ``hosts`` hosts (fewer when
    there are fewer clients than hosts), host by host."""
    used = min(clients, hosts)
    shares = [clients // used + (1 if h < clients % used else 0) for h in range(used)]
    if one_client_per_process:
        return [Placed(h, p, 1) for h, share in enumerate(shares) for p in range(share)]
    return [Placed(h, 0, share) for h, share in enumerate(shares)]
