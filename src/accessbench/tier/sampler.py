"""Where a loaded page's time went: one of the load's connections, driven here, reads every
answer's ``Server-Timing`` header (tier/tfb.py).

Neither ab nor wrk reads a response's headers, and a wrk script that did would run Lua for
every response in wrk's own threads, on the cores the app server and the database share with
it. So of a trial's C connections, the load generator drives C − 1 and this client the last
one, as the generator drives each of its own: under wrk, HTTP/1.1 kept alive (a new connection
where the app server closed the last, as gunicorn's sync workers do), each request timed from
its writing to its answer read, the connecting left out; under ab (no keep-alive), a new
connection a request, timed from the connecting. The next request goes as soon as the last
answer has arrived. So its requests wait in the same queues as the load's (for the app server's processes,
for the database's connections) and are a sample of them; they are counted with wrk's in the
trial's requests and their latencies merged into its histogram. Its client costs about 17 µs
of CPU a request here, twice one of wrk's connections (9 µs), where Python's http.client would
cost 71 (bench/sampler_cost.py).

The pages' Server-Timing splits each request inside the page: the database (``db``) and the
page's own work (``app`` − ``db``: its language, its framework, its encoding); the rest of the
load's round trip is neither's (stats/requests.py).
"""

from __future__ import annotations

import re
import socket
import threading
import time
from dataclasses import replace
from urllib.parse import urlsplit

from ..protocol.histogram import Histogram
from .loadgen import Load
from .tfb import read_timing

HEADER_END = b"\r\n\r\n"
STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")
HEADER = re.compile(rb"\r\n(content-length|transfer-encoding|connection|server-timing):[ \t]*([^\r]*)", re.I)


class Closed(Exception):
    """The app server closed the connection before a whole answer."""


class Sampler:
    """``with Sampler(url) as sampled: …the load's other connections…``, then
    ``sampled.answer()`` and ``sampled.histogram``."""

    def __init__(self, url: str, keep_alive: bool = True) -> None:
        parts = urlsplit(url)
        self.address = (parts.hostname or "127.0.0.1", parts.port or 80)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        close = "" if keep_alive else "Connection: close\r\n"
        self.request = f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\n{close}\r\n".encode()
        self.keep_alive = keep_alive
        self.n = self.db_ns = self.app_ns = self.latency_ns = 0
        self.non_2xx = self.failed = self.unsplit = 0
        self.histogram = Histogram()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None  # the connection in use, shut by __exit__
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="sampler", daemon=True)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        """The load has ended: the request in flight is abandoned, as wrk abandons its own (its
        connection shut, so that a page slower than the trial does not hold the trial's end)."""
        with self._lock:  # the loop registers each connection under it: none escapes the shutdown
            self._stop.set()
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join()

    def joined(self, load: Load) -> Load:
        """The trial's load: the generator's connections' and this one's, together."""
        histogram = load.histogram
        if histogram is not None:
            histogram.merge(self.histogram)
        return replace(load, requests=load.requests + self.n, failed=load.failed + self.failed,
                       non_2xx=load.non_2xx + self.non_2xx, histogram=histogram)

    def answer(self) -> dict | None:
        """The split requests' sums (nanoseconds) and their count, or None where none was split."""
        split = self.n - self.unsplit
        if not split:
            return None
        return {"n": split, "db_ns": self.db_ns, "app_ns": self.app_ns, "latency_ns": self.latency_ns}

    def _loop(self) -> None:
        sock, buffer = None, b""
        while not self._stop.is_set():
            try:
                began = time.perf_counter_ns()
                if sock is None:
                    sock, buffer = socket.create_connection(self.address, timeout=600), b""
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    with self._lock:
                        if self._stop.is_set():
                            break
                        self._sock = sock
                    if self.keep_alive:  # wrk times a request from its writing
                        began = time.perf_counter_ns()
                sock.sendall(self.request)
                status, headers, buffer, close = _read_answer(sock, buffer)
                latency = time.perf_counter_ns() - began
            except (OSError, Closed):
                if sock is not None:
                    sock.close()
                sock = self._sock = None
                if not self._stop.is_set():  # a failure, as wrk counts one; not a loop spinning on it
                    self.failed += 1
                    self._stop.wait(0.01)
                continue
            if close:
                sock.close()
                sock = self._sock = None
            if self._stop.is_set():  # it ended after the load did, in a quieter server
                break
            self._count(status, headers.get(b"server-timing"), latency)
        if sock is not None:
            sock.close()

    def _count(self, status: int, timing_header: bytes | None, latency: int) -> None:
        self.n += 1
        self.histogram.record(latency)
        if not 200 <= status < 300:
            self.non_2xx += 1
        timing = read_timing(timing_header.decode("latin-1")) if timing_header and status == 200 else None
        if timing is None:
            self.unsplit += 1
            return
        db, app = timing
        self.db_ns, self.app_ns, self.latency_ns = self.db_ns + db, self.app_ns + app, self.latency_ns + latency


def _read_answer(sock: socket.socket, buffer: bytes) -> tuple[int, dict[bytes, bytes], bytes, bool]:
    """One answer from ``sock`` (``buffer``: what was read past the last): its status, the
    headers this client reads, what was read past it, and whether the server closes after it.
    Its body is read by Content-Length, by chunks, or to the connection's end."""
    while (end := buffer.find(HEADER_END)) < 0:
        buffer = _more(sock, buffer)
    head, buffer = buffer[:end], buffer[end + 4:]
    found = STATUS.match(head)
    if found is None:
        raise Closed(f"not an HTTP answer: {head[:60]!r}")
    headers = {name.lower(): value.strip() for name, value in HEADER.findall(head)}
    close = headers.get(b"connection", b"").lower() == b"close"
    if b"content-length" in headers:
        length = int(headers[b"content-length"])
        while len(buffer) < length:
            buffer = _more(sock, buffer)
        return int(found.group(1)), headers, buffer[length:], close
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        return int(found.group(1)), headers, _past_chunks(sock, buffer), close
    while True:  # neither: the body runs to the connection's end
        try:
            buffer = _more(sock, buffer)
        except Closed:
            return int(found.group(1)), headers, b"", True


def _past_chunks(sock: socket.socket, buffer: bytes) -> bytes:
    """What follows a chunked body that begins ``buffer``."""
    while True:
        while (line_end := buffer.find(b"\r\n")) < 0:
            buffer = _more(sock, buffer)
        size = int(buffer[:line_end].split(b";")[0], 16)
        if size == 0:  # the last chunk, then (no trailers here) an empty line
            while (end := buffer.find(HEADER_END)) < 0:
                buffer = _more(sock, buffer)
            return buffer[end + 4:]
        while len(buffer) < line_end + 2 + size + 2:
            buffer = _more(sock, buffer)
        buffer = buffer[line_end + 2 + size + 2:]


def _more(sock: socket.socket, buffer: bytes) -> bytes:
    data = sock.recv(65536)
    if not data:
        raise Closed("the app server closed the connection")
    return buffer + data
