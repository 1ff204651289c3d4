"""Who may ask what: Host checks (DNS rebinding), Origin checks (CSRF), the admin token and gateway keys."""
from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import re
from urllib.parse import urlsplit

from ..errors import BadHost, CrossOrigin, CsrfFailed, MissingHost, Unauthorized
from .messages import Request

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
SESSION_COOKIE = "bw_session"
CSRF_COOKIE, CSRF_HEADER = "bw_csrf", "x-csrf-token"      # the dashboard's CSRF cookie, and the header its scripts send
_HOST_CHARS = re.compile(r"[a-z0-9.\-_]+|\[[0-9a-f:.]+\]")
HOST_KEPT = 300    # characters of a Host that passed, at most, for it to be remembered: a name is at most 253


@functools.lru_cache(maxsize=256)   # asked of every request's Host; ipaddress parses an address in a dozen calls
def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None]:
    """A Host header as (name lower-cased, port or None); BadHost unless it is `name` or `name:digits`."""
    value = (value or "").strip().lower()
    if value.startswith("["):                       # an IPv6 literal: [::1] or [::1]:8122
        head, sep, rest = value.partition("]")
        name = head + sep
    else:
        name, sep, rest = value.partition(":")
        rest = sep + rest
    digits = rest[1:]
    if rest and not (rest[0] == ":" and digits.isascii() and digits.isdigit() and len(digits) <= 5):
        raise BadHost(f"Host {value!r} is not a host name and port.", "Send Host: name or name:port.")
    if not _HOST_CHARS.fullmatch(name):
        raise BadHost(f"Host {value!r} is not a host name.", "Send Host: name or name:port.")
    return name, int(digits) if rest else None


def check_host(req: Request, bound: str, public_hosts: tuple, port: int = 0) -> None:
    """Refuse a Host that is not ours: a web page that rebinds its DNS name to 127.0.0.1 gets no answer.
    A loopback name or address passes with any port: rebinding needs a DNS name of the attacker's, and a browser
    sends a loopback Host only for a page it loaded from loopback, which a published container port or an SSH
    tunnel maps onto ours (127.0.0.1:9000 outside, 0.0.0.0:8122 inside). Any other name must be the bound address
    or a public host and, when it gives a port, carry ours (a public host may also be listed with its own port, as
    a reverse proxy forwards it)."""
    raw = req.headers.get("host")
    if not raw or not raw.strip():
        raise MissingHost("The request has no Host header.", "Send Host: the name and port you connect to.")
    # one longer than any name with a port is checked but never kept: the cache holds few Hosts, not few bytes
    (_check_host if len(raw) <= HOST_KEPT else _check_host.__wrapped__)(raw, bound, public_hosts, port)


@functools.lru_cache(maxsize=256)   # every request sends the same few: a Host that passed once passes (a refusal,
def _check_host(raw: str, bound: str, public_hosts: tuple, port: int) -> None:   # raised, is never kept)
    name, given = split_host(raw)
    sent = raw.strip().lower()
    if "*" in public_hosts or sent in public_hosts or is_loopback(name):
        return
    ours = {bound.lower(), f"[{bound.lower()}]"} | set(public_hosts)
    if name in ours and (given is None or not port or given == port):
        return
    raise BadHost(f"Host {sent!r} is not one this server answers to.",
                  f"Set BENCHWARMERS_PUBLIC_HOSTS={sent} where the service starts (comma-separated beside any "
                  "names already there) and restart it, if you reach it by that name on purpose (a reverse proxy, "
                  "a published port); from this machine, http://127.0.0.1 or localhost needs no setting.")


def check_origin(req: Request, every_method: bool = False) -> None:
    """A state-changing request from another site's page is refused (CSRF); non-browser clients send no Origin.
    `every_method`: reading requests too (MCP's transport validates the Origin of every request)."""
    if req.method in SAFE_METHODS and not every_method:
        return
    headers = req.headers
    if "origin" not in headers and "referer" not in headers and "sec-fetch-site" not in headers:
        return   # a client that is no browser (nearly every ask): nothing below to look at
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


def presented_key(req: Request, in_query: bool = True) -> str | None:
    """The key a client sent, in any of the forms clients use; an empty one does not hide the next form.
    `in_query`: also `?key=` (Gemini clients send a key so); never for the admin token, which a URL would leak."""
    auth = req.headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    for header in ("x-api-key", "x-goog-api-key", "api-key"):
        if (req.headers.get(header) or "").strip():
            return req.headers[header].strip()
    return ((req.query.get("key") or "").strip() or None) if in_query else None


def admin_proof(req: Request, token: str, logins) -> str | None:
    """How the request shows it is the admin: "token" (the admin token in a header), "session" (the cookie of a
    live dashboard session, see logins.py), or None."""
    key = presented_key(req, in_query=False)
    if key and hmac.compare_digest(key.encode(), token.encode()):
        return "token"
    if logins is not None and logins.valid(req.cookie(SESSION_COOKIE)):
        return "session"
    return None


def is_admin(req: Request, token: str | None, logins=None) -> bool:
    return not token or admin_proof(req, token, logins) is not None


def refuse_token_in_url(req: Request, token: str | None) -> None:
    """The admin token as `?key=` is refused, not taken: proxies, logs and browser history keep URLs."""
    value = (req.query.get("key") or "").strip()
    if token and value and hmac.compare_digest(value.encode(), token.encode()):
        raise Unauthorized("The admin token is refused in a URL (?key=): logs and browser history keep URLs.",
                           "Send it as Authorization: Bearer <token>; and as it may have been written down on the "
                           "way, consider changing it.")


def check_csrf_header(req: Request) -> None:
    """A JSON write proved by the session cookie alone carries X-CSRF-Token equal to the bw_csrf cookie: a browser
    sends cookies with whatever a page makes it send, but only the dashboard's own scripts can read the token."""
    cookie, sent = req.cookie(CSRF_COOKIE) or "", req.headers.get(CSRF_HEADER) or ""
    if not cookie or not sent or not hmac.compare_digest(cookie.encode(), sent.encode()):
        raise CsrfFailed("A write with the dashboard's session cookie alone needs the X-CSRF-Token header (the "
                         "bw_csrf cookie's value).", "Send the admin token as Authorization: Bearer instead.")


def require_admin(req: Request, token: str | None, logins=None) -> None:
    if not is_admin(req, token, logins):
        raise Unauthorized("This needs the admin token.",
                           "Send Authorization: Bearer $BENCHWARMERS_ADMIN_TOKEN, or log in at /login.")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
