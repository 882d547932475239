"""``netem:DELAY``: the kernel's netem delay between a worker and a managed server. The worker
runs in a network namespace joined to the host by a veth pair, with a netem qdisc on each end
adding the path's delay (and jitter) in its direction; the server also listens on the host's
end. ``netem:0us`` adds no qdisc: a veth hop. Needs root, iproute2 and the kernel's netem."""

from __future__ import annotations

import ipaddress
import os
import platform
import re
import shutil
import subprocess
from typing import Any

from .base import _DURATION, Path, PathRun, microseconds

_NAME = re.compile(rf"^netem:{_DURATION}$", re.IGNORECASE)


def netem_missing(delay_us: float = 1.0) -> str | None:
    """Why a kernel netem path cannot run here, or None. Without a delay (netem:0us) only the
    network namespace is needed."""
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


class Netem(Path):
    forms = "netem:DELAY"
    help = "netem:DELAY (the kernel's netem qdisc, where the kernel has it; root)"
    setting = "netem"
    runs = "netem link"
    needs = "netem paths need a managed server (it must listen on the link)"

    @classmethod
    def parse(cls, name: str) -> Netem | None:
        match = _NAME.match(name)
        return cls(name, "netem", microseconds(*match.groups())) if match else None

    @property
    def rides_on(self) -> str:
        return "tcp"

    def missing(self) -> str | None:
        return netem_missing(self.delay_us)

    @classmethod
    def start_all(cls, paths: list[Path], target: Any, run: PathRun) -> dict[str, Any]:
        super().start_all(paths, target, run)
        return {cls.setting: "; ".join(f"{p.name}: namespace {p.running.namespace}, {p.running.ns_address} → "
                                       f"{p.running.host_address}" for p in paths)}

    def start(self, target: Any, run: PathRun) -> None:
        """A namespace and veth pair with netem; the managed server then also listens on the
        link's host end (a target that cannot says so)."""
        self.running = link = NetemLink(self, run.links)  # stopped even if it starts only half-way
        run.links += 1
        link.start()
        target.listen_on(link.host_address, str(link.network))

    def carries(self) -> str | None:
        if self.tls:  # the run's server certificate names 127.0.0.1 and localhost, not a link's addresses
            return "TLS rides on tcp, tcp+DELAY and pooler paths, not on a netem link"
        return super().carries()

    def reach(self, target: Any) -> dict[str, Any]:
        return {**target.endpoint("tcp"), "host": self.running.host_address}

    def command(self, argv: list[str]) -> list[str]:
        return self.running.wrap(argv)


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
