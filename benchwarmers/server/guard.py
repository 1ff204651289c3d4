"""Who may ask what: Host checks (DNS rebinding), Origin checks (CSRF), the admin token and gateway keys."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
from urllib.parse import urlsplit

from ..errors import BadHost, CrossOrigin, Unauthorized
from .messages import Request

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
SESSION_COOKIE = "bw_session"


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(value: str) -> str:
    """The name part of a Host header, lower-cased, without the port."""
    value = (value or "").strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def check_host(req: Request, bound: str, public_hosts: tuple) -> None:
    """Refuse a Host that is not ours: a web page that rebinds its DNS name to 127.0.0.1 gets no answer."""
    name = host_name(req.headers.get("host", ""))
    if not name:
        return   # HTTP/1.0 clients may send none; nothing to rebind
    allowed = LOOPBACK_NAMES | {bound.lower(), f"[{bound.lower()}]"} | set(public_hosts)
    if name in allowed or "*" in public_hosts:
        return
    raise BadHost(f"Host {name!r} is not one this server answers to.",
                  "Use http://127.0.0.1 or localhost, or list the name in BENCHWARMERS_PUBLIC_HOSTS.")


def check_origin(req: Request, every_method: bool = False) -> None:
    """A state-changing request from another site's page is refused (CSRF); non-browser clients send no Origin.
    `every_method`: reading requests too (MCP's transport validates the Origin of every request)."""
    if req.method in SAFE_METHODS and not every_method:
        return
    if req.headers.get("sec-fetch-site", "").lower() == "cross-site":
        raise CrossOrigin("Cross-site requests are refused.", "Call the service from its own pages or a client.")
    own = req.headers.get("host", "").lower()
    for header in ("origin", "referer"):
        value = req.headers.get(header)
        if not value:
            continue
        if value == "null" or urlsplit(value).netloc.lower() != own:
            raise CrossOrigin(f"Requests from {value!r} are refused: it is not this server's own origin.",
                              "Call the service from its own pages or a non-browser client.")
        return


def session_value(token: str) -> str:
    """The session cookie proves the token without holding it: an HMAC of a fixed label."""
    return hmac.new(token.encode(), b"benchwarmers-session-v1", hashlib.sha256).hexdigest()


def presented_key(req: Request) -> str | None:
    """The key a client sent, in any of the forms clients use."""
    auth = req.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    for header in ("x-api-key", "x-goog-api-key", "api-key"):
        if req.headers.get(header):
            return req.headers[header].strip()
    return req.query.get("key") or None


def is_admin(req: Request, token: str | None) -> bool:
    if not token:
        return True
    key = presented_key(req)
    if key and hmac.compare_digest(key.encode(), token.encode()):
        return True
    cookie = req.cookie(SESSION_COOKIE)
    return bool(cookie) and hmac.compare_digest(cookie.encode(), session_value(token).encode())


def require_admin(req: Request, token: str | None) -> None:
    if not is_admin(req, token):
        raise Unauthorized("This needs the admin token.",
                           "Send Authorization: Bearer $BENCHWARMERS_ADMIN_TOKEN, or log in at /login.")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
