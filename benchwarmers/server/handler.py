"""A thin http.server handler: HTTP/1.1, bounded bodies, chunked streams, no HTML errors, no stderr noise."""
from __future__ import annotations

import json
import logging
import os
import socket
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from .. import __version__
from ..errors import BadRequest, PayloadTooLarge
from ..redaction import redact
from .messages import Request, Response

log = logging.getLogger("benchwarmers.http")
MAX_CHUNK_LINE = 1024      # a chunk-size line, extensions included
MAX_TRAILERS = 32
CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout, OSError)


def chunk_size(line: bytes) -> int | None:
    """The size on a chunk-size line (extensions after `;` ignored), or None unless it is 1 to 8 hex digits."""
    if not line.endswith(b"\n") or len(line) > MAX_CHUNK_LINE:
        return None
    digits = line.split(b";", 1)[0].strip()
    if not 1 <= len(digits) <= 8 or any(c not in HEX for c in digits):
        return None
    return int(digits, 16)


HEX = frozenset(b"0123456789abcdefABCDEF")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # POSIX: a restart may bind at once over the last run's TIME_WAIT connections. Windows: SO_REUSEADDR would let
    # a second process bind the port in use, so the port is claimed exclusively instead.
    allow_reuse_address = os.name != "nt"
    request_queue_size = 128

    def __init__(self, address, app, family=socket.AF_INET):
        self.address_family = family
        self.app = app
        super().__init__(address, Handler)

    def server_bind(self):
        exclusive = getattr(socket, "SO_EXCLUSIVEADDRUSE", None)      # Windows only
        if exclusive is not None and not self.allow_reuse_address:
            self.socket.setsockopt(socket.SOL_SOCKET, exclusive, 1)
        super().server_bind()

    def handle_error(self, request, client_address):
        """socketserver prints these to stderr; they are mostly clients that went away: log them instead."""
        log.debug("connection from %s ended with an error", client_address, exc_info=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = f"Benchwarmers/{__version__}"
    sys_version = ""
    timeout = 120   # an idle keep-alive connection is closed after this long
    # Headers and body go out in separate writes; with Nagle on, the body waits for the client's delayed ACK
    # (~40 ms on Linux) whenever the connection is otherwise quiet.
    disable_nagle_algorithm = True

    def version_string(self) -> str:
        return self.server_version

    def setup(self) -> None:
        super().setup()
        try:   # small SSE frames must leave at once, not wait on Nagle and a delayed ACK
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def do_GET(self): self._serve()
    def do_HEAD(self): self._serve()
    def do_POST(self): self._serve()
    def do_PUT(self): self._serve()
    def do_PATCH(self): self._serve()
    def do_DELETE(self): self._serve()
    def do_OPTIONS(self): self._serve()

    def __getattr__(self, name: str):
        """Any other method (TRACE, CONNECT, PROPFIND, ...) goes to the app too, which answers 405 with Allow on a
        known path and 404 elsewhere, in the path's own error shape: never http.server's 501."""
        if name.startswith("do_") and name[3:].isalpha() and name[3:].isupper():
            return self._serve
        raise AttributeError(name)

    def _serve(self) -> None:
        app = self.server.app
        split = urlsplit(self.path)
        path = unquote(split.path) or "/"
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = Request(self.command, path, dict(parse_qsl(split.query, keep_blank_values=True)), headers, b"",
                      self.client_address[0])
        admitted = app.admit(req)          # Host, Origin, route and auth first: a refused request's body is never read
        if isinstance(admitted, Response):
            if self._has_body(headers):
                self.close_connection = True   # its body stays unread, so the connection cannot go on
                self._send(admitted, close=True)
                return self._discard_rest()
            return self._send(admitted)
        try:
            req.body = self._read_body(headers, app.bench.settings()["max_body_mb"])
        except (BadRequest, PayloadTooLarge) as err:
            self.close_connection = True   # the unread body makes the connection unusable
            self._send(app.error_response(admitted.shape, err), close=True)
            return self._discard_rest()
        self._send(app.serve(req, admitted))

    @staticmethod
    def _has_body(headers: dict) -> bool:
        return "transfer-encoding" in headers or (headers.get("content-length") or "0").strip() not in ("", "0")

    def _read_body(self, headers: dict, max_mb: float) -> bytes:
        limit = int(max_mb * 1024 * 1024)
        if "transfer-encoding" in headers:
            if headers["transfer-encoding"].strip().lower() != "chunked" or "content-length" in headers:
                raise BadRequest("Only Transfer-Encoding: chunked is understood, and never with Content-Length.",
                                 "Send Content-Length, or chunked alone.")
            return self._read_chunked(limit)
        raw = (headers.get("content-length") or "0").strip()
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 15:   # int() would take "+5", "1_0" and " 5"
            raise BadRequest("Content-Length is not a number.", "Send the body's size in bytes, digits only.")
        length = int(raw)
        if length > limit:
            raise PayloadTooLarge(f"The request body is {length} bytes; the limit is {limit} bytes.",
                                  "Send a smaller request, or raise max_body_mb in settings.")
        return self._read_exactly(length)

    def _read_exactly(self, length: int) -> bytes:
        data = self.rfile.read(length) if length else b""
        if len(data) < length:
            raise BadRequest(f"The request body ended after {len(data)} of {length} bytes.",
                             "Send the whole body Content-Length announces.")
        return data

    def _read_chunked(self, limit: int) -> bytes:
        """Chunk sizes are hex digits only (a few of them), and every byte read, framing included, counts against
        the limit: a size like -1 once read until the client hung up, past every check."""
        parts, total = [], 0
        while True:
            line = self.rfile.readline(MAX_CHUNK_LINE + 1)
            total += len(line)
            size = chunk_size(line)
            if size is None:
                raise BadRequest("Malformed chunked request body.", "Each chunk starts with its size in hex digits.")
            if total + size > limit:
                raise PayloadTooLarge(f"The request body passes the limit of {limit} bytes.",
                                      "Send a smaller request, or raise max_body_mb in settings.")
            if size == 0:
                for _ in range(MAX_TRAILERS):      # trailers, bounded too
                    trailer = self.rfile.readline(MAX_CHUNK_LINE + 1)
                    total += len(trailer)
                    if not trailer.strip() or total > limit:
                        break
                return b"".join(parts)
            parts.append(self._read_exactly(size))
            total += size
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise BadRequest("Malformed chunked request body.", "Each chunk ends with CR LF.")

    def _discard_rest(self, cap: int = 4 * 1024 * 1024, seconds: float = 1.0) -> None:
        """Read (bounded) what the client is still sending: closing on unread data resets the connection,
        and a reset can destroy the error answer before the client reads it."""
        deadline = time.monotonic() + seconds
        total = 0
        try:
            self.wfile.flush()
            self.connection.settimeout(0.2)
            while total < cap and time.monotonic() < deadline:
                try:
                    chunk = self.rfile.read1(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    break
                total += len(chunk)
        except (OSError, ValueError):
            pass

    def _send(self, resp: Response, close: bool = False) -> None:
        if any(_unsafe(n) or _unsafe(v) for n, v in resp.headers.items()):
            log.error("refused to send a header with a line break in it on %s", self.command)
            resp = Response(500, b'{"error": {"code": "internal_error", "message": "The service built a bad '
                            b'header; the log has details."}}', {"Content-Type": "application/json"})
        try:
            self.send_response(resp.status)
            for name, value in resp.headers.items():
                self.send_header(name, value)
            if close:
                self.send_header("Connection", "close")
            if resp.stream is None:
                self.send_header("Content-Length", str(len(resp.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(resp.body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._write_stream(resp.stream)
        except CLIENT_GONE:
            self.close_connection = True

    def _write_stream(self, chunks) -> None:
        try:
            for chunk in chunks:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except CLIENT_GONE:
            self.close_connection = True   # the client left; closing the generator stops our side of it
        finally:
            close = getattr(chunks, "close", None)
            if close:
                close()

    def send_error(self, code, message=None, explain=None):
        """http.server calls this for bad request lines; answer JSON, never its HTML page."""
        body = json.dumps({"error": {"code": "bad_request", "message": message or "Bad request."}}).encode()
        try:
            self.send_response(code, message)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except CLIENT_GONE:
            pass
        self.close_connection = True

    def log_message(self, fmt, *args):
        # the request line may carry a gateway key as ?key=: redact() takes it out
        log.debug("%s %s", self.address_string(), redact(fmt % args))


def _unsafe(text) -> bool:
    """A header name or value that could end the header early (CR LF injection, a split response)."""
    return any(c in str(text) for c in "\r\n\0")
