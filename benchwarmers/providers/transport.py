"""Pooled keep-alive HTTP(S) connections with connect, first-byte and idle timeouts; faults become UpstreamFailed."""
from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from ..errors import FaultKind, UpstreamFailed
from .connecting import open_socket, proxy_for, tls_context
from .hangup import Hangup
from .ratelimits import RateLimitBook, limit_scope, parse_rate_limit_headers
from .response import UpstreamResponse
from .wire import Body, Conn, NoResponse, WireError, request_bytes

USER_AGENT = "benchwarmers/0.1 (+python urllib)"
IDLE_PER_HOST = 512                    # kept-alive connections kept per host: as many seats as may be out at once
FRESH = 1.0                            # seconds a pooled connection is taken without checking that it is open
# A pooled connection that fails like this before any response byte was read is retried once on a fresh one.
_STALE = (NoResponse, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


@dataclass
class Timeouts:
    """Seconds: to open the connection, from sending to the response headers, and between body chunks; `hangup`,
    when given, lets another thread stop the call (a panel seat nobody waits for any more)."""
    connect: float = 10
    first_byte: float = 120
    idle: float = 120
    hangup: Hangup | None = None


class Sent:
    """A request written and its response not yet read (Transport.send, then Transport.receive)."""
    __slots__ = ("transport", "key", "method", "data", "host", "t", "name", "model", "conn", "reused", "expired",
                 "since", "asked", "streamed", "at")

    def __init__(self, transport: "Transport", key: tuple, method: str, data: bytes | tuple, host: str, t: Timeouts,
                 name: str, model: str | None):
        self.transport, self.key, self.method, self.data, self.host = transport, key, method, data, host
        self.t, self.name, self.model = t, name, model
        self.conn: Conn | None = None
        self.reused = False
        self.expired = False     # its first-byte timeout passed while it was waited for without a thread
        self.since = 0.0         # when a waiter last heard from it (time.monotonic())
        # (url, JSON body) of the request, for a provider that sends it again changed
        self.asked: tuple[str, dict] | None = None
        self.streamed = False    # it asked for a stream: a waiter passes it on as soon as it starts (read as it comes)
        self.at = 0.0            # when it was written (time.monotonic()): a streamed answer's time to first token

    def close(self) -> None:
        """Give up on the response: the connection is closed and the request no longer in flight."""
        if self.conn is not None:
            if self.t.hangup is not None:
                self.t.hangup.let_go(self.conn)
            self.conn.close()
        self.transport._leave(self.name)


class Transport:
    """A small pool of keep-alive connections per (scheme, host, port, proxy); TLS verified; proxies from env."""

    def __init__(self, *, limits: RateLimitBook | None = None, max_idle_per_host: int = IDLE_PER_HOST,
                 idle_expiry: float = 50.0, user_agent: str = USER_AGENT):
        self.limits = limits if limits is not None else RateLimitBook()
        self.max_idle_per_host = max_idle_per_host
        self.idle_expiry = idle_expiry
        self.user_agent = user_agent
        self.connections_opened = 0
        self._pool: dict[tuple, list] = {}
        self._lock = threading.Lock()
        self._ssl: ssl.SSLContext | None = None
        self._inflight: dict[str, int] = {}          # requests sent and not yet read to the end, per name
        # the pool's lock guards the counts in flight too: a request is counted as its connection is taken, and
        # let go of as its connection goes back, in one turn of the lock each (taken as itself: the Condition's own
        # __enter__ is a Python call); the Condition is notified only when someone waits on it (wait_quiet)
        self._quiet = threading.Condition(self._lock)
        self._quiet_waiting = 0

    # ---- the public calls ---------------------------------------------------------------------
    def request(self, method: str, url: str, *, headers: dict | None = None, body: bytes | None = None,
                timeouts: Timeouts | None = None, name: str = "", model: str | None = None) -> UpstreamResponse:
        """Send one request; returns once the response headers are in. Raises UpstreamFailed. `name` and `model`
        (the served name asked, if any) are where the response's rate-limit facts are kept."""
        sent = self.send(method, url, headers=headers, body=body, timeouts=timeouts, name=name, model=model)
        assert sent is not None      # None only for a `pooled` send
        return self.receive(sent)

    def send(self, method: str, url: str, *, headers: dict | None = None, body: bytes | None = None,
             timeouts: Timeouts | None = None, name: str = "", model: str | None = None,
             pooled: bool = False) -> Sent | None:
        """Write one request; its response is read by receive(). `pooled`: only on a kept-alive connection from the
        pool, never waiting to open one: None when there is none (or it had died), and nothing was sent."""
        t = timeouts or Timeouts()
        scheme, host, port, target, netloc = _place(url)
        proxy = proxy_for(scheme, host)
        given = {"User-Agent": self.user_agent, **(headers or {})}
        if proxy and scheme == "http":
            target = f"http://{netloc}{target}"
            if proxy[2]:
                given["Proxy-Authorization"] = proxy[2]
        try:
            data = request_bytes(method, target, netloc, given, body)
        except (ValueError, UnicodeError) as exc:
            raise UpstreamFailed(FaultKind.BAD_REQUEST, f"cannot send this request to {host}: {str(exc)[:200]}",
                                 "Check the endpoint's key and headers for stray characters.") from None
        sent = Sent(self, (scheme, host, port, proxy), method, data, host, t, name or host, model)
        try:
            written = self._write(sent, pooled)   # its first _take counts it in flight
        except BaseException:
            self._leave(sent.name)
            raise
        if written is None:
            self._leave(sent.name)
        return written

    def receive(self, sent: Sent) -> UpstreamResponse:
        """The response to a request send() wrote, once its headers are in (a stale kept-alive connection, closed
        before a byte of the answer, is written again once on a fresh one). Raises UpstreamFailed."""
        try:
            return self._receive(sent)
        except BaseException:
            self._leave(sent.name)
            raise

    def _write(self, sent: Sent, pooled: bool = False, fresh: bool = False) -> Sent | None:
        """The request on a connection: a pooled one (retried once on a fresh one when it had died; the pool's look
        counts it in flight, as only send() comes that way), or a fresh one (`fresh`: written again, counted
        already); with `pooled`, None rather than a fresh connection."""
        conn: Conn | None
        for attempt in (0, 1):
            if fresh or attempt:
                if pooled:
                    return None
                conn, reused = self._connect(sent.key, sent.host, sent.key[2], sent.t.connect), False
            else:
                conn, reused = self._take(sent.key, sent.name)
                if conn is None:
                    continue
            sent.conn, sent.reused = conn, reused
            hangup = sent.t.hangup
            try:
                if hangup is not None:
                    hangup.hold(conn)        # refused once hung up: nothing more is written
                conn.send(sent.data, sent.t.first_byte)
                if hangup is not None:
                    hangup.sent = True
                return sent
            except _STALE as exc:
                conn.close()
                if not reused:
                    raise self._fault(sent, exc) from None
            except BaseException as exc:
                conn.close()
                raise self._fault(sent, exc) from None
        raise AssertionError("unreachable")

    def _receive(self, sent: Sent) -> UpstreamResponse:
        for attempt in (0, 1):
            conn = sent.conn
            assert conn is not None      # written: _write set it
            try:
                if sent.expired and not conn.buffered:
                    raise TimeoutError
                status, reason, found, modern = conn.head(sent.t.first_byte, sent.t.idle)
                reply = Body(conn, sent.method, status, found)
            except _STALE as exc:
                conn.close()
                if sent.reused and attempt == 0 and not (sent.t.hangup and sent.t.hangup.reason):
                    self._write(sent, fresh=True)
                    continue
                raise self._fault(sent, exc) from None
            except BaseException as exc:
                conn.close()
                raise self._fault(sent, exc) from None
            said = found.get("connection", "").lower()     # HTTP/1.0 keeps a connection only when it says so
            keep = not reply.until_close and ("close" not in said if modern else "keep-alive" in said)
            response = UpstreamResponse(sent, status, reason, found, reply, keep)
            facts = parse_rate_limit_headers(found, time.time())
            if facts:
                self.limits.record(sent.name, facts, sent.model, limit_scope(response.headers))
            return response
        raise AssertionError("unreachable")

    @staticmethod
    def _fault(sent: Sent, exc: BaseException) -> BaseException:
        """The UpstreamFailed for a fault while writing a request or waiting for its response's head."""
        host = sent.host
        if isinstance(exc, (TimeoutError, socket.timeout)):
            return UpstreamFailed(FaultKind.TIMEOUT, f"{host} sent no response within {sent.t.first_byte:g}s",
                                  "The model may be overloaded or loading; raise the first-byte timeout "
                                  "or try later.")
        if isinstance(exc, _STALE):
            return UpstreamFailed(FaultKind.CONNECTION, f"{host} closed the connection before answering "
                                  f"({type(exc).__name__})", "Try again; check the base URL.")
        if isinstance(exc, (OSError, WireError)):
            kind = FaultKind.BAD_RESPONSE if isinstance(exc, WireError) else FaultKind.CONNECTION
            return UpstreamFailed(kind, f"{host}: {type(exc).__name__}: {str(exc)[:200]}",
                                  "Check the base URL and that the server speaks HTTP.")
        return exc

    # ---- what is in flight ---------------------------------------------------------------------
    def _leave(self, name: str, key: tuple = (), conn: Conn | None = None) -> None:
        """A request to `name` is no longer in flight; `conn`, given, goes back to the pool under `key` (closed when
        the pool for it is full), in the same turn of the lock."""
        with self._lock:
            left = self._inflight.get(name, 0) - 1
            if left > 0:
                self._inflight[name] = left
            else:
                self._inflight.pop(name, None)
                if self._quiet_waiting:
                    self._quiet.notify_all()
            if conn is None:
                return
            idle = self._pool.setdefault(key, [])
            if len(idle) < self.max_idle_per_host:
                idle.append((conn, time.monotonic()))
                return
        conn.close()

    def in_flight(self, name: str) -> int:
        """Requests to the connection `name` (an endpoint) still being answered."""
        with self._quiet:
            return self._inflight.get(name, 0)

    def wait_quiet(self, name: str, timeout: float) -> bool:
        """Wait until nothing is in flight to `name`; False when `timeout` seconds pass first."""
        with self._quiet:
            self._quiet_waiting += 1
            try:
                return self._quiet.wait_for(lambda: not self._inflight.get(name), timeout)
            finally:
                self._quiet_waiting -= 1

    # ---- pool ---------------------------------------------------------------------------------
    def _take(self, key: tuple, name: str | None) -> tuple[Conn | None, bool]:
        """An idle kept-alive connection for `key` from the pool, (None, False) when there is none. `name`: a request
        to it is counted in flight in the same turn of the lock (send's)."""
        now = time.monotonic()
        while True:
            with self._lock:   # only the pop is under the lock; the liveness check runs outside it
                if name is not None:
                    self._inflight[name] = self._inflight.get(name, 0) + 1
                    name = None
                idle = self._pool.get(key)
                if not idle:
                    return None, False
                conn, since = idle.pop()
            idle_for = now - since
            # A server closes an idle keep-alive after seconds, not milliseconds: a connection back in the pool
            # for less than FRESH is used without the check (a syscall); one that died anyway fails before any
            # response byte and the request goes again on a fresh one.
            if idle_for < self.idle_expiry and (idle_for < FRESH or _still_open(conn.sock)):
                conn.ended = False
                return conn, True
            conn.close()

    def idle_connections(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._pool.values())

    def close(self) -> None:
        """Close every pooled connection (in-flight responses finish on their own)."""
        with self._lock:
            pooled, self._pool = self._pool, {}
        for idle in pooled.values():
            for conn, _since in idle:
                conn.close()

    # ---- connecting ---------------------------------------------------------------------------
    def ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = tls_context()
        return self._ssl

    def _connect(self, key: tuple, host: str, port: int, timeout: float) -> Conn:
        sock = open_socket(key[0], host, port, key[3], timeout, self.ssl_context)
        with self._lock:
            self.connections_opened += 1
        return Conn(sock)


@lru_cache(maxsize=1024)   # an endpoint's URLs are few: each is split once (a refusal is not kept)
def _place(url: str) -> tuple[str, str, int, str, str]:
    """(scheme, host, port, request target, host header) of an http(s) URL; UpstreamFailed for any other."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if scheme not in ("http", "https") or not host:
        raise UpstreamFailed(FaultKind.CONNECTION, f"cannot call {url!r}: not an http(s) URL",
                             "Check the endpoint's base URL.")
    return (scheme, host, parts.port or (443 if scheme == "https" else 80),
            (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), parts.netloc.rsplit("@", 1)[-1])


def _still_open(sock) -> bool:
    """An idle keep-alive socket that is readable has been closed by the server (or sent junk)."""
    try:
        if sock is None or sock.fileno() < 0:
            return False
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


_default: Transport | None = None
_default_lock = threading.Lock()


def default_transport() -> Transport:
    """The process-wide transport every provider shares unless given its own."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Transport()
        return _default
