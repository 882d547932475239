"""``tcp+DELAY[~JITTER][@BANDWIDTH]``: TCP through accessbench's latency proxy, which adds
DELAY to every chunk in each direction (``250us``, ``1ms``), optionally with normal jitter of
σ = JITTER and a bandwidth cap (``@10mbit``, ``@1MB`` per second), and counts round trips and
bytes. The proxy's own cost is measured when it starts, since every figure through it
carries that cost."""

from __future__ import annotations

import os
import re
from typing import Any

from ..targets.base import file_safe
from . import proxy
from .base import _DURATION, Path, PathRun, microseconds
from .calibrate import proxy_cost_us
from .floor import Sender

_BANDWIDTH = r"(\d+(?:\.\d+)?)(kbit|mbit|gbit|kb|mb|gb|b)"
_NAME = re.compile(rf"^tcp\+{_DURATION}(?:~{_DURATION})?(?:@{_BANDWIDTH})?$", re.IGNORECASE)
_BYTES_PER = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kbit": 125, "mbit": 125e3, "gbit": 125e6}


class Proxied(Path):
    forms = "tcp+DELAY[~JITTER][@BANDWIDTH] (e.g. tcp+250us, tcp+1ms~50us@100mbit)"
    help = "tcp+DELAY[~JITTER][@BANDWIDTH] through accessbench's latency proxy (e.g. tcp+250us, tcp+1ms~50us@100mbit)"
    setting = "latency proxy"
    runs = "latency proxy"

    @classmethod
    def parse(cls, name: str) -> Proxied | None:
        match = _NAME.match(name)
        if not match:
            return None
        delay, dunit, jitter, junit, bw, bwunit = match.groups()
        return cls(name, "tcp", microseconds(delay, dunit), microseconds(jitter, junit) if jitter else 0.0,
                   float(bw) * _BYTES_PER[bwunit.lower()] if bw else None)

    @property
    def proxied(self) -> bool:
        return True

    def missing(self) -> str | None:
        return proxy.missing()

    @classmethod
    def start_all(cls, paths: list[Path], target: Any, run: PathRun) -> dict[str, Any]:
        """A proxy in front of the target's TCP port per path, then the proxy's own cost per
        round trip beyond its delay, measured now at 0 µs and at each path's delay."""
        super().start_all(paths, target, run)
        run.progress.note(f"measuring the latency proxy's own cost on {target.name}")
        log = os.path.join(run.workdir, f"proxy-calibration-{target.file_name}.log")
        # one measurement per proxy setting: a +compress twin goes through the same proxy (its
        # compression is the client's and the server's), and calibrating at 100 ms takes a minute
        measured: dict[tuple, float] = {}
        costs = {}
        for path in [cls.parse("tcp+0us"), *(p for p in paths if p.name != "tcp+0us")]:
            key = (path.delay_us, path.jitter_us, path.bandwidth)
            if key not in measured:
                measured[key] = proxy_cost_us(target, log, path, queries=max(50, int(300_000 / (300 + path.delay_us))))
            costs[path.name] = measured[key]
        text = "; ".join(f"{name}: +{cost:.1f} µs" for name, cost in costs.items())
        hops = sorted(h for p in paths if (h := p.running.hop_us) is not None)
        if hops:  # each proxy measured its own at start (proxy/README.md, Design and timing)
            span = f"{hops[0]:.1f}" if hops[0] == hops[-1] else f"{hops[0]:.1f}–{hops[-1]:.1f}"
            text += f" (its own loopback hop, {span} µs, is already taken out of each delay)"
        return {cls.setting: f"abproxy; its own cost per round trip beyond the delay (measured this run): {text}",
                "proxy_cost_us": {name: round(cost, 2) for name, cost in costs.items()}}

    def start(self, target: Any, run: PathRun) -> None:
        tcp = target.endpoint("tcp")
        log = os.path.join(run.workdir, f"proxy-{file_safe(self.name)}-{target.file_name}.log")
        self.running = proxy.LatencyProxy(self, tcp["host"], tcp["port"], log)

    def floor(self, directory: str, run: PathRun) -> dict[str, Any]:
        """A sender behind a latency proxy of this path's own delay and bandwidth."""
        if not self.floor_parts:
            sender = Sender(directory)
            self.floor_parts.append(sender)
            log = os.path.join(run.workdir, f"proxy-floor-{id(self):x}.log")
            self.floor_parts.append(proxy.LatencyProxy(self, "127.0.0.1", sender.port, log))
        return {"host": "127.0.0.1", "port": self.floor_parts[-1].port}

    def reach(self, target: Any) -> dict[str, Any]:
        return {**target.endpoint("tcp"), "host": "127.0.0.1", "port": self.running.port}

    def counters(self, floor: bool = False) -> dict[str, int] | None:
        """Only one cell's workers talk through the proxy at a time: the difference of two
        readings is that cell's. The floor's sender has a proxy of its own."""
        if floor:
            return self.floor_parts[-1].totals() if self.floor_parts else None
        return self.running.totals()
