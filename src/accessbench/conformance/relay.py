"""A TCP relay from another loopback address to a server, for conformance's TLS check: the
server's own certificate (for localhost and 127.0.0.1) reached at an address it does not name,
which a driver asked to verify the host name (``verify-full``) must refuse. Bytes pass through
untouched, both ways, so TLS runs end to end between the worker and the server."""

from __future__ import annotations

import socket
import threading

ELSEWHERE = "127.0.0.2"  # loopback (127.0.0.0/8), not named in the run authority's certificates


class Relay:
    def __init__(self, to: tuple[str, int], host: str = ELSEWHERE) -> None:
        self.to = to
        self.listener = socket.create_server((host, 0))
        self.host, self.port = self.listener.getsockname()[:2]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            try:
                server = socket.create_connection(self.to)
            except OSError:
                client.close()
                continue
            self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self.listener.close()
        for s in self.open:
            s.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass
