"""Reading a request off the socket: its header block (line by line, with the limits and the smuggling checks),
chunk-size lines, the HTTP version, and Deadlined, the reading side that holds a request to its deadlines."""
from __future__ import annotations

import socket
import time

from .bodies import BodiesFull, Share

MAX_CHUNK_LINE = 1024      # a chunk-size line, extensions included
MAX_TRAILERS = 32


def chunk_size(line: bytes) -> int | None:
    """The size on a chunk-size line (extensions after `;` ignored), or None unless it is 1 to 8 hex digits."""
    if not line.endswith(b"\n") or len(line) > MAX_CHUNK_LINE:
        return None
    digits = line.split(b";", 1)[0].strip()
    if not 1 <= len(digits) <= 8 or any(c not in HEX for c in digits):
        return None
    return int(digits, 16)


HEX = frozenset(b"0123456789abcdefABCDEF")
MAX_REQUEST_LINE = 65536   # http.server's limits: a longer request line is a 414, a longer header line or more of
MAX_HEADER_LINE = 65536    # them a 431
MAX_HEADERS = 100
# Between requests a read waits IDLE_SECONDS; a read may end DEADLINE_SLACK after its deadline: the socket's
# timeout (a syscall to set) is set again only when it is longer than the time left by more than this.
IDLE_SECONDS = 120         # an idle keep-alive connection is closed after this long
DEADLINE_SLACK = 0.25


class HeadersTooLarge(Exception):
    """More header lines, or a longer one, than the limits: the message is the 431's."""


class BadFraming(Exception):
    """Headers that two servers could read two ways (request smuggling): the message is the 400's."""


FOLDED = ("A header line starts with a space or a tab (a folded header, which HTTP/1.1 no longer allows). Send "
          "each header on one line.")


class TooSlow(TimeoutError):
    """The request's head or body did not arrive by its deadline."""


def read_headers(rfile) -> dict:
    """The request's header block as {lower-case name: value}, read line by line rather than by email.parser; a
    folded line is refused (BadFraming), as RFC 9112 5.2 allows. A repeated header keeps its last value, as the app
    has always read them, except those that frame the request: see repeated()."""
    whole = _whole_block(rfile)
    if whole is not None:
        return whole
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        line = rfile.readline(MAX_HEADER_LINE + 1)
        if len(line) > MAX_HEADER_LINE:
            raise HeadersTooLarge(f"Line too long: a header line is over {MAX_HEADER_LINE} bytes. "
                                  "Send shorter headers.")
        if line in (b"\r\n", b"\n", b""):
            return headers
        text = line.decode("iso-8859-1").rstrip("\r\n")
        if text[:1] in (" ", "\t"):     # obs-fold: a proxy in front may read it as a header of its own, or drop it
            raise BadFraming(FOLDED)
        key, sep, value = text.partition(":")
        if sep:
            name = key.lower()
            value = value.lstrip(" \t")
            if name in headers or name[-1:] in (" ", "\t"):   # rare: the one dict lookup is all a request pays
                value = repeated(headers, name, value)
            headers[name] = value
    raise HeadersTooLarge(f"Too many headers: the limit is {MAX_HEADERS} header lines. Send fewer headers.")


def _whole_block(rfile) -> dict | None:
    """read_headers' dict, when the whole header block is in rfile's buffer already (nearly every request: it came
    in one piece) and read line by line it would be these very lines: each ends CR LF and holds no other CR or LF,
    and they are no more than the limit. Then one read takes the block off the buffer, not a readline, a decode and
    an rstrip a line. None, nothing read, otherwise: read_headers reads it line by line, with its limits and errors."""
    held = rfile.peek(1)
    if held[:2] == b"\r\n":   # no headers: its end is no CR LF CR LF (and the body may hold one)
        return None
    end = held.find(b"\r\n\r\n")
    if end < 0 or end + 2 > MAX_HEADER_LINE:   # the block, its last CR LF too: no line of it is longer
        return None
    lines = held[:end].decode("iso-8859-1").split("\r\n")
    if len(lines) > MAX_HEADERS:
        return None
    headers: dict[str, str] = {}
    for i, text in enumerate(lines):
        if "\r" in text or "\n" in text:   # read line by line, these would be other lines
            return None
        try:
            if text[:1] in (" ", "\t"):
                raise BadFraming(FOLDED)
            key, sep, value = text.partition(":")
            if sep:
                name = key.lower()
                value = value.lstrip(" \t")
                if name in headers or name[-1:] in (" ", "\t"):
                    value = repeated(headers, name, value)
                headers[name] = value
        except BadFraming:   # read up to the end of this line, as line by line
            rfile.read(len("\r\n".join(lines[:i + 1])) + 2)
            raise
    rfile.read(end + 4)
    return headers


def repeated(headers: dict, name: str, value: str) -> str:
    """The value to keep for a header seen again, or for a name with a space before its colon; BadFraming when a
    proxy in front could have read the request's framing or target otherwise than we do (RFC 9112 3.2, 5.1, 6.3)."""
    if name[-1:] in (" ", "\t"):   # a proxy may drop the space and frame the body by it, or ignore the header
        raise BadFraming(f"The header name {name.rstrip()!r} has a space before its colon. "
                         "Write it as Name: value, with no space before the colon.")
    if name == "host":
        raise BadFraming("The request has more than one Host header. Send exactly one Host header.")
    if name == "content-length" and value.strip() != headers[name].strip():
        raise BadFraming(f"The request has Content-Length headers that disagree ({headers[name][:20]!r}, then "
                         f"{value[:20]!r}). Send one Content-Length: the body's size in bytes.")
    if name == "transfer-encoding":   # a list header: repeated, its values join (gzip then chunked: gzip, chunked)
        return f"{headers[name]}, {value}"
    return value


class Deadlined(socket.SocketIO):
    """The connection's reading side. Between requests a read waits up to IDLE_SECONDS, in waits of the socket's
    timeout; while a request is read, a deadline holds: a read waits no longer than the time left (plus the slack),
    and one that starts past it raises TooSlow. The socket's timeout is the shortest deadline, so the first read
    after one starts needs no settimeout: a request that comes in one or two pieces costs no syscall more."""
    deadline: float | None = None
    per_byte = 0.0            # seconds the deadline moves on for each byte received (the body's rate)
    received = 0
    _sock: socket.socket      # SocketIO's own socket (typeshed leaves it out)
    share: Share | None = None   # while a body is read: its Share of the bodies held at once (bodies.py), or None

    def __init__(self, sock: socket.socket, wait: float):
        super().__init__(sock, "rb")
        self.wait = wait      # the socket's own timeout, set by the handler

    def start(self, seconds: float, per_byte: float = 0.0) -> None:
        self.deadline, self.per_byte = time.monotonic() + seconds, per_byte

    def stop(self) -> None:
        """No deadline, and the socket's timeout back to its own (for writing the answer and the idle wait)."""
        self.deadline = None
        if self._sock.gettimeout() != self.wait:
            self._sock.settimeout(self.wait)

    def tell(self) -> int:
        """Bytes received so far: with it, rfile.tell() says how much of a body came before a read timed out."""
        return self.received

    def readinto(self, b) -> int:
        if self.deadline is None:
            return self._idle_read(b)
        ran_out = False
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TooSlow()
            wait = self._sock.gettimeout()
            if ran_out or wait is None or wait > left + DEADLINE_SLACK:
                self._sock.settimeout(left)
            try:
                n = self._sock.recv_into(b)
            except TimeoutError:   # the wait was set before the deadline moved on: wait out what is left
                ran_out = True
                continue
            self.received += n
            self.deadline += n * self.per_byte
            if self.share is not None and not self.share.take(n):
                raise BodiesFull()
            return n

    def _idle_read(self, b) -> int:
        """The wait for a request's first byte: IDLE_SECONDS in all, then the timeout closes the connection."""
        waited = 0.0
        while True:
            try:
                n = self._sock.recv_into(b)
            except TimeoutError:
                waited += self.wait
                if waited >= IDLE_SECONDS:
                    raise
                continue
            self.received += n
            return n


def version_number(version: str) -> tuple[int, int] | None:
    """(major, minor) of an HTTP/x.y version as http.server reads it, or None when it is not one."""
    if version == "HTTP/1.1":   # nearly every request
        return 1, 1
    if not version.startswith("HTTP/"):
        return None
    parts = version[5:].split(".")
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 10 for p in parts):
        return None
    return int(parts[0]), int(parts[1])
