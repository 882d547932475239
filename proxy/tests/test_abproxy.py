"""Functional tests of abproxy (build it first: `make -C proxy`). Run with pytest, or as a script:

    .venv/bin/python -m pytest proxy/tests/test_abproxy.py -q
    .venv/bin/python proxy/tests/test_abproxy.py

They use 127.0.0.1 only. Timing assertions are loose (the machine may be busy); the fidelity
of the delay is measured by bench/proxy_fidelity.py, not here.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROXY = os.environ.get("ABPROXY") or os.path.join(os.path.dirname(HERE), "build", "abproxy")


class Echo:
    """Echo server; with sink=True it reads everything and answers with a SHA-256 at EOF."""

    def __init__(self, sink: bool = False) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.sink = sink
        self.errors: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.sink:
                h = hashlib.sha256()
                while data := conn.recv(1 << 16):
                    h.update(data)
                conn.sendall(h.hexdigest().encode())
            else:
                while data := conn.recv(1 << 16):
                    conn.sendall(data)
        except OSError as e:
            self.errors.append(str(e))
        finally:
            conn.close()

    def close(self) -> None:
        self.sock.close()


class Proxy:
    def __init__(self, port: int, *options: str) -> None:
        self.p = subprocess.Popen([PROXY, "--listen", "127.0.0.1:0", "--target", f"127.0.0.1:{port}", *options],
                                  stdout=subprocess.PIPE, text=True)
        info = json.loads(self.p.stdout.readline())
        host, port_ = info["listen"].rsplit(":", 1)
        self.addr = (host, int(port_))
        host, cport = info["control"].rsplit(":", 1)
        self.ctl = socket.create_connection((host, int(cport)))
        self.ctl_file = self.ctl.makefile("rw", encoding="utf-8", newline="\n")

    def cmd(self, line: str) -> dict:
        self.ctl_file.write(line + "\n")
        self.ctl_file.flush()
        return json.loads(self.ctl_file.readline())

    def connect(self) -> socket.socket:
        s = socket.create_connection(self.addr)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def close(self) -> None:
        if self.p.poll() is None:
            self.cmd("quit")
            assert self.p.wait(5) == 0


def recv_exactly(s: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        more = s.recv(n - len(got))
        assert more, "connection closed early"
        got += more
    return got


def rtt(s: socket.socket, size: int = 32) -> float:
    msg = os.urandom(size)
    t = time.perf_counter()
    s.sendall(msg)
    assert recv_exactly(s, size) == msg
    return time.perf_counter() - t


def with_proxy(*options: str, sink: bool = False):
    def wrap(test):
        def run():
            echo = Echo(sink)
            proxy = Proxy(echo.port, *options)
            try:
                test(proxy)
            finally:
                proxy.close()
                echo.close()
        run.__name__ = test.__name__
        return run
    return wrap


@with_proxy("--delay-us", "2000")
def test_each_direction_is_delayed_and_each_exchange_counted(proxy: Proxy) -> None:
    s = proxy.connect()
    times = sorted(rtt(s) for _ in range(20))
    assert times[0] >= 0.004, times  # 2 ms each way, never less (a loaded host only adds)
    stats = proxy.cmd("stats")
    (c,) = stats["per_connection"]
    assert c["open"] and stats["connections"] == 1 and stats["accepted"] == 1
    assert c["round_trips"] == stats["totals"]["round_trips"] == 20, c
    assert c["c2s_bytes"] == c["s2c_bytes"] == 20 * 32
    assert c["c2s_chunks"] >= 20, c
    s.close()


@with_proxy("--delay-us", "2000", sink=True)
def test_client_chunks_before_any_reply_are_one_round_trip(proxy: Proxy) -> None:
    # A pipelined burst: three client chunks, however far apart, then the one reply (the sink
    # answers at end of input only).
    s = proxy.connect()
    for part in (b"a" * 10, b"b" * 10, b"c" * 10):
        s.sendall(part)
        time.sleep(0.001)
    s.shutdown(socket.SHUT_WR)
    assert recv_exactly(s, 64).decode() == hashlib.sha256(b"a" * 10 + b"b" * 10 + b"c" * 10).hexdigest()
    (c,) = proxy.cmd("stats")["per_connection"]
    assert c["round_trips"] == 1, c
    assert c["c2s_bytes"] == 30 and c["s2c_bytes"] == 64, c
    assert 1 <= c["c2s_chunks"] <= 3, c  # the proxy may read the burst as fewer chunks
    s.close()


@with_proxy("--delay-us", "300", "--jitter-us", "200")
def test_jitter_spreads_but_never_reorders(proxy: Proxy) -> None:
    s = proxy.connect()
    times = [rtt(s) for _ in range(300)]
    spread = sorted(times)[270] - sorted(times)[30]
    assert spread > 0.0002, spread  # two directions of σ = 200 µs each
    # A stream of numbered writes comes back intact and in order.
    data = b"".join(i.to_bytes(4, "big") for i in range(20000))
    reader = threading.Thread(target=lambda: out.append(recv_exactly(s, len(data))))
    out: list[bytes] = []
    reader.start()
    for i in range(0, len(data), 100):
        s.sendall(data[i:i + 100])
    reader.join(30)
    assert out and out[0] == data
    s.close()


@with_proxy("--delay-us", "0", "--bandwidth", "1000000", sink=True)
def test_bandwidth_and_integrity(proxy: Proxy) -> None:
    s = proxy.connect()
    data = os.urandom(1_000_000)
    t = time.perf_counter()
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)  # the half-close reaches the server after the data
    digest = recv_exactly(s, 64).decode()
    elapsed = time.perf_counter() - t
    assert digest == hashlib.sha256(data).hexdigest()
    assert elapsed >= 0.9, elapsed  # 1 MB at 1 MB/s: never faster
    assert s.recv(10) == b""  # then the server's EOF
    s.close()


@with_proxy("--delay-us", "1000", sink=True)
def test_large_transfer_with_backpressure(proxy: Proxy) -> None:
    s = proxy.connect()
    data = os.urandom(40_000_000)  # more than the 16 MiB queue limit
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    assert recv_exactly(s, 64).decode() == hashlib.sha256(data).hexdigest()
    c = proxy.cmd("stats")["per_connection"][0]
    assert c["c2s_bytes"] == len(data) and c["round_trips"] == 1
    s.close()


@with_proxy("--delay-us", "0")
def test_stall_holds_then_drains_in_order(proxy: Proxy) -> None:
    s = proxy.connect()
    s.settimeout(30)  # a stall that never ends fails the test rather than hanging it
    rtt(s)
    assert proxy.cmd("stall 300") == {"ok": True, "stall_ms": 300}
    t = time.perf_counter()
    s.sendall(b"1234")
    s.sendall(b"5678")
    assert recv_exactly(s, 8) == b"12345678"
    assert time.perf_counter() - t >= 0.29
    rtt(s)  # over: the connection carries on
    s.close()


@with_proxy("--delay-us", "100")
def test_reset_and_delay_command(proxy: Proxy) -> None:
    a, b = proxy.connect(), proxy.connect()
    rtt(a), rtt(b)
    assert proxy.cmd("delay 3000") == {"ok": True, "delay_us": 3000}
    assert rtt(a) >= 0.006
    assert proxy.cmd("reset") == {"ok": True, "reset": 2}
    for s in (a, b):
        try:
            data = s.recv(10)
            assert data == b"", data
        except ConnectionResetError:
            pass
    deadline = time.monotonic() + 30
    while (stats := proxy.cmd("stats"))["connections"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stats["connections"] == 0 and stats["accepted"] == 2
    assert all(not c["open"] for c in stats["per_connection"])
    assert rtt(proxy.connect()) >= 0.006  # a new connection works
    assert proxy.cmd("bogus")["ok"] is False
    assert proxy.cmd("delay -1")["ok"] is False


def test_refused_target_resets_client() -> None:
    spare = socket.socket()
    spare.bind(("127.0.0.1", 0))
    port = spare.getsockname()[1]
    spare.close()  # nothing listens there
    proxy = Proxy(port, "--delay-us", "0")
    try:
        s = proxy.connect()
        try:
            assert s.recv(10) == b""
        except ConnectionResetError:
            pass
        stats = proxy.cmd("stats")
        assert stats["accepted"] == 1 and stats["connections"] == 0
    finally:
        proxy.close()


def test_own_hop_is_measured_at_start_and_can_be_set() -> None:
    echo = Echo()
    try:
        for options, check in (((), lambda hop: 0 < hop < 1000), (("--hop-us", "0"), lambda hop: hop == 0),
                               (("--hop-us", "7"), lambda hop: hop == 7)):
            proxy = Proxy(echo.port, "--delay-us", "500", *options)
            try:
                hop = proxy.cmd("stats")["timing"]["hop_us"]
                assert check(hop), (options, hop)
                s = proxy.connect()
                assert rtt(s) >= 2 * (500 - hop) / 1e6  # the hop comes out of the delay, no more
                s.close()
            finally:
                proxy.close()
    finally:
        echo.close()


def test_sigterm_exits() -> None:
    echo = Echo()
    proxy = Proxy(echo.port, "--delay-us", "0")
    proxy.p.terminate()
    assert proxy.p.wait(5) == 0
    echo.close()


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("test_") and callable(fn):
            t = time.perf_counter()
            fn()
            print(f"ok  {name} ({time.perf_counter() - t:.1f} s)")
