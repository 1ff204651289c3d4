"""HTTP/1.1 on one socket, lean: a request written in one send; a status line and headers read with bytes.find;
a body by Content-Length, by chunks or until close, handed out as it arrives. No email.parser."""
from __future__ import annotations

import ssl

MAX_HEAD = 256 << 10          # status line and headers together
MAX_CHUNK_LINE = 4096         # a chunk-size line, extensions included
RECV = 65536
JOINED = 1 << 20              # a body up to this size goes out with its head in one send; a larger one is not copied


# the usual status lines as _parse_head reads them (code, reason, HTTP/1.1 or later): one look instead of a parse
_STATUS_LINES = {f"HTTP/1.1 {code} {reason}{end}": (code, reason, True)
                 for code, reason in ((200, "OK"), (201, "Created"), (204, "No Content"), (429, "Too Many Requests"))
                 for end in ("\r", "")}


# a header's name as it came -> as _parse_head keeps it (stripped, lower-case): an upstream's names recur, answer after
# answer, so each is stripped and lowered once; a few hundred at most (what an upstream sends is not ours to bound)
_NAMES: dict[str, str] = {}
MAX_NAMES = 512


class WireError(Exception):
    """The bytes are not an HTTP/1.1 response we can read."""


class NoResponse(ConnectionResetError):
    """The server closed the connection before sending a byte of its response (a stale keep-alive, typically)."""


class Cut(ConnectionError):
    """The connection ended in the middle of a response."""


def request_bytes(method: str, target: str, host: str, headers: dict,
                  body: bytes | None) -> bytes | tuple[bytes, bytes]:
    """The request head and body, ready for one sendall; a body over JOINED bytes stays apart, (head, body), written
    after its head (a panel's seats each send a large ask: joined, each would hold a second copy of it). Header
    values must not hold line breaks."""
    text = f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: identity\r\n"   # added to, not joined
    for name, value in headers.items():
        value = str(value)
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
            raise ValueError(f"the header {name!r} holds a line break or a colon in its name")
        text += f"{name}: {value}\r\n"
    if body is not None or method in ("POST", "PUT", "PATCH"):
        text += f"Content-Length: {len(body or b'')}\r\n"
    head = (text + "\r\n").encode("latin-1")
    if not body:
        return head
    return head + body if len(body) <= JOINED else (head, body)


class Conn:
    """One socket with a read buffer: what came in beyond the part asked for waits here for the next read."""
    __slots__ = ("sock", "_buf", "_pos", "_peeked", "ended", "_mode", "_want", "_known", "_pending", "_tls")

    def __init__(self, sock):
        self.sock = sock
        self._buf = b""
        self._pos = 0
        self._peeked = None      # a head parsed by whole() and not yet taken: (status, reason, headers, modern, end)
        self.ended = False       # drain() met the end of the stream (or a fault)
        self._mode = self._want = sock.gettimeout()   # the socket's timeout, and the one its next wait should have
        self._pending = getattr(sock, "pending", None)   # TLS: what was decrypted and not yet taken (drain)
        self._tls = isinstance(sock, ssl.SSLSocket)         # (send)
        self._known: tuple | None = None   # whole()'s last answer: (the buffer, where it was read from, ended, status)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def timeout(self, seconds: float) -> None:
        """The timeout of the receives that follow, set on the socket only when one has to wait for the network (an
        answer already in the buffer needs none) and only when it changes: each setting is a system call."""
        self._want = seconds

    def _set(self, seconds: float | None) -> None:
        if self._mode != seconds:
            self.sock.settimeout(seconds)
            self._mode = seconds

    def send(self, data: bytes | tuple[bytes, bytes], seconds: float) -> None:
        """Write a request: at once when the socket has room for all of it (a plain socket nearly always has), else
        waiting up to `seconds` for room. (A socket with a timeout polls before every send and receive.) A large
        body comes apart from its head (request_bytes): each is written in turn."""
        if isinstance(data, tuple):
            for piece in data:
                self.send(piece, seconds)
            return
        done = 0
        if not self._tls:
            self._set(0.0)
            try:
                done = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                done = 0
        if done < len(data):
            self._set(seconds)
            self.sock.sendall(memoryview(data)[done:] if done else data)

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def _fill(self) -> bool:
        """Receive more; False at the end of the stream."""
        self._set(self._want)
        data = self.sock.recv(RECV)
        if not data:
            return False
        self._buf = self._buf[self._pos:] + data if self._pos < len(self._buf) else data
        self._pos = 0
        return True

    def take(self, n: int) -> bytes:
        """Up to n bytes: what is buffered, else one receive's worth; b"" at the end of the stream."""
        if self._pos >= len(self._buf) and not self._fill():
            return b""
        data = self._buf[self._pos:self._pos + n]
        self._pos += len(data)
        return data

    def line(self, limit: int) -> bytes:
        """One line with its ending; what is left when the stream ends first (possibly b"")."""
        while True:
            end = self._buf.find(b"\n", self._pos)
            if end >= 0:
                data = self._buf[self._pos:end + 1]
                self._pos = end + 1
                return data
            if len(self._buf) - self._pos > limit:
                raise WireError(f"a line longer than {limit} bytes where a short one belongs")
            if not self._fill():
                data = self._buf[self._pos:]
                self._pos = len(self._buf)
                return data

    def head(self, wait: float | None, then: float | None) -> tuple[int, str, dict, bool]:
        """(status, reason, headers with lower-case names, HTTP/1.1 or later) of the next final response;
        1xx interim responses are passed over. Its receives wait up to `wait` seconds each, the body's after it up
        to `then` (timeout(), set here: each is a call, and every response sets both)."""
        self._want = wait
        while True:
            if self._peeked is not None:            # whole() read it already
                status, reason, headers, modern, self._pos = self._peeked
                self._peeked = self._known = None   # read now: whole() is not asked of it again (nor holds its bytes)
            else:
                while True:
                    found = self._head_end()
                    if found:
                        break
                    if not self._fill():
                        if self._pos >= len(self._buf):
                            raise NoResponse("the server closed the connection without answering")
                        raise WireError("the response ended inside its headers")
                status, reason, headers, modern, self._pos = self._parse_head(*found)
            if status >= 200 or status == 101:
                self._want = then
                return status, reason, headers, modern

    def _head_end(self) -> tuple[int, int] | None:
        """(where the head ends, the length of its blank line) when the buffer holds a whole head, else None."""
        start = self._pos
        end = self._buf.find(b"\n\r\n", start)
        bare = self._buf.find(b"\n\n", start)
        if bare >= 0 and (end < 0 or bare < end):
            end, skip = bare, 2
        else:
            skip = 3
        if (end if end >= 0 else len(self._buf)) - start > MAX_HEAD:
            raise WireError(f"response headers longer than {MAX_HEAD >> 10} KB")
        return (end, skip) if end >= 0 else None

    def _parse_head(self, end: int, skip: int) -> tuple:
        """(status, reason, headers, modern, where the body starts) of the head before `end`."""
        lines = self._buf[self._pos:end].decode("latin-1").split("\n")
        try:    # nearly every answer: its status line's parse known already ([], not get(): a call less a head)
            known = _STATUS_LINES[lines[0]]
        except KeyError:
            version, _, rest = lines[0].rstrip("\r").partition(" ")
            code, _, reason = rest.strip().partition(" ")
            if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
                raise WireError(f"not an HTTP status line: {lines[0][:80]!r}") from None
            known = int(code), reason.strip(), version != "HTTP/1.0"
        headers: dict = {}
        name = ""
        for line in lines[1:]:      # a line's "\r" goes with the strip() of its parts (whitespace), not by itself
            if line[:1] in (" ", "\t") and name:        # an obsolete folded line continues the last header
                headers[name] += " " + line.strip()
                continue
            raw, sep, value = line.partition(":")
            if raw in _NAMES:
                name = _NAMES[raw]
            else:
                name = raw.strip().lower()
                if sep and name and len(raw) <= 64 and len(_NAMES) < MAX_NAMES:   # no long junk name kept
                    _NAMES[raw] = name
            if sep and name:
                headers[name] = value.strip()
        status, reason, modern = known
        return status, reason, headers, modern, end + skip

    # ---- waiting without a thread (providers/waiter.py) -----------------------------------------
    def drain(self) -> int:
        """On a non-blocking socket: take in whatever has arrived, without waiting; sets `ended` at the end of the
        stream or on a fault (what to make of either is left to the blocking read that follows). Bytes taken."""
        self._want = 0.0              # receives that never wait: _set(0.0), written out (a waiter's every answer)
        if self._mode != 0.0:
            self.sock.settimeout(0.0)
            self._mode = 0.0
        pending = self._pending
        parts, got = [], 0
        while True:
            try:
                data = self.sock.recv(RECV)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break                                     # nothing more yet (TLS: the rest of a record)
            except OSError:
                self.ended = True
                break
            if not data:
                self.ended = True
                break
            parts.append(data)
            size = len(data)
            got += size
            if size < RECV and not (pending and pending()):
                break             # the socket had no more: if more comes, the waiter hears of it again
        if parts:
            rest = self._buf[self._pos:]
            self._buf, self._pos = rest + b"".join(parts) if rest else b"".join(parts), 0
        return got

    def whole(self) -> int | None:
        """The status of the next response once it is all in the buffer (its head, and its body by its framing),
        or an interim (1xx) one; None while some of it is still to come. Never receives."""
        known = self._known
        if known is not None and known[0] is self._buf and known[1] == self._pos and known[2] == self.ended:
            return known[3]   # asked again of the same bytes: the waiter, then read_at_once
        try:
            if self._peeked is None:
                found = self._head_end()
                if not found:
                    return None
                self._peeked = self._parse_head(*found)
            code, _reason, headers, _modern, start = self._peeked
        except WireError:
            return 0          # not a response we can read: the blocking read says so
        status: int | None = code
        if code < 200 or code in (204, 304):
            pass
        elif "transfer-encoding" in headers and "chunked" in headers["transfer-encoding"].lower():   # (as Body's)
            status = code if self._chunks_in(start) else None
        elif "content-length" in headers:
            try:
                status = code if len(self._buf) - start >= int(headers["content-length"]) else None
            except ValueError:
                pass
        elif not self.ended:
            status = None
        self._known = (self._buf, self._pos, self.ended, status)
        return status

    def _chunks_in(self, pos: int) -> bool:
        """Whether a chunked body from `pos` is all in the buffer, its trailers and their blank line too."""
        buf = self._buf
        while True:
            eol = buf.find(b"\n", pos)
            if eol < 0:
                return False
            try:
                size = int(buf[pos:eol].split(b";", 1)[0].strip(), 16)
            except ValueError:
                return True           # malformed: the blocking read says so
            pos = eol + 1
            if size == 0:
                break
            pos += size + 2
            if pos > len(buf):
                return False
        while True:                   # trailers, up to the blank line
            eol = buf.find(b"\n", pos)
            if eol < 0:
                return False
            if not buf[pos:eol].strip():
                return True
            pos = eol + 1


class Body:
    """A response body read by its framing: Content-Length, chunked, until close, or none (HEAD, 1xx, 204, 304)."""
    __slots__ = ("conn", "chunked", "left", "until_close", "done")

    def __init__(self, conn: Conn, method: str, status: int, headers: dict):
        self.conn = conn
        # (`in` first: most answers have a Content-Length, and then no get() and lower() are called)
        self.chunked = "transfer-encoding" in headers and "chunked" in headers["transfer-encoding"].lower()
        self.until_close = False
        self.left = 0
        self.done = False
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            self.done = True
        elif self.chunked:
            pass
        elif "content-length" in headers:
            try:
                self.left = int(headers["content-length"])
            except ValueError:
                raise WireError(f"Content-Length is not a number: {headers['content-length'][:40]!r}") from None
            if self.left < 0:
                raise WireError("Content-Length is negative")
            self.done = self.left == 0
        else:
            self.until_close = True

    def some(self, n: int = RECV) -> bytes:
        """The next piece of the body as it arrives (at most n bytes); b"" once the body is over."""
        if self.done:
            return b""
        if self.chunked:
            return self._chunk(n)
        if self.until_close:
            data = self.conn.take(n)
            self.done = not data
            return data
        data = self.conn.take(min(n, self.left))
        if not data:
            raise Cut(f"the body ended {self.left} bytes short of its Content-Length")
        self.left -= len(data)
        self.done = self.left == 0
        return data

    def _chunk(self, n: int) -> bytes:
        if self.left == 0:
            line = self.conn.line(MAX_CHUNK_LINE)
            if not line.endswith(b"\n"):
                raise Cut("the chunked body ended before its last chunk")
            digits = line.split(b";", 1)[0].strip()
            try:
                self.left = int(digits, 16)
            except ValueError:
                raise WireError(f"a malformed chunk size: {line[:40]!r}") from None
            if self.left < 0:
                raise WireError(f"a malformed chunk size: {line[:40]!r}")
            if self.left == 0:
                self._trailers()
                return b""
        data = self.conn.take(min(n, self.left))
        if not data:
            raise Cut("the chunked body ended inside a chunk")
        self.left -= len(data)
        if self.left == 0 and self.conn.line(MAX_CHUNK_LINE).strip():
            raise WireError("a chunk ran past its size")
        return data

    def _trailers(self) -> None:
        for _ in range(100):
            line = self.conn.line(MAX_CHUNK_LINE)
            if not line.endswith(b"\n"):
                raise Cut("the chunked body ended inside its trailers")
            if not line.strip():
                self.done = True
                return
        raise WireError("more than 100 trailer lines")

    def all(self, limit: int | None = None) -> bytes:
        """The rest of the body (its first `limit` bytes when given)."""
        conn, left = self.conn, self.left
        if not (self.done or self.chunked or self.until_close) and (limit is None or limit >= left) \
                and conn.buffered >= left:   # all of it in the buffer (a waiter's answer): one take
            data = conn.take(left)
            self.left, self.done = 0, True
            return data
        parts, total = [], 0
        while not self.done and (limit is None or total < limit):
            data = self.some(RECV if limit is None else min(RECV, limit - total))
            if not data:
                break
            parts.append(data)
            total += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)
