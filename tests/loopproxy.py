"""A loopback HTTP proxy that logs what it forwards, and throwaway TLS certificates, for network tests.

:class:`LoopbackProxy` listens on ``127.0.0.1`` (random port) in a background thread, as a lab's
forward proxy does:

* ``GET http://host:port/path`` (absolute form): forwarded to ``host:port`` and answered back;
* ``CONNECT host:port``: a tunnel (``200 Connection established``, then bytes both ways), as clients
  use for ``https://`` URLs;
* every request is logged first (:attr:`LoopbackProxy.log`: method, target, ``Proxy-Authorization``
  seen or not);
* ``routes`` maps host names to loopback ports, so URLs naming hosts nobody can resolve (``*.invalid``)
  reach a local server only through the proxy: with the proxy gone, nothing does;
* ``refuse``: answer every request ``403`` (``CONNECT`` included), as a proxy that forbids the host.

:func:`make_tls` writes a CA certificate and a server certificate for ``127.0.0.1`` / ``localhost`` it
signed (PEM files, via ``cryptography``), and :func:`server_context` the server side's SSL context.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import ipaddress
import select
import socket
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["Forwarded", "LoopbackProxy", "TlsFiles", "make_tls", "server_context"]


@dataclass(frozen=True)
class Forwarded:
    """One request the proxy received: ``method`` and ``target`` (absolute URL, or ``host:port`` for
    ``CONNECT``), whether it carried ``Proxy-Authorization``, and the ``status`` the proxy answered.
    """

    method: str
    target: str
    authorized: bool
    status: int


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: LoopbackProxy) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the log is :attr:`LoopbackProxy.log`."""

    def _record(self, status: int) -> None:
        entry = Forwarded(
            self.command, self.path, "proxy-authorization" in {k.lower() for k in self.headers}, status
        )
        with self.server.owner.lock:
            self.server.owner.log.append(entry)

    def _address(self, host: str, port: int) -> tuple[str, int]:
        return self.server.owner.routes.get(host, (host, port))

    def do_CONNECT(self) -> None:
        """Open a tunnel to ``host:port`` (or its route)."""
        host, _, port = self.path.rpartition(":")
        if self.server.owner.refuse:
            self._record(403)
            self.send_error(403, "Forbidden by proxy policy")
            return
        try:
            upstream = socket.create_connection(self._address(host, int(port)), timeout=10)
        except OSError:
            self._record(502)
            self.send_error(502, "Cannot reach upstream")
            return
        self._record(200)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        client = self.connection
        try:
            while True:
                ready, _, _ = select.select([client, upstream], [], [], 10)
                if not ready:
                    return
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is client else client).sendall(data)
        except OSError:
            return
        finally:
            upstream.close()

    def _forward(self) -> None:
        """Forward an absolute-form request to its host (or route) and relay the answer."""
        parts = urlsplit(self.path)
        if self.server.owner.refuse or not parts.hostname:
            self._record(403)
            self.send_error(403, "Forbidden by proxy policy")
            return
        host, port = self._address(parts.hostname, parts.port or 80)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {
            k: v
            for k, v in self.headers.items()
            if k.lower() not in {"proxy-authorization", "proxy-connection", "connection", "keep-alive"}
        }
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        conn = http.client.HTTPConnection(host, port, timeout=30)
        try:
            conn.request(self.command, target or "/", body=body, headers=headers)
            answer = conn.getresponse()
            payload = answer.read()
        except OSError:
            self._record(502)
            self.send_error(502, "Cannot reach upstream")
            return
        finally:
            conn.close()
        self._record(answer.status)
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in {"transfer-encoding", "connection", "content-length"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_HEAD = do_POST = _forward


class LoopbackProxy:
    """The proxy (see the module docstring); a context manager that starts and stops it."""

    def __init__(self, routes: dict[str, tuple[str, int]] | None = None) -> None:
        self.routes = dict(routes or {})
        self.refuse = False
        self.log: list[Forwarded] = []
        self.lock = threading.Lock()
        self._server: _Server | None = None

    def __enter__(self) -> LoopbackProxy:
        self._server = _Server(self)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    def targets(self) -> list[str]:
        """The targets forwarded so far, in order."""
        with self.lock:
            return [f.target for f in self.log]


@dataclass(frozen=True)
class TlsFiles:
    """PEM files: the CA certificate, and the server certificate it signed with the server's key."""

    ca: Path
    cert: Path
    key: Path


def make_tls(directory: Path) -> TlsFiles:
    """A throwaway CA and a server certificate for ``127.0.0.1`` and ``localhost``, valid for a day."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "syncd test lab proxy CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return files


def server_context(files: TlsFiles) -> ssl.SSLContext:
    """The server side's TLS context for :func:`make_tls`'s certificate."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(files.cert, files.key)
    with contextlib.suppress(AttributeError):
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx
