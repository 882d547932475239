"""Keeping idle CPUs from halting while a run measures.

On a virtual machine whose idle vCPUs halt (the `haltpoll` cpuidle driver with its poll
window at zero, or no cpuidle driver at all), waking a thread on an idle CPU costs an
interrupt and a VM exit, tens of µs, charged in part to the thread that wakes it. Whether a
CPU had gone idle between two operations depends on what else the host was doing, so
round-trip-bound steps then measure the host's idle handling as much as the access method,
and it changes within a run: two quick runs of identical settings on the project's VM, made
one after the other, moved whole steps by −34% to +59% and `compare` called 9.7% of their
cells different; held awake, two such runs were called different in 2.1% of cells, on a
drift floor of ±13.7% instead of ±35.7% (docs/methodology.md, "The machine matters").

With a cpuidle driver (haltpoll, intel_idle …) a PM QoS request keeps idle CPUs out of deep
idle: /dev/cpu_dma_latency = 0, held open; the kernel drops the request when the file is
closed, also when the process is killed, so nothing outlives the run. It needs root. Without
a cpuidle driver (current_driver reads "none") an idle x86 CPU runs HLT whatever PM QoS asks;
there only busy loops keep it awake, which the bench scripts use (``spin=True``) and a run
does not: a loop on an SMT sibling would slow the very thread it is meant to help, and a run
is not a place to burn every CPU unasked. Such a run says that its idle CPUs may halt.
The request covers this host's CPUs only: a Dask cluster's other hosts (`--cluster dask://`)
idle as their owners set them (`--cluster local:N` runs on this host, and is covered).
"""

from __future__ import annotations

import os
import subprocess
import sys

from ..env import IDLE_AWAKE, IDLE_MAY_HALT

QOS = "/dev/cpu_dma_latency"
DRIVER = "/sys/devices/system/cpu/cpuidle/current_driver"

# An idle-priority busy loop on one CPU: any other thread that wakes there preempts it at
# once, and its time is not counted as other load. It dies with the process that started it.
SPINNER = """
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[2]):
    sys.exit()
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
while True:
    pass
"""


def cpuidle_driver() -> str:
    try:
        with open(DRIVER) as f:
            return f.read().strip() or "none"
    except OSError:
        return "none"


class KeepAwake:
    """Holds idle CPUs awake until ``close``. ``awake`` says whether it could; ``how`` says how,
    or why not, in words a report can show."""

    def __init__(self, cpus: list[int] | None = None, spin: bool = False) -> None:
        self.qos: int | None = None
        self.spinners: list[subprocess.Popen] = []
        driver = cpuidle_driver()
        refused = None
        if driver != "none":
            try:
                self.qos = os.open(QOS, os.O_WRONLY)  # the request lasts while the file is open
                os.write(self.qos, (0).to_bytes(4, sys.byteorder))
                self.awake, self.how = True, f"{IDLE_AWAKE} (PM QoS; cpuidle {driver})"
                return
            except OSError as e:
                if self.qos is not None:
                    os.close(self.qos)
                    self.qos = None
                refused = f"PM QoS refused: {e.strerror or e}"
        why = refused or "no cpuidle driver, so PM QoS has no effect"
        if not spin:
            self.awake, self.how = False, f"{IDLE_MAY_HALT} ({why})"
            return
        cpus = sorted(os.sched_getaffinity(0)) if cpus is None else cpus
        self.spinners = [subprocess.Popen([sys.executable, "-c", SPINNER, str(cpu), str(os.getpid())])
                         for cpu in cpus]
        self.awake, self.how = True, f"{IDLE_AWAKE} by {len(cpus)} idle-priority busy loops ({why})"

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.spinners]

    def close(self) -> None:
        if self.qos is not None:
            os.close(self.qos)
            self.qos = None
        for p in self.spinners:
            p.kill()
            p.wait()
        self.spinners = []

    def __enter__(self) -> "KeepAwake":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
