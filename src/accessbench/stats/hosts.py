"""Figures of a run whose loaded steps ran on a cluster's hosts (--cluster): whether a client
host was the bottleneck, and how well the hosts' clients started together.

A host's client processes' CPU over the trial, against the CPUs the host has, says whether the
clients could have gone faster: near saturation, a figure may be the client host's limit rather
than the server's. Their CPU is read in clock ticks (10 ms here), so a share is known to a few
per cent over a one-second trial and is shown in whole per cent.
"""

from __future__ import annotations

import numpy as np

from .. import formatting as fmt
from ..store.model import Trial

SATURATED = 0.9  # of its CPUs: the host, not the server, may have set the pace


def parts(trials: list[Trial]) -> list[list[dict]]:
    """Each trial's hosts' parts (runner/remote.py), for the trials that ran on a cluster."""
    return [t.per_host for t in trials if t.per_host]


def saturated(per_trial: list[list[dict]]) -> str | None:
    """Which hosts were near saturation in how many trials, in words, or None."""
    counts: dict[str, list[float]] = {}
    for hosts in per_trial:
        for h in hosts:
            if h.get("busy") is not None and h["busy"] >= SATURATED:
                counts.setdefault(f"{h['host']} ({h['cpus']:g} CPU)", []).append(h["busy"])
    if not counts:
        return None
    return "; ".join(f"{host} at {min(b):.0%}–{max(b):.0%} of its CPUs in {len(b)} of {len(per_trial)} trials"
                     if len(b) > 1 else f"{host} at {b[0]:.0%} of its CPUs in 1 of {len(per_trial)} trials"
                     for host, b in sorted(counts.items()))


def barrier_skew(per_trial: list[list[dict]]) -> list[int]:
    """Per trial on two hosts or more: how far apart the hosts woke for the barrier (ns)."""
    spreads = []
    for hosts in per_trial:
        late = [h["barrier_late_ns"] for h in hosts if h.get("barrier_late_ns") is not None]
        if len(late) > 1:
            spreads.append(max(late) - min(late))
    return spreads


def cluster_line(cluster: dict, per_trial: list[list[dict]]) -> str:
    """The header's line: the hosts, their clocks, the barrier's skew over the run's trials."""
    hosts = cluster.get("hosts", [])
    cpus = {h.get("cpus") for h in hosts}
    limited = all(h.get("cpu_limited") for h in hosts)
    each = (f", {cpus.pop():g} CPU{' each' if len(hosts) > 1 else ''}{' (limit)' if limited else ''}"
            if len(cpus) == 1 else "")
    text = (f"{cluster.get('spec')}: {len(hosts)} client host{'s' if len(hosts) != 1 else ''} "
            f"({', '.join(h['name'] for h in hosts)}{each})")
    offsets = [h["clock_offset_ns"] for h in hosts if h.get("clock_offset_ns") is not None]
    if offsets:
        known = max(h.get("clock_uncertainty_ns") or 0 for h in hosts)
        signed = lambda ns: ("−" if ns < 0 else "+") + fmt.duration(abs(ns))  # noqa: E731
        text += (f" · clocks {signed(min(offsets))} to {signed(max(offsets))} from this host's, each read "
                 f"to ±{fmt.duration(known)} and the barrier set in each host's clock")
    spreads = barrier_skew(per_trial)
    if spreads:
        text += (f" · start barrier skew: hosts woke within {fmt.duration(float(np.median(spreads)))} of each other "
                 f"(median of {len(spreads)} trials on several hosts; worst {fmt.duration(float(max(spreads)))})")
    return text
