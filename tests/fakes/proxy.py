"""A tiny forward proxy for tests: CONNECT tunnels and absolute-URI requests; every target goes to 127.0.0.1."""
from __future__ import annotations

import base64
import select
import socket
import socketserver
import threading
from urllib.parse import urlsplit

from .server import shut_down


class FakeProxy:
    """`seen` records {"method", "target", "headers"} per proxied request; `auth=(user, password)` demands Basic."""

    def __init__(self, *, auth: tuple[str, str] | None = None):
        self.seen: list[dict] = []
        self.auth = auth
        self.server: socketserver.ThreadingTCPServer | None = None

    def start(self) -> "FakeProxy":
        handler = type("ProxyHandler", (_ProxyHandler,), {"proxy": self})
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server:
            shut_down(self.server)
            self.server.server_close()
            self.server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self) -> str:
        creds = f"{self.auth[0]}:{self.auth[1]}@" if self.auth else ""
        return f"http://{creds}127.0.0.1:{self.server.server_address[1]}"


class _ProxyHandler(socketserver.StreamRequestHandler):
    proxy: FakeProxy

    def handle(self):
        first = self.rfile.readline().decode("latin-1").strip()
        if not first:
            return
        headers = {}
        while True:
            line = self.rfile.readline().decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        method, target, _version = first.split(" ", 2)
        self.proxy.seen.append({"method": method, "target": target, "headers": headers})
        if self.proxy.auth:
            expected = "Basic " + base64.b64encode(":".join(self.proxy.auth).encode()).decode()
            if headers.get("proxy-authorization") != expected:
                self.wfile.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n"
                                 b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                return
        if method == "CONNECT":
            port = int(target.rsplit(":", 1)[1])
            upstream = socket.create_connection(("127.0.0.1", port))
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            return pipe(self.connection, upstream)
        parts = urlsplit(target)
        upstream = socket.create_connection(("127.0.0.1", parts.port or 80))
        body = self.rfile.read(int(headers.get("content-length") or 0))
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        keep = {k: v for k, v in headers.items() if not k.startswith("proxy-") and k != "connection"}
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in keep.items())
        upstream.sendall(head.encode("latin-1") + b"Connection: close\r\n\r\n" + body)
        pipe(self.connection, upstream)


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    try:
        while True:
            readable, _, _ = select.select([a, b], [], [], 30)
            if not readable:
                return
            for src in readable:
                data = src.recv(65536)
                if not data:
                    return
                (b if src is a else a).sendall(data)
    except OSError:
        return
    finally:
        b.close()
