"""Pooled keep-alive HTTP(S) connections with connect, first-byte and idle timeouts; faults become UpstreamFailed."""
from __future__ import annotations

import base64
import functools
import http.client
import os
import select
import socket
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..errors import FaultKind, UpstreamFailed
from .ratelimits import RateLimitBook, limit_scope, parse_rate_limit_headers

USER_AGENT = "benchwarmers/0.1 (+python urllib)"
MAX_LINE = 64 << 20                    # one SSE/NDJSON line; Gemini inline images make lines of megabytes
LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]")
# A pooled connection that fails like this before any response byte was read is retried once on a fresh one.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


@dataclass
class Timeouts:
    """Seconds: to open the connection, from sending to the response headers, and between body chunks."""
    connect: float = 10
    first_byte: float = 120
    idle: float = 120


def read_error(exc: BaseException, host: str, idle: float | None = None) -> UpstreamFailed:
    """A fault while reading a body that had started: a stall is a timeout, anything else a cut stream."""
    if isinstance(exc, (TimeoutError, socket.timeout)):
        wait = f" for {idle:g}s" if idle else ""
        return UpstreamFailed(FaultKind.TIMEOUT, f"{host} stopped sending{wait} in the middle of its answer",
                              "Raise the idle timeout for slow models, or try again later.")
    detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    return UpstreamFailed(FaultKind.DROPPED, f"{host} cut its answer short ({detail[:200]})",
                          "The connection broke mid-answer; try again.")


class Response:
    """An upstream response: status, lower-cased headers, and a body read whole or line by line."""

    def __init__(self, transport: "Transport", key: tuple, conn, sock, raw: http.client.HTTPResponse,
                 host: str, idle: float, name: str = ""):
        self.status = raw.status
        self.reason = raw.reason
        self.headers = {k.lower(): v for k, v in raw.getheaders()}
        self.host = host
        self._transport, self._key, self._conn, self._sock, self._raw = transport, key, conn, sock, raw
        self._idle = idle
        self._open = True
        self._name = name                # counted in flight until the body is read or closed

    def read(self, limit: int | None = None) -> bytes:
        """The whole body (or its first `limit` bytes); the connection goes back to the pool when it can."""
        try:
            data = self._raw.read(limit) if limit else self._raw.read()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.close()
            raise read_error(exc, self.host, self._idle) from None
        self._release()
        return data

    def lines(self):
        """Yields raw lines (with their line ending) as they arrive; never holds the whole body.
        Reads whatever has arrived (read1) and splits it here: http.client's readline costs a call per line."""
        buf = b""
        try:
            while True:
                try:
                    chunk = self._raw.read1(65536)
                except (OSError, http.client.HTTPException, ValueError) as exc:
                    raise read_error(exc, self.host, self._idle) from None
                if not chunk:
                    if buf:
                        yield buf
                    self._release()
                    return
                buf += chunk
                start = 0
                while (end := buf.find(b"\n", start)) >= 0:
                    if end - start >= MAX_LINE:
                        raise self._too_long()
                    yield buf[start:end + 1]
                    start = end + 1
                buf = buf[start:]
                if len(buf) >= MAX_LINE:
                    raise self._too_long()
        finally:
            self.close()

    def _too_long(self) -> UpstreamFailed:
        return UpstreamFailed(FaultKind.BAD_RESPONSE, f"{self.host} sent a line longer than {MAX_LINE >> 20} MB: "
                              "not a stream we can read")

    def finish(self, wait: float = 1.0, limit: int = 1 << 20) -> None:
        """After the protocol's end marker: read the little that is left, so the connection can be reused."""
        if not self._open:
            return
        try:
            self._sock.settimeout(wait)
            while limit > 0:
                chunk = self._raw.read(65536)
                if not chunk:
                    break
                limit -= len(chunk)
        except (OSError, http.client.HTTPException, ValueError):
            self.close()
            return
        self._release()

    def _release(self) -> None:
        if not self._open:
            return
        self._open = False
        self._transport._leave(self._name)
        if self._raw.isclosed() and not self._raw.will_close:
            self._transport._put(self._key, self._conn, self._sock)
        else:
            self._conn.close()
            self._raw.close()

    def close(self) -> None:
        """Stop reading: an unfinished body cannot share its connection, so the connection is closed."""
        if self._open:
            self._open = False
            self._transport._leave(self._name)
            self._raw.close()
            self._conn.close()

    def __enter__(self) -> "Response":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Transport:
    """A small pool of keep-alive connections per (scheme, host, port, proxy); TLS verified; proxies from env."""

    def __init__(self, *, limits: RateLimitBook | None = None, max_idle_per_host: int = 64,
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
        self._quiet = threading.Condition(threading.Lock())   # a plain lock: taken twice per request

    # ---- the one public call ------------------------------------------------------------------
    def request(self, method: str, url: str, *, headers: dict | None = None, body: bytes | None = None,
                timeouts: Timeouts | None = None, name: str = "", model: str | None = None) -> Response:
        """Send one request; returns once the response headers are in. Raises UpstreamFailed. `name` and `model`
        (the served name asked, if any) are where the response's rate-limit facts are kept."""
        t = timeouts or Timeouts()
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname or ""
        if scheme not in ("http", "https") or not host:
            raise UpstreamFailed(FaultKind.CONNECTION, f"cannot call {url!r}: not an http(s) URL",
                                 "Check the endpoint's base URL.")
        port = parts.port or (443 if scheme == "https" else 80)
        self._enter(name or host)
        try:
            return self._request(method, scheme, host, port, parts, headers, body, t, name, model)
        except BaseException:
            self._leave(name or host)
            raise

    def _request(self, method, scheme, host, port, parts, headers, body, t, name, model) -> Response:
        proxy = self._proxy_for(scheme, host)
        key = (scheme, host, port, proxy)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        send = {"User-Agent": self.user_agent, **(headers or {})}
        if proxy and scheme == "http":
            target = f"http://{parts.netloc.rsplit('@', 1)[-1]}{target}"
            if proxy[2]:
                send["Proxy-Authorization"] = proxy[2]
        for attempt in (0, 1):
            conn, sock, reused = self._take(key, host, port, t.connect)
            try:
                sock.settimeout(t.first_byte)
                conn.request(method, target, body=body, headers=send)
                raw = conn.getresponse()
            except (TimeoutError, socket.timeout):
                conn.close()
                raise UpstreamFailed(FaultKind.TIMEOUT, f"{host} sent no response within {t.first_byte:g}s",
                                     "The model may be overloaded or loading; raise the first-byte timeout "
                                     "or try later.") from None
            except _STALE as exc:
                conn.close()
                if reused and attempt == 0:
                    continue
                raise UpstreamFailed(FaultKind.CONNECTION, f"{host} closed the connection before answering "
                                     f"({type(exc).__name__})", "Try again; check the base URL.") from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                kind = FaultKind.BAD_RESPONSE if isinstance(exc, http.client.HTTPException) else FaultKind.CONNECTION
                raise UpstreamFailed(kind, f"{host}: {type(exc).__name__}: {str(exc)[:200]}",
                                     "Check the base URL and that the server speaks HTTP.") from None
            sock.settimeout(t.idle)
            response = Response(self, key, conn, sock, raw, host, t.idle, name or host)
            facts = parse_rate_limit_headers(response.headers, time.time())
            if facts:
                self.limits.record(name or host, facts, model, limit_scope(response.headers))
            return response
        raise AssertionError("unreachable")

    # ---- what is in flight ---------------------------------------------------------------------
    def _enter(self, name: str) -> None:
        with self._quiet:
            self._inflight[name] = self._inflight.get(name, 0) + 1

    def _leave(self, name: str) -> None:
        with self._quiet:
            left = self._inflight.get(name, 0) - 1
            if left > 0:
                self._inflight[name] = left
            else:
                self._inflight.pop(name, None)
                self._quiet.notify_all()

    def in_flight(self, name: str) -> int:
        """Requests to the connection `name` (an endpoint) still being answered."""
        with self._quiet:
            return self._inflight.get(name, 0)

    def wait_quiet(self, name: str, timeout: float) -> bool:
        """Wait until nothing is in flight to `name`; False when `timeout` seconds pass first."""
        with self._quiet:
            return self._quiet.wait_for(lambda: not self._inflight.get(name), timeout)

    # ---- pool ---------------------------------------------------------------------------------
    def _take(self, key: tuple, host: str, port: int, connect_timeout: float):
        now = time.monotonic()
        while True:
            with self._lock:   # only the pop is under the lock; the liveness check runs outside it
                idle = self._pool.get(key)
                if not idle:
                    break
                conn, sock, since = idle.pop()
            if now - since < self.idle_expiry and _still_open(sock):
                return conn, sock, True
            conn.close()
        conn = self._connect(key, host, port, connect_timeout)
        return conn, conn.sock, False

    def _put(self, key: tuple, conn, sock) -> None:
        with self._lock:
            idle = self._pool.setdefault(key, [])
            if len(idle) < self.max_idle_per_host:
                idle.append((conn, sock, time.monotonic()))
                return
        conn.close()

    def idle_connections(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._pool.values())

    def close(self) -> None:
        """Close every pooled connection (in-flight responses finish on their own)."""
        with self._lock:
            pooled, self._pool = self._pool, {}
        for idle in pooled.values():
            for conn, _sock, _since in idle:
                conn.close()

    # ---- connecting ---------------------------------------------------------------------------
    def ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            ctx = ssl.create_default_context()
            cafile = os.environ.get("SSL_CERT_FILE")
            if cafile and os.path.isfile(cafile):
                ctx.load_verify_locations(cafile=cafile)
            self._ssl = ctx
        return self._ssl

    def _connect(self, key: tuple, host: str, port: int, timeout: float):
        scheme, proxy = key[0], key[3]
        if proxy:
            phost, pport, auth = proxy
            if scheme == "https":
                conn = http.client.HTTPSConnection(phost, pport, timeout=timeout, context=self.ssl_context())
                conn.set_tunnel(host, port, headers={"Proxy-Authorization": auth} if auth else None)
            else:
                conn = http.client.HTTPConnection(phost, pport, timeout=timeout)
        elif scheme == "https":
            conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=self.ssl_context())
        else:
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
        via = f" via proxy {proxy[0]}:{proxy[1]}" if proxy else ""
        try:
            conn.connect()
        except socket.gaierror as exc:
            raise UpstreamFailed(FaultKind.CONNECTION, f"cannot resolve {host}{via} ({exc.strerror or exc})",
                                 "Check the base URL's host name and your network.") from None
        except ConnectionRefusedError:
            raise UpstreamFailed(FaultKind.CONNECTION, f"{host}:{port}{via} refused the connection",
                                 "Is the server running on that port?") from None
        except (TimeoutError, socket.timeout):
            raise UpstreamFailed(FaultKind.TIMEOUT, f"could not connect to {host}:{port}{via} within {timeout:g}s",
                                 "Check the host, your network or proxy settings.") from None
        except ssl.SSLCertVerificationError as exc:
            raise UpstreamFailed(FaultKind.CONNECTION, f"TLS certificate of {host} not trusted: "
                                 f"{exc.verify_message or exc}",
                                 "Set SSL_CERT_FILE to a CA bundle that includes your network's CA.") from None
        except (OSError, http.client.HTTPException) as exc:
            raise UpstreamFailed(FaultKind.CONNECTION, f"cannot connect to {host}:{port}{via}: {str(exc)[:200]}",
                                 "Check the base URL, your network or proxy settings.") from None
        with self._lock:
            self.connections_opened += 1
        return conn

    @staticmethod
    def _proxy_for(scheme: str, host: str):
        """(host, port, Proxy-Authorization or None) from HTTP(S)_PROXY / NO_PROXY; loopback never proxied."""
        if host in LOOPBACK or host.startswith("127."):
            return None
        env = tuple(os.environ.get(n) for n in PROXY_VARS)   # the answer changes only when these do
        return _proxy_decision(scheme, host, env)


PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy",
              "ALL_PROXY")


@functools.lru_cache(maxsize=256)
def _proxy_decision(scheme: str, host: str, _env: tuple):
    """Cached: getproxies() scans the environment and proxy_bypass may consult the system (macOS) per call."""
    url = urllib.request.getproxies().get(scheme)
    if not url or urllib.request.proxy_bypass(host):
        return None
    p = urlsplit(url if "://" in url else "http://" + url)
    if not p.hostname:
        return None
    auth = None
    if p.username:
        pair = f"{unquote(p.username)}:{unquote(p.password or '')}".encode()
        auth = "Basic " + base64.b64encode(pair).decode()
    return p.hostname, p.port or (443 if p.scheme == "https" else 80), auth


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
