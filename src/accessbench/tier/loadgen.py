"""The load generators, run as their users run them, and what their output says: ab (Apache
Bench, study S5's ``ab -t 15 -c 10``) and wrk. Both are closed loops: C connections, each
sending its next request when the last answer has arrived. Neither (as Debian packages them)
has an open-loop rate."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..protocol.histogram import Histogram
from .servers.base import die_with_parent


class LoadFailed(Exception):
    """The load generator failed, or its output is not what it prints."""


@dataclass
class Load:
    """One trial of HTTP load: what the generator counted and timed."""

    requests: int                 # completed requests, failed ones included
    elapsed_ns: int               # the generator's own clock from its first request to its end
    failed: int                   # connect, receive or exception failures
    non_2xx: int                  # answered, but not with a success status
    histogram: Histogram | None   # every request's latency (wrk), or None (ab prints only a table)
    resolution_ns: int            # of elapsed_ns


def whole_seconds(seconds: float) -> int:
    """Both generators take whole seconds (ab reads -t with atoi, so 0.2 would be no limit at
    all; wrk refuses a fraction): a shorter or fractional duration is rounded up, and the
    figures use the generator's own elapsed time."""
    return max(1, math.ceil(seconds - 1e-9))


class Generator:
    name: ClassVar[str] = ""
    keep_alive: ClassVar[bool] = False  # whether its connections carry request after request

    @classmethod
    def missing(cls) -> str | None:
        from shutil import which

        return None if which(cls.name) else f"{cls.name} is not installed (make setup installs it)"

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir

    def command(self, url: str, clients: int, seconds: float) -> list[str]:
        raise NotImplementedError

    def parse(self, out: str, clients: int) -> Load:
        """What the generator printed for a trial of ``clients`` connections."""
        raise NotImplementedError

    def settings(self) -> dict[str, str]:
        return {}

    def run(self, url: str, clients: int, seconds: float) -> Load:
        command = self.command(url, clients, seconds)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120,
                                  preexec_fn=die_with_parent)
        except subprocess.TimeoutExpired:
            raise LoadFailed(f"{self.name} did not end within {seconds + 120:g} s") from None
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines()
            raise LoadFailed(f"{self.name} exited with status {done.returncode}: {why[-1] if why else 'no message'}")
        return self.parse(done.stdout, clients)


class Ab(Generator):
    """``ab -t S -c C``: as S5 ran it. ``-t`` alone stops ab at 50,000 requests, which a page
    that answers in 100 µs reaches in seconds, so ``-n`` raises that bound to one the duration
    never reaches. ``-l``: an operation page's length varies with the rows it read (ab would
    count that as a failure)."""

    name = "ab"
    MAX_REQUESTS = 5_000_000

    def command(self, url: str, clients: int, seconds: float) -> list[str]:
        return ["ab", "-q", "-l", "-t", str(whole_seconds(seconds)), "-n", str(self.MAX_REQUESTS), "-c", str(clients),
                url]

    def parse(self, out: str, clients: int) -> Load:
        def field(label: str, default: str | None = None) -> str:
            found = re.search(rf"^{label}:\s+([\d.]+)", out, re.M)
            if found is None:
                if default is not None:
                    return default
                raise LoadFailed(f"ab printed no '{label}' line")
            return found.group(1)

        return Load(requests=int(field("Complete requests")), elapsed_ns=round(float(field("Time taken for tests")) * 1e9),
                    failed=int(field("Failed requests")), non_2xx=int(field("Non-2xx responses", "0")),
                    histogram=None, resolution_ns=1_000_000)

    def settings(self) -> dict[str, str]:
        version = subprocess.run(["ab", "-V"], capture_output=True, text=True).stdout
        found = re.search(r"Version ([\d.]+)", version)
        return {"load generator": f"ab {found.group(1) if found else '?'} (-t whole seconds, rounded up; -c; "
                                  "-l: length may vary; no keep-alive, as S5 ran it)"}


# wrk's done() hook: the summary and every distinct latency with its count (wrk keeps them in
# microseconds), so the histogram is the generator's own, not rebuilt from a few percentiles.
WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('ACCESSBENCH {"requests": %d, "duration_us": %d, "connect": %d, "read": %d, '
    .. '"write": %d, "status": %d, "timeout": %d, "latency": [', summary.requests, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout))
  for i = 1, #latency do
    local value, count = latency(i)
    io.write(string.format('%s[%d, %d]', i > 1 and ', ' or '', value, count))
  end
  io.write(']}\\n')
end
"""


class Wrk(Generator):
    """``wrk -t T -c C -d S``: keep-alive connections, T threads (at most the cores), and the
    full latency histogram from a done() hook."""

    name = "wrk"
    keep_alive = True

    def command(self, url: str, clients: int, seconds: float) -> list[str]:
        script = self.dir / "wrk-done.lua"
        if not script.exists():
            script.write_text(WRK_SCRIPT)
        threads = max(1, min(clients, os.cpu_count() or 1))
        return ["wrk", "-t", str(threads), "-c", str(clients), "-d", f"{whole_seconds(seconds)}s", "--timeout", "60s",
                "-s", str(script), url]

    def parse(self, out: str, clients: int) -> Load:
        line = next((l for l in out.splitlines() if l.startswith("ACCESSBENCH ")), None)
        if line is None:
            raise LoadFailed("wrk printed no summary (its done() hook did not run)")
        data = json.loads(line.removeprefix("ACCESSBENCH "))
        histogram = Histogram()
        for value_us, count in measured(data["latency"], int(data["requests"]), int(data["duration_us"]),
                                        clients).items():
            histogram.record(value_us * 1000, count)
        return Load(requests=int(data["requests"]), elapsed_ns=int(data["duration_us"]) * 1000,
                    failed=int(data["connect"]) + int(data["read"]) + int(data["write"]) + int(data["timeout"]),
                    non_2xx=int(data["status"]), histogram=histogram, resolution_ns=1000)

    def settings(self) -> dict[str, str]:
        version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout
        found = re.search(r"wrk (\S+)", version)
        return {"load generator": f"wrk {found.group(1) if found else '?'} (-d whole seconds, rounded up; -c clients, "
                                  "threads = min(clients, cores); keep-alive; latency histogram to 1 µs)"}


def measured(latency: list[list[int]], requests: int, duration_us: int, connections: int) -> dict[int, int]:
    """The latencies wrk measured, from the histogram its done() hook sees. Before done(), wrk
    "corrects" a closed loop for coordinated omission: with e = duration / (requests /
    connections) µs, each measured value n ≥ 2e adds its count at n − e, n − 2e, … down to
    just above e (wrk's stats_correct) — operations that never ran. Every value m > e then holds
    its own count plus those of m + e, m + 2e, …; so the measured count at m is the shown count
    at m less the shown count at m + e. Exact, in whole microseconds, and checked: the counts
    must add up to the requests wrk made."""
    shown = {int(v): int(c) for v, c in latency}
    per_connection = requests // connections if connections else 0
    if per_connection == 0:  # wrk corrects nothing then
        real = shown
    else:
        e = duration_us // per_connection
        real = {v: c - (shown.get(v + e, 0) if v > e else 0) for v, c in shown.items()}
        real = {v: c for v, c in real.items() if c}
    if any(c < 0 for c in real.values()) or sum(real.values()) != requests:
        raise LoadFailed(f"wrk's latency histogram does not undo to its {requests:,} requests "
                         f"({sum(real.values()):,} after removing its coordinated-omission correction)")
    return real


GENERATORS: dict[str, type[Generator]] = {g.name: g for g in (Ab, Wrk)}
