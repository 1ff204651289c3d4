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
from .messages import Request, Response
from .routes import shape_for_path

log = logging.getLogger("benchwarmers.http")
CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout, OSError)


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

    def _serve(self) -> None:
        app = self.server.app
        split = urlsplit(self.path)
        path = unquote(split.path) or "/"
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = self._read_body(headers, app.bench.settings()["max_body_mb"])
        except (BadRequest, PayloadTooLarge) as err:
            self.close_connection = True   # the unread body makes the connection unusable
            self._send(app.error_response(shape_for_path(path), err), close=True)
            return self._discard_rest()
        req = Request(self.command, path, dict(parse_qsl(split.query, keep_blank_values=True)), headers, body,
                      self.client_address[0])
        self._send(app.handle(req))

    def _read_body(self, headers: dict, max_mb: float) -> bytes:
        limit = int(max_mb * 1024 * 1024)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return self._read_chunked(limit)
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            raise BadRequest("Content-Length is not a number.") from None
        if length < 0:
            raise BadRequest("Content-Length is negative.")
        if length > limit:
            raise PayloadTooLarge(f"The request body is {length} bytes; the limit is {limit} bytes.",
                                  "Send a smaller request, or raise max_body_mb in settings.")
        return self.rfile.read(length) if length else b""

    def _read_chunked(self, limit: int) -> bytes:
        parts, total = [], 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise BadRequest("Malformed chunked request body.") from None
            if size == 0:
                while self.rfile.readline(1024).strip():   # trailers
                    pass
                return b"".join(parts)
            total += size
            if total > limit:
                raise PayloadTooLarge(f"The request body passes the limit of {limit} bytes.",
                                      "Send a smaller request, or raise max_body_mb in settings.")
            parts.append(self.rfile.read(size))
            self.rfile.readline(8)

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
        try:
            self.send_response(resp.status)
            for name, value in resp.headers.items():
                self.send_header(name, value)
            if close:
                self.send_header("Connection", "close")
            if resp.stream is None:
                self.send_header("Content-Length", str(len(resp.body)))
                # headers and body in one write (end_headers' blank line, then the body): one send, one packet
                self._headers_buffer.append(b"\r\n" + (resp.body if self.command != "HEAD" else b""))
                self.flush_headers()
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
        log.debug("%s %s", self.address_string(), fmt % args)
