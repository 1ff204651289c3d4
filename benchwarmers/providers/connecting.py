"""Opening a connection to an upstream: directly or through a proxy from the environment (HTTP(S)_PROXY, NO_PROXY),
a CONNECT tunnel for HTTPS through one, TLS verified, and what a failed connect is called."""
from __future__ import annotations

import base64
import functools
import os
import socket
import ssl
from typing import Callable
from urllib.parse import unquote, urlsplit

from ..errors import FaultKind, UpstreamFailed
from .wire import Conn, WireError

LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]")
PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy",
              "ALL_PROXY")


def tls_context() -> ssl.SSLContext:
    """The system's trusted CAs, and SSL_CERT_FILE's too when it names a file."""
    ctx = ssl.create_default_context()
    cafile = os.environ.get("SSL_CERT_FILE")
    if cafile and os.path.isfile(cafile):
        ctx.load_verify_locations(cafile=cafile)
    return ctx


def open_socket(scheme: str, host: str, port: int, proxy: tuple | None, timeout: float,
                tls: Callable[[], ssl.SSLContext]) -> socket.socket:
    """A connected socket to host:port (through `proxy`, proxy_for()'s answer, when given), TLS for https; an
    UpstreamFailed saying what went wrong otherwise."""
    via = f" via proxy {proxy[0]}:{proxy[1]}" if proxy else ""
    sock = None
    try:
        sock = socket.create_connection((proxy[0], proxy[1]) if proxy else (host, port), timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # a request goes out in one write
        if scheme == "https":
            if proxy:
                tunnel(sock, host, port, proxy[2])
            sock = tls().wrap_socket(sock, server_hostname=host)
    except BaseException as exc:
        if sock is not None:
            sock.close()
        raise connect_error(exc, host, port, via, timeout) from None
    return sock


def proxy_for(scheme: str, host: str):
    """(host, port, Proxy-Authorization or None) from HTTP(S)_PROXY / NO_PROXY; loopback never proxied."""
    if host in LOOPBACK or host.startswith("127."):
        return None
    env = tuple(os.environ.get(n) for n in PROXY_VARS)   # the answer changes only when these do
    return _proxy_decision(scheme, host, env)



@functools.lru_cache(maxsize=256)
def _proxy_decision(scheme: str, host: str, _env: tuple):
    """Cached: getproxies() scans the environment and proxy_bypass may consult the system (macOS) per call."""
    import urllib.request   # here, not at start: it costs tens of ms to import, and loopback never comes here
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


def tunnel(sock, host: str, port: int, auth: str | None) -> None:
    """Ask an HTTP proxy for a CONNECT tunnel to host:port on `sock`; OSError when it refuses."""
    lines = [f"CONNECT {host}:{port} HTTP/1.1", f"Host: {host}:{port}"]
    if auth:
        lines.append(f"Proxy-Authorization: {auth}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    conn = Conn(sock)
    try:
        wait = sock.gettimeout()        # the connect's timeout, as the socket has it
        status, reason, _headers, _modern = conn.head(wait, wait)
    except WireError as exc:
        raise OSError(f"Tunnel connection failed: {exc}") from None
    if not 200 <= status < 300 or conn.buffered:
        raise OSError(f"Tunnel connection failed: {status} {reason}")


def connect_error(exc: BaseException, host: str, port: int, via: str, timeout: float) -> BaseException:
    """The UpstreamFailed for a failed connect, TLS handshake or tunnel (anything else passes through)."""
    if isinstance(exc, socket.gaierror):
        return UpstreamFailed(FaultKind.CONNECTION, f"cannot resolve {host}{via} ({exc.strerror or exc})",
                              "Check the base URL's host name and your network.")
    if isinstance(exc, ConnectionRefusedError):
        return UpstreamFailed(FaultKind.CONNECTION, f"{host}:{port}{via} refused the connection",
                              "Is the server running on that port?")
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return UpstreamFailed(FaultKind.TIMEOUT, f"could not connect to {host}:{port}{via} within {timeout:g}s",
                              "Check the host, your network or proxy settings.")
    if isinstance(exc, ssl.SSLCertVerificationError):
        return UpstreamFailed(FaultKind.CONNECTION, f"TLS certificate of {host} not trusted: "
                              f"{exc.verify_message or exc}",
                              "Set SSL_CERT_FILE to a CA bundle that includes your network's CA.")
    if isinstance(exc, (OSError, WireError)):
        return UpstreamFailed(FaultKind.CONNECTION, f"cannot connect to {host}:{port}{via}: {str(exc)[:200]}",
                              "Check the base URL, your network or proxy settings.")
    return exc
