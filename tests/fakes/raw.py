"""A byte-exact HTTP/1.1 server for transport tests: each request gets the next scripted answer, sent as given.

    with RawServer([b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nhi", RawServer.CLOSE]) as raw:
        raw.url, raw.requests, raw.connections
An answer is bytes (sent, connection kept), a list of bytes (sent piece by piece, a short pause between), CLOSE
(close without answering), or ("close", bytes) (sent, then the connection closed); once the script runs out,
every request gets a small JSON 200.
"""
from __future__ import annotations

import json
import socket
import threading
import time

DEFAULT = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"ok": true}'


class RawServer:
    CLOSE = object()

    def __init__(self, script: list | None = None):
        self.script = list(script or [])
        self.requests: list[dict] = []      # {"head": str, "body": bytes}
        self.connections = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "RawServer":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._sock.close()
        for c in list(self._conns):
            try:
                c.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    buf += conn.recv(65536)
                self.requests.append({"head": head.decode("latin-1"), "body": buf[:length]})
                buf = buf[length:]
                answer = self.script.pop(0) if self.script else DEFAULT
                if answer is self.CLOSE:
                    return
                if isinstance(answer, tuple):
                    conn.sendall(answer[1])
                    return
                for piece in (answer if isinstance(answer, list) else [answer]):
                    conn.sendall(piece)
                    if isinstance(answer, list):
                        time.sleep(0.05)
        except OSError:
            return
        finally:
            conn.close()


def json_response(obj, *, chunked: bool = False, extra: str = "", version: str = "HTTP/1.1") -> bytes:
    """A 200 carrying `obj` as JSON, by Content-Length or in two chunks."""
    body = json.dumps(obj).encode()
    head = f"{version} 200 OK\r\nContent-Type: application/json\r\n{extra}"
    if not chunked:
        return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    half = len(body) // 2
    return (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + b"%x\r\n%s\r\n%x;ext=1\r\n%s\r\n0\r\n\r\n" % (
        half, body[:half], len(body) - half, body[half:])
