"""The kernel's netem delay between a worker and a managed server: the worker runs in a
network namespace joined to the host by a veth pair, with a netem qdisc on each end adding
the path's delay (and jitter) in its direction. `netem:0us` adds no qdisc: a veth hop."""

from __future__ import annotations

import ipaddress
import os
import subprocess

from . import Path


def _run(*args: str) -> None:
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {(result.stderr or result.stdout).strip()}")


class NetemLink:
    def __init__(self, path: Path, index: int) -> None:
        tag = f"{os.getpid() % 100000}x{index}"
        self.path = path
        self.namespace = f"accessbench-{tag}"
        self.host_if, self.ns_if = f"abh{tag}"[:15], f"abn{tag}"[:15]
        # a /30 of 10.254.0.0/16 per link: host end .1, namespace end .2
        base = int(ipaddress.IPv4Address("10.254.0.0")) + 4 * ((os.getpid() * 8 + index) % 16384)
        self.network = ipaddress.IPv4Network((base, 30))
        self.host_address, self.ns_address = str(self.network[1]), str(self.network[2])
        self.up = False

    def start(self) -> None:
        ns = self.namespace
        _run("ip", "netns", "add", ns)
        self.up = True
        _run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
        _run("ip", "link", "set", self.ns_if, "netns", ns)
        _run("ip", "addr", "add", f"{self.host_address}/30", "dev", self.host_if)
        _run("ip", "link", "set", self.host_if, "up")
        _run("ip", "-n", ns, "addr", "add", f"{self.ns_address}/30", "dev", self.ns_if)
        _run("ip", "-n", ns, "link", "set", self.ns_if, "up")
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        if self.path.delay_us:
            delay = [f"{self.path.delay_us:g}us"] + ([f"{self.path.jitter_us:g}us", "distribution", "normal"]
                                                      if self.path.jitter_us else [])
            _run("tc", "qdisc", "add", "dev", self.host_if, "root", "netem", "delay", *delay)
            _run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", self.ns_if, "root", "netem", "delay", *delay)

    def wrap(self, command: list[str]) -> list[str]:
        """The command, run inside the namespace (it execs: the worker keeps its pid)."""
        return ["ip", "netns", "exec", self.namespace, *command]

    def stop(self) -> None:
        if self.up:  # deleting the namespace deletes its end of the veth pair, and so both
            subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True)
            self.up = False
