"""A loopback SOCKS5 proxy (RFC 1928, no authentication, CONNECT only) that logs what it connects to.

:class:`LoopbackSocks` listens on ``127.0.0.1`` (random port) in a background thread, as the SOCKS
proxy of a lab desktop (``ALL_PROXY=socks5://...``) does: each client greets (method 0, no
authentication), asks ``CONNECT host:port`` (an IPv4 address, a domain name or an IPv6 address), and
the proxy opens that connection (``routes`` maps host names to loopback ports, so a host nobody can
resolve is reached only through the proxy), answers success and relays bytes both ways. Every
``CONNECT`` is logged first (:attr:`LoopbackSocks.log`, ``host:port``).
"""

from __future__ import annotations

import contextlib
import select
import socket
import socketserver
import struct
import threading

__all__ = ["LoopbackSocks"]


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.request.recv(n - len(data))
            if not chunk:
                raise ConnectionError("client went away")
            data += chunk
        return data

    def handle(self) -> None:
        sock: socket.socket = self.request
        version, count = self._read(2)
        methods = self._read(count)
        if version != 5 or 0 not in methods:
            sock.sendall(b"\x05\xff")
            return
        sock.sendall(b"\x05\x00")
        _, command, _, atyp = self._read(4)
        if atyp == 1:
            host = socket.inet_ntoa(self._read(4))
        elif atyp == 3:
            host = self._read(self._read(1)[0]).decode("idna")
        else:
            host = socket.inet_ntop(socket.AF_INET6, self._read(16))
        (port,) = struct.unpack("!H", self._read(2))
        owner = self.server.owner
        with owner.lock:
            owner.log.append(f"{host}:{port}")
        target = owner.routes.get(host, (host, port))
        if command != 1:
            sock.sendall(b"\x05\x07\x00\x01" + bytes(6))  # command not supported
            return
        try:
            upstream = socket.create_connection(target, timeout=5)
        except OSError:
            sock.sendall(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
            return
        sock.sendall(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", 0))
        with upstream:
            pair = [sock, upstream]
            while True:
                readable, _, _ = select.select(pair, [], [], 10)
                if not readable:
                    return
                for src in readable:
                    data = src.recv(65536)
                    if not data:
                        return
                    (upstream if src is sock else sock).sendall(data)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: LoopbackSocks) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class LoopbackSocks:
    """The SOCKS5 proxy (see the module docstring); a context manager that starts and stops it."""

    def __init__(self, routes: dict[str, tuple[str, int]] | None = None) -> None:
        self.routes = dict(routes or {})
        self.log: list[str] = []
        self.lock = threading.Lock()
        self._server: _Server | None = None

    def __enter__(self) -> LoopbackSocks:
        self._server = _Server(self)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.shutdown()
                self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        """``socks5://127.0.0.1:PORT``."""
        assert self._server is not None
        return f"socks5://127.0.0.1:{self._server.server_address[1]}"
