#!/usr/bin/env python3
"""Does abproxy add exactly the delay it is asked for? A small TCP echo server (a thread of
this script) answers ping-pong exchanges of small messages, made directly and through the
proxy at several delays, in (direct, proxied) pairs made back to back — proxied first in every
other round, so that a drift within a pair cancels out — over many short rounds; each
measurement uses a fresh connection. The added RTT of a pair is its proxied median minus its
direct median, and a delay's added RTT is the median over its pairs: the host's speed drifts
(on this project's VMs a fixed loop of work takes up to 2× longer for seconds at a time), and
two measurements made back to back drift alike. The script prints, per delay N, the median
round-trip time direct and proxied, the added RTT against the expected 2 × N, the error, the
spread of the pairs' added RTTs, and the p99s; then pass/fail lines for the targets:

- N ≥ 100 µs: median added RTT within ±3% of 2 × N;
- N = 0: median added RTT at most 10 µs (the proxy's own cost);
- the proxy's `round_trips` counter equals the number of exchanges made through it.

    .venv/bin/python bench/proxy_fidelity.py [--rounds 10] [--exchanges 600] [--warmup 100]
                                             [--size 64] [--delays 0,100,250,500,1000,5000]
                                             [--allow-idle-halt] [--no-pin] [--proxy-cpu echo]
                                             [--proxy-arg=--user-timestamps]

It builds nothing: run `make -C proxy` first.

What "added" means depends on the endpoints as much as on the proxy, so the script holds
them steady, and says so in its header:
- Idle CPUs are kept from halting while it runs (a PM QoS request, /dev/cpu_dma_latency = 0,
  held open, where a cpuidle driver honours it; where there is none, as on some of this
  project's VMs, one idle-priority busy loop per CPU: accessbench.runner.awake). A halted vCPU
  takes tens of µs to wake, more the longer it idled: the echo server and the client, idle
  for 2N between exchanges through the proxy but not directly, would wake at a different
  cost, which is the VM's figure, not the proxy's (--allow-idle-halt measures it anyway).
- The client thread and the echo server's threads are pinned to two different CPUs
  (--no-pin: not). Left alone, the scheduler sometimes runs them on one CPU, where a direct
  ping-pong takes 5 µs instead of 10 and the baseline jumps between the two.
- The proxy runs on the echo server's CPU (abproxy --cpu; --proxy-cpu client|echo|none).
  Unpinned, its threads move between CPUs and the added RTT grows by about 3 µs.
- The proxy's relay threads run under SCHED_FIFO (abproxy --realtime 10; root only;
  --no-realtime: not). Sharing a CPU with the echo server, a normal-priority relay thread
  that has just sent a request is preempted by the server it woke, and the reply's relay
  waits behind it (see proxy/README.md, Fidelity, for the figures with and without).
- Each (direct, proxied) pair during which other processes used more than 10% of the
  machine is measured again (at most --retries times, after waiting up to 30 s for quiet);
  the script prints how many were, and how loaded the kept ones were.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time

from accessbench.runner.awake import KeepAwake
from accessbench.runner.cleanup import interruptible

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROXY = os.path.join(ROOT, "proxy", "build", "abproxy")


def pin_thread(cpu: int | None) -> None:
    """Pin the calling thread (Linux: sched_setaffinity(0) is per thread) to one CPU."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})


class EchoServer:
    """A tiny TCP echo server on 127.0.0.1: one thread accepting, one per connection, all on
    CPU ``cpu`` when given."""

    def __init__(self, cpu: int | None = None) -> None:
        self.cpu = cpu
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        pin_thread(self.cpu)
        while True:
            conn, _ = self.sock.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    def _echo(self, conn: socket.socket) -> None:
        pin_thread(self.cpu)
        try:
            while data := conn.recv(65536):
                conn.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()


class Proxy:
    def __init__(self, target_port: int, extra: list[str]) -> None:
        self.process = subprocess.Popen(
            [PROXY, "--listen", "127.0.0.1:0", "--target", f"127.0.0.1:{target_port}", "--delay-us", "0",
             "--control", "127.0.0.1:0", *extra],
            stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"{PROXY} did not start (exit status {self.process.wait()})")
        info = json.loads(line)
        self.listen = _address(info["listen"])
        self.control = socket.create_connection(_address(info["control"]))
        self.control_file = self.control.makefile("rw", encoding="utf-8", newline="\n")

    def command(self, line: str) -> dict:
        self.control_file.write(line + "\n")
        self.control_file.flush()
        return json.loads(self.control_file.readline())

    def close(self) -> None:
        try:
            self.command("quit")
        except (OSError, ValueError):
            pass
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _address(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS


def ping_pong(address: tuple[str, int], size: int, exchanges: int, warmup: int,
              kernel_clock: bool = True) -> tuple[list[int], str, int]:
    """Round-trip times in ns of `exchanges` exchanges (after `warmup` untimed ones) on a fresh
    connection; also the client's own address, and how many exchanges were made in all.

    With ``kernel_clock`` a reply's end is its arrival in the client's socket (the kernel's
    receive timestamp), not when recv() returned: the client's own wake-up, which on a VM grows
    with how long it idled (2N longer through the proxy), is then left out of both RTTs."""
    message = os.urandom(size)
    sock = socket.create_connection(address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if kernel_clock:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    local = "%s:%d" % sock.getsockname()[:2]
    send, clock = sock.sendall, time.perf_counter_ns
    space = socket.CMSG_SPACE(16)
    times = []
    try:
        for i in range(warmup + exchanges):
            start = clock()
            send(message)
            got, arrived = b"", None
            while len(got) < size:
                more, ancillary, _, _ = sock.recvmsg(size - len(got), space)
                if not more:
                    raise ConnectionError("the connection closed mid-exchange")
                got += more
                for level, kind, data in ancillary:
                    if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS:
                        sec, nsec = struct.unpack("qq", data[:16])
                        arrived = sec * 1_000_000_000 + nsec  # CLOCK_REALTIME, that of the last segment
            end = clock()
            if arrived is not None:  # carried over to perf_counter's clock (CLOCK_MONOTONIC)
                end = min(end, arrived - (time.clock_gettime_ns(time.CLOCK_REALTIME) - time.monotonic_ns())
                          + (clock() - time.monotonic_ns()))
            if i >= warmup:
                times.append(end - start)
            if got != message:
                raise ValueError("the echo differs from what was sent")
    finally:
        sock.close()
    return times, local, warmup + exchanges


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def machine_busy() -> tuple[int, int]:
    """(busy, total) CPU jiffies of the whole machine since boot."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def process_jiffies(pid: int) -> int:
    """utime + stime of a process (all its threads), in jiffies."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


class OtherLoad:
    """How much of the machine processes other than ours used between start() and stop()."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids

    def _sample(self) -> tuple[int, int, int]:
        busy, total = machine_busy()
        return busy, total, sum(process_jiffies(p) for p in self.pids)

    def start(self) -> None:
        self.begin = self._sample()

    def stop(self) -> float:
        busy, total, ours = self._sample()
        b0, t0, o0 = self.begin
        return max(0.0, (busy - b0) - (ours - o0)) / max(1, total - t0)

    def wait_quiet(self, threshold: float, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.start()
            time.sleep(0.5)
            if self.stop() <= threshold:
                return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds (default 10)")
    parser.add_argument("--exchanges", type=int, default=600, help="timed exchanges per measurement (default 600)")
    parser.add_argument("--warmup", type=int, default=100, help="untimed exchanges first (default 100)")
    parser.add_argument("--size", type=int, default=64, help="message size in bytes (default 64)")
    parser.add_argument("--delays", default="0,100,250,500,1000,5000", help="proxy delays in µs")
    parser.add_argument("--max-other-load", type=float, default=0.10,
                        help="repeat a (direct, proxied) pair during which other processes used more than this "
                             "share of the machine (default 0.10)")
    parser.add_argument("--retries", type=int, default=3, help="repeats per pair at most (default 3)")
    parser.add_argument("--no-pin", action="store_true",
                        help="do not pin the client and the echo server to different CPUs (see above)")
    parser.add_argument("--allow-idle-halt", action="store_true",
                        help="do not keep idle CPUs from halting during the run (see above)")
    parser.add_argument("--proxy-cpu", choices=["echo", "client", "none"], default="echo",
                        help="pin the proxy to the echo server's CPU (default), the client's, or not at all")
    parser.add_argument("--no-realtime", action="store_true",
                        help="do not run the proxy's relay threads under SCHED_FIFO (abproxy --realtime 10, the "
                             "default when root)")
    parser.add_argument("--proxy-arg", action="append", default=[], help="extra abproxy option (repeatable)")
    args = parser.parse_args()
    delays = [int(d) for d in args.delays.split(",")]
    if not os.access(PROXY, os.X_OK):
        sys.exit(f"{PROXY} not found: run `make -C proxy` first")

    cpus = sorted(os.sched_getaffinity(0))
    client_cpu, echo_cpu = (None, None) if args.no_pin or len(cpus) < 2 else (cpus[0], cpus[1])
    proxy_cpu = {"echo": echo_cpu, "client": client_cpu, "none": None}[args.proxy_cpu] if len(cpus) > 1 else None
    awake = None if args.allow_idle_halt else KeepAwake(cpus, spin=True)
    echo = EchoServer(echo_cpu)
    realtime = not args.no_realtime and os.geteuid() == 0
    extra = ((["--cpu", str(proxy_cpu)] if proxy_cpu is not None else []) + (["--realtime", "10"] if realtime else [])
             + args.proxy_arg)
    proxy = Proxy(echo.port, extra)  # started before this thread is pinned: it does not inherit that
    pin_thread(client_cpu)
    load = OtherLoad([os.getpid(), proxy.process.pid, *(awake.pids if awake else [])])
    direct: dict[int, list[int]] = {d: [] for d in delays}
    proxied: dict[int, list[int]] = {d: [] for d in delays}
    pairs: dict[int, list[float]] = {d: [] for d in delays}  # each pair's added RTT, ns
    made = counted = repeated = kept_busy = 0
    kept_load: list[float] = []
    mismatches: list[str] = []
    lag0 = [0.0, 0]  # at delay 0: µs summed from a chunk's arrival to its read, and chunks read
    try:
        last = proxy.command("stats")["timing"]
        for r in range(args.rounds):
            for d in delays:
                for attempt in range(args.retries + 1):
                    load.start()
                    answer = proxy.command(f"delay {d}")
                    assert answer.get("ok"), answer
                    if r % 2 == 0:
                        d_times, _, _ = ping_pong(("127.0.0.1", echo.port), args.size, args.exchanges, args.warmup)
                        p_times, local, n = ping_pong(proxy.listen, args.size, args.exchanges, args.warmup)
                    else:
                        p_times, local, n = ping_pong(proxy.listen, args.size, args.exchanges, args.warmup)
                        d_times, _, _ = ping_pong(("127.0.0.1", echo.port), args.size, args.exchanges, args.warmup)
                    other = load.stop()
                    # Every connection through the proxy is checked, repeated ones too.
                    stats = proxy.command("stats")
                    now = stats["timing"]
                    if d == 0:
                        lag0[0] += now["read_lag_mean_us"] * now["reads"] - last["read_lag_mean_us"] * last["reads"]
                        lag0[1] += now["reads"] - last["reads"]
                    last = now
                    # The newest connection from this address: an earlier, closed one may have had its port.
                    mine = [c for c in stats["per_connection"] if c["client"] == local][-1]
                    made += n
                    counted += mine["round_trips"]
                    if (mine["round_trips"], mine["c2s_bytes"], mine["s2c_bytes"]) != (n, n * args.size, n * args.size):
                        mismatches.append(f"delay {d} round {r + 1}: {n} exchanges, counters {mine}")
                    if other <= args.max_other_load or attempt == args.retries:
                        break
                    repeated += 1
                    load.wait_quiet(args.max_other_load, 30)
                kept_busy += other > args.max_other_load
                kept_load.append(other)
                direct[d] += d_times
                proxied[d] += p_times
                pairs[d].append(statistics.median(p_times) - statistics.median(d_times))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        timing = proxy.command("stats")["timing"]
    finally:
        proxy.close()
        if awake is not None:
            awake.close()

    us = 1000.0
    print(f"ping-pong of {args.size}-byte messages on 127.0.0.1, {args.exchanges:,} exchanges (after "
          f"{args.warmup} warm-up) × {args.rounds} interleaved rounds per cell"
          f"\n  {f'client on CPU {client_cpu}, echo server on CPU {echo_cpu}' if client_cpu is not None else 'client and echo server unpinned'}"
          f", proxy {'on CPU ' + str(proxy_cpu) if proxy_cpu is not None else 'unpinned'}"
          f"{' under SCHED_FIFO' if realtime else ''}"
          f"; idle CPUs {awake.how if awake else 'may halt'}"
          f"{'; proxy options ' + ' '.join(args.proxy_arg) if args.proxy_arg else ''}")
    print(f"  {'delay µs':>8} {'direct p50':>11} {'proxied p50':>12} {'added':>9} {'expected':>9} {'error':>8}"
          f" {'pairs' + chr(39) + ' added':>15} {'direct p99':>11} {'proxied p99':>12}")
    verdicts = []
    for d in delays:
        dm, pm = statistics.median(direct[d]) / us, statistics.median(proxied[d]) / us
        added, expected = statistics.median(pairs[d]) / us, 2.0 * d
        error = f"{(added - expected) / expected * 100:+7.2f}%" if expected else "      –"
        spread = f"{min(pairs[d]) / us:.1f}–{max(pairs[d]) / us:.1f}"
        print(f"  {d:8d} {dm:11.1f} {pm:12.1f} {added:9.1f} {expected:9.0f} {error:>8} {spread:>15}"
              f" {percentile(direct[d], 0.99) / us:11.1f} {percentile(proxied[d], 0.99) / us:12.1f}")
        if d == 0:
            verdicts.append((added <= 10.0, f"delay 0: added RTT {added:.1f} µs, target ≤ 10 µs"))
        elif d >= 100:
            err = (added - expected) / expected
            verdicts.append((abs(err) <= 0.03, f"delay {d} µs: added RTT {added:.1f} µs vs {expected:.0f} µs "
                                               f"({err * 100:+.2f}%), target ±3%"))
    verdicts.append((counted == made and not mismatches,
                     f"round_trips counted {counted:,} for {made:,} exchanges through the proxy"
                     f"{'' if not mismatches else ' — mismatches: ' + '; '.join(mismatches)}"))
    print("(times in µs; added = the median over pairs of (proxied p50 − direct p50), pairs' added = their range; "
          "expected = 2 × delay; error = (added − expected) / expected)")
    print(f"other processes' share of the machine during the kept pairs: median {statistics.median(kept_load) * 100:.0f}%, "
          f"max {max(kept_load) * 100:.0f}%; {repeated} pair(s) repeated for load over "
          f"{args.max_other_load * 100:.0f}%, {kept_busy} of {len(kept_load)} kept over it after {args.retries} repeats")
    print(f"proxy's own schedule: {timing['sent']:,} queued chunks sent {timing['late_mean_us']:.1f} µs late on "
          f"average (max {timing['late_max_us']:.0f} µs, {timing['late_over_10us']:,} over 10 µs); sleeps woke "
          f"{timing['wake_overshoot_mean_us']:.1f} µs late on average, {timing['missed_spin']:,} past the deadline; "
          f"spin margin now {timing['spin_us']:.0f} µs; send() took {timing['send_mean_us']:.1f} µs on average; "
          f"its own loopback hop, taken out of each delay: {timing['hop_us']:.1f} µs"
          + (f"; at delay 0 a chunk was read {lag0[0] / lag0[1]:.1f} µs after it arrived on average (its relay "
             "thread's wake-up; two a round trip)" if lag0[1] else ""))
    for ok, text in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0 if all(ok for ok, _ in verdicts) else 1


if __name__ == "__main__":
    interruptible(main)  # a kill, like Ctrl-C, stops the proxy and the load it started
