#!/usr/bin/env python3
"""What the tier worker's sampling connection costs the machine, against wrk's own.

Of a TechEmpower test's loaded trial, wrk drives C − 1 connections and the tier worker the last
one, reading each answer's Server-Timing (src/accessbench/tier/sampler.py). Its client CPU per
request comes out of the two cores the app server and the database share, so it should cost
about what one of wrk's connections does. This script serves a fixed answer with a
Server-Timing header from Node's http module, drives one kept-alive connection to it for a few
seconds with wrk (-t1 -c1), with the sampler's own reader, and with Python's http.client, and
prints each one's CPU per request (its process's user + system time over its requests).

Target: the sampler's CPU per request within 3× wrk's (http.client's is shown beside, for scale).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from accessbench.tier.sampler import Sampler  # noqa: E402

SERVER = """
require('http').createServer((q, r) => {
  r.setHeader('Server-Timing', 'db;dur=0.100, app;dur=0.200');
  r.setHeader('Content-Type', 'application/json');
  r.end('{"id":1,"randomNumber":2}');
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
"""
WRK_DONE = """
done = function(summary, latency, requests)
  io.write(string.format('REQUESTS %d\\n', summary.requests))
end
"""
TARGET = 3.0


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_of_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def with_wrk(url: str, seconds: int, workdir: Path) -> float:
    script = workdir / "done.lua"
    script.write_text(WRK_DONE)
    before = cpu_of_children()
    out = subprocess.run(["wrk", "-t1", "-c1", f"-d{seconds}s", "-s", str(script), url],
                         capture_output=True, text=True, check=True).stdout
    requests = int(re.search(r"REQUESTS (\d+)", out).group(1))
    return (cpu_of_children() - before) / requests


def with_sampler(url: str, seconds: int) -> float:
    before = cpu_of_self()
    with Sampler(url) as sampler:
        time.sleep(seconds)
    return (cpu_of_self() - before) / sampler.n


def with_http_client(port: int, seconds: int) -> float:
    connection, n = http.client.HTTPConnection("127.0.0.1", port), 0
    before, end = cpu_of_self(), time.monotonic() + seconds
    while time.monotonic() < end:
        connection.request("GET", "/db")
        response = connection.getresponse()
        response.read()
        response.getheader("Server-Timing")
        n += 1
    return (cpu_of_self() - before) / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=5, help="how long each client runs (default 5)")
    args = parser.parse_args()
    missing = [tool for tool in ("node", "wrk") if shutil.which(tool) is None]
    if missing:
        print(f"sampler_cost: {' and '.join(missing)} not installed (make setup installs them)", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="sampler-cost-"))
    server = subprocess.Popen(["node", "-e", SERVER], stdout=subprocess.PIPE, text=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/db"
        figures = {"wrk": with_wrk(url, args.seconds, workdir), "sampler": with_sampler(url, args.seconds),
                   "http.client": with_http_client(port, args.seconds)}
    except KeyboardInterrupt:
        return 130
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    for name, seconds in figures.items():
        print(f"{name:12} {seconds * 1e6:6.1f} µs of CPU a request")
    ratio = figures["sampler"] / figures["wrk"]
    met = ratio <= TARGET
    print(f"sampler ÷ wrk: {ratio:.2f}× (target ≤ {TARGET:g}×): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
