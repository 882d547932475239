"""Keeping idle CPUs from halting while a bench script measures (shared by the bench scripts).

On a virtual machine whose idle vCPUs halt (the `haltpoll` cpuidle driver with polling off, or
no cpuidle driver at all), waking a thread on an idle CPU costs an interrupt and a VM exit,
tens of µs, charged in part to the thread that wakes it. A script that measures what the
proxy or an access method costs, rather than what this VM's idle handling costs, holds the
CPUs awake and says so in its header; each script has a switch to measure without.
"""

from __future__ import annotations

import os
import subprocess
import sys

SPINNER = """
import os, sys
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
while True:
    pass
"""


class KeepAwake:
    """Keeps idle CPUs from halting while the benchmark runs. With a cpuidle driver (haltpoll,
    intel_idle …) a PM QoS request does it: /dev/cpu_dma_latency = 0, held open. Without one
    (/sys/devices/system/cpu/cpuidle/current_driver reads "none"), an idle CPU runs the
    architecture's default idle — HLT on x86 — whatever PM QoS asks, so one SCHED_IDLE busy
    loop per CPU keeps it from idling instead: any other thread that wakes there preempts it at
    once, and its time is not counted as other load. Root only for PM QoS; the loops need none."""

    def __init__(self, cpus: list[int]) -> None:
        self.qos, self.spinners, self.how = None, [], "idle CPUs may halt"
        try:
            with open("/sys/devices/system/cpu/cpuidle/current_driver") as f:
                driver = f.read().strip()
        except OSError:
            driver = "none"
        if driver != "none":
            try:
                self.qos = os.open("/dev/cpu_dma_latency", os.O_WRONLY)  # the request lasts while it is open
                os.write(self.qos, (0).to_bytes(4, sys.byteorder))
                self.how = f"idle CPUs kept from halting (PM QoS; cpuidle driver {driver})"
                return
            except OSError as e:
                print(f"warning: cannot keep idle CPUs from halting by PM QoS ({e}); using idle-priority busy "
                      "loops instead", file=sys.stderr)
                self.qos = None
        self.spinners = [subprocess.Popen([sys.executable, "-c", SPINNER, str(cpu)]) for cpu in cpus]
        self.how = (f"idle CPUs kept from halting by {len(cpus)} SCHED_IDLE busy loops "
                    f"({'no cpuidle driver: PM QoS has no effect here' if driver == 'none' else 'PM QoS refused'})")

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.spinners]

    def close(self) -> None:
        if self.qos is not None:
            os.close(self.qos)
        for p in self.spinners:
            p.kill()
            p.wait()
