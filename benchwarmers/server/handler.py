"""A thin http.server handler: HTTP/1.1, bounded bodies, chunked streams, no HTML errors, no stderr noise."""
from __future__ import annotations

import email.utils
import io
import json
import logging
import os
import select
import socket
import socketserver
import time
from functools import lru_cache, partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

from .. import __version__
from ..errors import BadRequest, PayloadTooLarge
from ..redaction import redact
from . import requestbody
from .bodies import Bodies, Crowded
from .messages import Request, Response
from .requestbody import BodyTooSlow, has_body, read_body, seconds
from .routes import shape_for_path
from .reading import (IDLE_SECONDS, MAX_REQUEST_LINE, BadFraming, Deadlined, HeadersTooLarge, TooSlow, read_headers,
                      version_number)

log = logging.getLogger("benchwarmers.http")
CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout, OSError)
# A request's line and headers must all arrive within HEAD_SECONDS of its first byte (its body: requestbody.py): a
# socket timeout bounds one read only, so a client trickling a byte now and then once held a thread for ever. A
# module constant: tests make it small.
HEAD_SECONDS = 60.0
QUIET_SECONDS = 0.2        # after an error answer, a pause this long means the client has sent what it had
ERROR_CODES = {408: "request_timeout", 414: "uri_too_long", 431: "headers_too_large",
               505: "http_version_not_supported"}   # send_error's codes; any other status is a bad_request


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # POSIX: a restart may bind at once over the last run's TIME_WAIT connections. Windows: SO_REUSEADDR would let
    # a second process bind the port in use, so the port is claimed exclusively instead.
    allow_reuse_address = os.name != "nt"
    request_queue_size = 128

    def __init__(self, address, app, family=socket.AF_INET):
        self.address_family = family
        self.app = app
        self.bodies = Bodies()     # the bytes of bodies this process holds at once, across its requests
        super().__init__(address, Handler)

    def server_bind(self):
        exclusive = getattr(socket, "SO_EXCLUSIVEADDRUSE", None)      # Windows only
        if exclusive is not None and not self.allow_reuse_address:
            self.socket.setsockopt(socket.SOL_SOCKET, exclusive, 1)
        # http.server's own server_bind would also look up this host's full name (socket.getfqdn: a reverse DNS
        # query, which can stall a start for seconds) for a server_name nothing here reads
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def handle_error(self, request, client_address):
        """socketserver prints these to stderr; they are mostly clients that went away: log them instead."""
        log.debug("connection from %s ended with an error", client_address, exc_info=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = f"Benchwarmers/{__version__}"
    sys_version = ""
    timeout = None  # the socket's timeout, set per connection by setup()
    # Headers and body go out in separate writes; with Nagle on, the body waits for the client's delayed ACK
    # (~40 ms on Linux) whenever the connection is otherwise quiet.
    disable_nagle_algorithm = True
    # what the base class leaves vague or types otherwise (declarations for the type checker; nothing set here)
    server: Server
    rfile: io.BufferedReader               # Deadlined, buffered (setup)
    headers: dict  # type: ignore[assignment]   # read_headers' dict of lower-case names, not email's Message
    _headers_buffer: list[bytes]           # http.server's own buffer of the head being written

    def version_string(self) -> str:
        return self.server_version

    def setup(self) -> None:
        # The longest one read or write waits (a client that stops reading an answer is dropped after it): no
        # longer than a deadline (see Deadlined); an idle connection waits IDLE_SECONDS in waits of this. Read here,
        # not at import, so tests may patch the constants.
        self.timeout = min(IDLE_SECONDS, HEAD_SECONDS, requestbody.BODY_SECONDS)
        super().setup()
        try:   # small SSE frames must leave at once, not wait on Nagle and a delayed ACK
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        # http.server's rfile, read through Deadlined: the head and the body are read against their deadlines
        self.clock = Deadlined(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self.clock, io.DEFAULT_BUFFER_SIZE)

    def handle_one_request(self) -> None:
        """http.server's, with the request's head held to a deadline from its first byte, every request line
        answered (414, 400, 505, 408: always with a status line, never http.server's 501) and every method that is
        upper-case letters (TRACE, PROPFIND, ...) sent to the app, which answers 405 with Allow on a known path and
        404 elsewhere, in the path's own error shape."""
        self.clock.stop()                   # (every answer stops it already; a request left unanswered may not)
        try:
            if not self.rfile.peek(1):      # the idle wait for the first byte: the read readline would make anyway
                self.close_connection = True   # the connection ended between requests
                return
        except OSError:                     # idle past IDLE_SECONDS, or gone: closed without a word, as before
            self.close_connection = True
            return
        self.clock.start(HEAD_SECONDS)
        # an answer before the request line is read reads these (command None: as http.server's own first line)
        self.command, self.requestline = None, ""  # type: ignore[assignment]
        try:
            self.raw_requestline = self.rfile.readline(MAX_REQUEST_LINE + 1)
            if len(self.raw_requestline) > MAX_REQUEST_LINE:
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG,
                                f"The request line is over {MAX_REQUEST_LINE} bytes: the URL is too long. Send a "
                                "shorter URL; large values belong in the request body.")
                return self._discard_rest()
            if self.parse_request():
                self._serve()
        except TooSlow:
            self.send_error(HTTPStatus.REQUEST_TIMEOUT, "The request's line and headers (its head) did not all "
                            f"arrive within {seconds(HEAD_SECONDS)} of its first byte. Send the whole head at once.")
        except TimeoutError:                # a write to a client that stopped reading timed out
            self.close_connection = True

    def parse_request(self) -> bool:
        """http.server's checks of the request line, and its answers to a bad one, but no HTTP/0.9 (a request line
        without a version: http.server answers it without a status line); the headers read by read_headers
        (email.parser, which http.server uses, costs ten times as much a request)."""
        self.command, self.request_version = None, self.default_request_version  # type: ignore[assignment]
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if not words:
            return False
        if len(words) == 3:
            number = version_number(words[-1])
            if number is None:
                self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request version ({words[-1][:20]!r}): send HTTP/1.1.")
                return False
            if number[0] != 1:
                self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"Invalid HTTP version ({words[-1][5:]})")
                return False
            self.close_connection = number < (1, 1)
            self.request_version = words[-1]
        else:
            self.send_error(HTTPStatus.BAD_REQUEST, f"Bad request syntax ({self.requestline[:100]!r}): a request "
                                                    "line is METHOD PATH HTTP/1.1, one space between each.")
            return False
        if not (words[0].isascii() and words[0].isalpha() and words[0].isupper()):
            self.send_error(HTTPStatus.BAD_REQUEST, f"The method {words[0][:20]!r} is not one this service answers: "
                                                    f"methods are upper case ({', '.join(self._methods())}).")
            return False
        self.command, self.path = words[0], words[1]
        if self.path.startswith("//"):      # as http.server: never read as a scheme-less absolute URL
            self.path = "/" + self.path.lstrip("/")
        try:
            self.headers = read_headers(self.rfile)
        except HeadersTooLarge as err:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, str(err))
            return False
        except BadFraming as err:           # its body, if any, cannot be told from a request hidden in it
            self.send_error(HTTPStatus.BAD_REQUEST, str(err))
            self._discard_rest()
            return False
        said = self.headers.get("connection", "").lower()
        if said == "close":
            self.close_connection = True
        elif said == "keep-alive":
            self.close_connection = False
        if self.headers.get("expect", "").lower() == "100-continue" and self.request_version >= "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def _methods(self) -> list[str]:
        """The methods the route table answers, for the message to a method it never could."""
        return sorted({route.method for route in self.server.app.table.routes} | {"HEAD"})

    def _serve(self) -> None:
        with self.server.app.bench.config.steady():   # one request: each config file checked for a hand edit once
            self._serve_one()

    def _serve_one(self) -> None:
        app = self.server.app
        split = urlsplit(self.path)
        path = (unquote(split.path) if "%" in split.path else split.path) or "/"   # unquote's own shortcut, no call
        headers = self.headers                 # lower-case names already (read_headers)
        if split.scheme or split.netloc:       # absolute-form: a proxy in front routes by the host named in it
            if split.scheme not in ("http", "https") or split.netloc.lower() != headers.get("host", "").strip().lower():
                err = BadRequest(f"The request target {self.path[:100]!r} names a host other than the Host header's.",
                                 "Send the path alone (GET /v1/models HTTP/1.1), or a URL naming this service's host.")
                self.close_connection = True
                self._send(app.error_response(shape_for_path(path), err), close=True)
                return self._discard_rest()
        query = dict(parse_qsl(split.query, keep_blank_values=True)) if split.query else {}   # (nearly every ask: none)
        req = Request(self.command, path, query, headers, b"",
                      self.client_address[0], gone=partial(client_gone, self.connection))
        admitted = app.admit(req)          # Host, Origin, route and auth first: a refused request's body is never read
        if isinstance(admitted, Response):
            if has_body(headers):
                self.close_connection = True   # its body stays unread, so the connection cannot go on
                self._send(admitted, close=True)
                return self._discard_rest()
            return self._send(admitted)
        self._serve_admitted(req, admitted)

    def _serve_admitted(self, req: Request, route) -> None:
        """Read the body, its bytes counted among the bodies held at once until its answer is sent, then serve it
        (app.serve answers every error itself: what is caught here is the body's)."""
        app = self.server.app
        settings = app.bench.settings()
        share = self.server.bodies.share(settings["bodies_in_flight_mb"])
        try:
            req.body = read_body(self.rfile, self.clock, self.headers, settings["max_body_mb"], share)
            self._send(app.serve(req, route))
        except (BadRequest, PayloadTooLarge, BodyTooSlow, Crowded) as err:
            share.release()                # what was read of it is dropped
            self.close_connection = True   # the unread body makes the connection unusable
            self._send(app.error_response(route.shape, err), close=True)
            if isinstance(err, Crowded):   # read and dropped, all of it: the client, still sending, gets its 503
                self._discard_rest(int(settings["max_body_mb"] * 1024 * 1024), requestbody.BODY_SECONDS)
            else:
                self._discard_rest()
        finally:
            share.release()

    def _discard_rest(self, cap: int = 4 * 1024 * 1024, within: float = 1.0) -> None:
        """Read (bounded: `cap` bytes, `within` seconds, or until a pause) what the client is still sending: closing
        on unread data resets the connection, and a reset can destroy the error answer before the client reads it."""
        end = time.monotonic() + within
        total = 0
        try:
            self.wfile.flush()
            while total < cap and (left := end - time.monotonic()) > 0:
                self.clock.start(min(QUIET_SECONDS, left))
                chunk = self.rfile.read1(65536)
                if not chunk:
                    break
                total += len(chunk)
        except (OSError, ValueError):      # TooSlow (an OSError): the pause, or the time is up
            pass

    def _send(self, resp: Response, close: bool = False) -> None:
        self.clock.stop()                  # the request is read: no deadline while the answer is written
        head, unsafe = _head_lines(resp.headers)
        if unsafe:
            log.error("refused to send a header with a line break in it on %s", self.command)
            resp = Response(500, b'{"error": {"code": "internal_error", "message": "The service built a bad '
                            b'header; the log has details."}}', {"Content-Type": "application/json"})
            head, _ = _head_lines(resp.headers)
        try:
            head_bytes = self._head(resp.status, head + ("Connection: close\r\n" if close else "") +
                                    ("Transfer-Encoding: chunked\r\n" if resp.stream is not None else
                                     f"Content-Length: {len(resp.body)}\r\n"))
            # end_headers() and flush_headers(), written out so that a whole answer's head and body go in one write
            # (one send, one packet): whatever http.server's head buffer holds (nothing, between answers), the head,
            # its blank line
            held = getattr(self, "_headers_buffer", None)
            head_bytes = (b"".join(held) if held else b"") + head_bytes + b"\r\n"
            self._headers_buffer = []
            if resp.stream is None:
                self.wfile.write(head_bytes + (resp.body if self.command != "HEAD" else b""))
                return
            self.wfile.write(head_bytes)
            self._write_stream(resp.stream)
        except CLIENT_GONE:
            self.close_connection = True

    def _head(self, code: int, lines: str) -> bytes:
        """http.server's send_response(code), then send_header() for each of `lines` ("Name: value\r\n" each, safe),
        as one piece of the head: the same bytes, the same log line and Connection's say, without its calls a line.
        The head's bytes are returned for the caller to write (or buffer)."""
        if log.isEnabledFor(logging.DEBUG):   # log_request's only say is log_message's debug line
            self.log_request(code)
        message = self.responses[code][0] if code in self.responses else ""
        head = "%s %d %s\r\nServer: %s\r\nDate: %s\r\n%s" % (self.protocol_version, code, message,
                                                               self.version_string(), self.date_time_string(), lines)
        if "\nconnection: " in head.lower():   # a header line of that name (a value holds no line break)
            for line in lines.split("\r\n"):
                name, _, value = line.partition(": ")
                if name.lower() == "connection":
                    if value.lower() == "close":
                        self.close_connection = True
                    elif value.lower() == "keep-alive":
                        self.close_connection = False
        return head.encode("latin-1", "strict")

    def date_time_string(self, timestamp: float | None = None) -> str:
        """http.server's, the same text, made once a second: every answer carries it."""
        return super().date_time_string(timestamp) if timestamp is not None else _date(int(time.time()))

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
        """The answer to a request whose line or headers could not be read: JSON, never http.server's HTML page, and
        always with its status line (http.server writes none while it takes the request for HTTP/0.9, as it does
        until the version is read). The reason phrase is the standard one: the message quotes the client's bytes."""
        self.clock.stop()
        self.request_version = self.protocol_version
        body = json.dumps({"error": {"code": ERROR_CODES.get(code, "bad_request"),
                                     "message": message or "Bad request."}}).encode()
        try:
            self.send_response(code)
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
        # the request line may carry a gateway key as ?key=: redact() takes it out (made only when it is logged)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s", self.address_string(), redact(fmt % args))


def client_gone(sock) -> bool:
    """Whether the client has closed its connection: readable, with nothing to read. One that sent more (its next
    request, pipelined) is still there."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):   # reset, or closed under us
        return True


@lru_cache(maxsize=1)
def _date(second: int) -> str:
    """The Date header of this second (Handler.date_time_string's, made once a second)."""
    return email.utils.formatdate(second, usegmt=True)


def _head_lines(headers: dict) -> tuple[str, bool]:
    """The response's header lines as http.server's send_header() writes them ("Name: value\r\n"; a list is a line
    each: two Set-Cookie at a login), and whether one could end the header early (CR LF injection, a split
    response), tested on each line before its line break."""
    text, unsafe = "", False
    for name, value in headers.items():
        for one in (value if isinstance(value, list) else (value,)):
            line = "%s: %s" % (name, one)
            unsafe = unsafe or "\r" in line or "\n" in line or "\0" in line
            text += line + "\r\n"
    return text, unsafe

