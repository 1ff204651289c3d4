"""Dashboard plumbing: the CSRF cookie and its check, notes left for the next page, forms, and form actions.

Every dashboard POST carries a CSRF token (the `csrf` field, or the X-CSRF-Token header from scripts) that must
equal the HttpOnly, SameSite=Strict `bw_csrf` cookie, on top of the Origin check every POST gets. An action
answers a plain form with a redirect and a note shown on the next page, and a script (Accept: application/json)
with JSON. Notes live in memory, keyed by the CSRF cookie, and are shown once.
"""
from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from email import policy
from email.utils import collapse_rfc2231_value
from email.parser import BytesParser
from typing import Protocol, TypeGuard
from urllib.parse import parse_qs, quote

from .. import formats
from ..bench import Bench
from ..errors import BadRequest, BenchError, CsrfFailed, Forbidden
from ..server.guard import CSRF_COOKIE, CSRF_HEADER, is_admin
from ..server.logins import Logins
from ..server.messages import Request, Response
from ..server.routes import BENCH_SHAPE

CSRF_FIELD = "csrf"
SECRET_FIELDS = {"key", "csrf", "token"}       # never echoed back into a form
ECHO_LIMIT = 200_000
_notes: OrderedDict = OrderedDict()
_notes_lock = threading.Lock()


# ---- notes for the next page -------------------------------------------------------------------

def leave_note(req: Request, kind: str, text: str, echo: dict | None = None, secret: str | None = None) -> None:
    owner = req.cookie(CSRF_COOKIE)
    if not owner:
        return
    with _notes_lock:
        note = _notes.setdefault(owner, {"flashes": [], "echo": {}, "secret": None})
        note["flashes"].append((kind, text))
        note["echo"] = echo or {}
        note["secret"] = secret or note["secret"]
        _notes.move_to_end(owner)
        while len(_notes) > 1000:
            _notes.popitem(last=False)


def take_note(owner: str | None) -> dict:
    """The note left for this browser, once."""
    note = None
    if owner:
        with _notes_lock:
            note = _notes.pop(owner, None)
    return note or {"flashes": [], "echo": {}, "secret": None}


# ---- what every page render gets ---------------------------------------------------------------

@dataclass
class Frame:
    path: str
    csrf: str
    set_cookie: str | None = None
    flashes: list = field(default_factory=list)
    echo: dict = field(default_factory=dict)      # what the user typed into the form that failed
    secret: str | None = None                     # shown once: a gateway key just made
    logout: bool = False                          # an admin token is set and this browser is signed in
    signed_in: bool = True

    def typed(self, name: str, default: str = "") -> str:
        value = self.echo.get(name)
        return value[0] if value else default

    def typed_all(self, name: str) -> list:
        return list(self.echo.get(name) or [])


def valid_token(value: str | None) -> TypeGuard[str]:
    return value is not None and 20 <= len(value) <= 64 and value.replace("-", "").replace("_", "").isalnum()


def over_https(req: Request) -> bool:
    """Whether the browser reached the service over HTTPS: a proxy in front says so in X-Forwarded-Proto (each
    hosting template's does), a browser's Origin by its scheme. A client claiming it falsely over plain HTTP only
    gets cookies its own browser will not keep."""
    proto = req.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return proto == "https" or req.headers.get("origin", "").lower().startswith("https://")


def cookie(req: Request, name: str, value: str, max_age: int | None = None) -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, for the whole site, and Secure when served over HTTPS."""
    parts = [f"{name}={value}", "HttpOnly", "SameSite=Strict", "Path=/"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    return "; ".join(parts + (["Secure"] if over_https(req) else []))


def new_csrf(req: Request) -> tuple[str, str]:
    """(a fresh CSRF token, the Set-Cookie that gives it to the browser)."""
    token = secrets.token_urlsafe(24)
    return token, cookie(req, CSRF_COOKIE, token)


class FrameParts(Protocol):
    """Who is signed in to the dashboard: the admin token and the sessions."""
    admin_token: str | None
    logins: Logins


def frame(req: Request, bench: FrameParts) -> Frame:
    current = req.cookie(CSRF_COOKIE)
    set_cookie = None
    if not valid_token(current):
        current, set_cookie = new_csrf(req)
    note = take_note(current)
    signed_in = is_admin(req, bench.admin_token, bench.logins)
    return Frame(req.path, current, set_cookie, note["flashes"], note["echo"], note["secret"],
                 logout=bool(bench.admin_token) and signed_in, signed_in=signed_in)


def wants_json(req: Request) -> bool:
    accept = req.headers.get("accept", "")
    return req.path.endswith(".json") or ("application/json" in accept and "text/html" not in accept)


def safe_local(path: str | None) -> str | None:
    """A path on this site, or None: a form's `back` or the login's `next` must not send anyone elsewhere nor forge a
    header. One leading '/', then printable ASCII without a backslash (browsers read '/\\evil' and '/<tab>/evil' as
    '//evil'; a CR LF would split the answer), at most 2,000 characters."""
    ok = (isinstance(path, str) and path.startswith("/") and path[1:2] not in ("/", "\\") and len(path) <= 2000
          and all("!" <= c <= "~" and c != "\\" for c in path))
    return path if ok else None


# ---- forms --------------------------------------------------------------------------------------

@dataclass
class Upload:
    name: str
    filename: str
    type: str
    data: bytes


@dataclass
class Form:
    fields: dict = field(default_factory=dict)     # name -> [values]
    files: list = field(default_factory=list)

    def get(self, name: str, default: str = "") -> str:
        values = self.fields.get(name)
        return values[0] if values else default

    def getlist(self, name: str) -> list[str]:
        return [v for v in self.fields.get(name, []) if v != ""]

    def flag(self, name: str) -> bool:
        return self.get(name).lower() in ("1", "on", "yes", "true")

    def echo(self) -> dict:
        """What was typed, minus secrets, to fill the form again after a refusal."""
        out, size = {}, 0
        for name, values in self.fields.items():
            if name in SECRET_FIELDS:
                continue
            size += sum(len(v) for v in values)
            if size > ECHO_LIMIT:
                break
            out[name] = values
        return out


def read_form(req: Request) -> Form:
    ctype = req.headers.get("content-type", "")
    if ctype.lower().startswith("multipart/form-data"):
        return read_multipart(ctype, req.body)
    try:
        text = req.body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The form is not UTF-8 text.") from None
    return Form(parse_qs(text, keep_blank_values=True))


def read_multipart(ctype: str, body: bytes) -> Form:
    message = BytesParser(policy=policy.HTTP).parsebytes(
        b"MIME-Version: 1.0\r\nContent-Type: " + ctype.encode("latin-1", "replace") + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise BadRequest("The form could not be read (multipart without parts).", "Send the form again.")
    form = Form()
    for part in message.iter_parts():
        param = part.get_param("name", header="content-disposition") or ""
        name = collapse_rfc2231_value(param) if isinstance(param, tuple) else param   # (an RFC 2231 name: decoded)
        filename = part.get_filename()
        data = part.get_payload(decode=True) or b""
        data = data if isinstance(data, bytes) else b""          # (a part's own parts are no field)
        if filename is not None:
            if filename or data:
                form.files.append(Upload(name, filename, part.get_content_type(), data))
            continue
        form.fields.setdefault(name, []).append(_text(data, part.get_content_charset()))
    return form


def _text(data: bytes, charset: str | None) -> str:
    """A form part's text in its charset; UTF-8 for one Python does not know or cannot decode with "replace"
    (idna): a browser sends UTF-8 unless told otherwise, and a bad label is no reason to fail the form."""
    try:
        return data.decode(charset or "utf-8", "replace")
    except (LookupError, UnicodeError):
        return data.decode("utf-8", "replace")


def check_csrf(req: Request, form: Form) -> None:
    cookie = req.cookie(CSRF_COOKIE) or ""
    sent = req.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD)
    if not cookie or not sent or not hmac.compare_digest(cookie.encode(), sent.encode()):
        raise CsrfFailed("This form has expired or did not come from this dashboard.",
                         "Reload the page and send it again.")


# ---- form actions -------------------------------------------------------------------------------

@dataclass
class Done:
    message: str
    to: str                       # where a plain form goes next
    data: dict | None = None      # what a script gets besides the message
    secret: str | None = None     # shown once on the next page
    headers: dict | None = None   # sent with the redirect (a sign-in's binding cookie)


def json_error(err: BenchError) -> Response:
    return Response.json(formats.error_body(BENCH_SHAPE, err), err.status)


def action(fn, back: str):
    """A POST handler: CSRF checked; fn(req, bench, form) -> Done; a refusal goes back to the form with its text."""
    def handler(req: Request, bench: Bench) -> Response:
        to_json = wants_json(req)
        form = Form()
        try:
            form = read_form(req)
            check_csrf(req, form)
            done = fn(req, bench, form)
        except BenchError as err:
            if to_json:
                return json_error(err)
            if isinstance(err, Forbidden):
                raise                  # no note can be left without a good cookie: the error page says it
            leave_note(req, "error", str(err), echo=form.echo())
            return Response.redirect(safe_local(form.get("back")) or back_path(back, req))
        if to_json:
            return Response.json({"ok": True, "message": done.message, **(done.data or {})})
        if done.message:
            leave_note(req, "ok", done.message, secret=done.secret)
        return Response.redirect(done.to, done.headers)
    handler.__name__ = getattr(fn, "__name__", "action")
    return handler


def back_path(pattern: str, req: Request) -> str:
    return pattern.format(**{k: quote(v, safe="") for k, v in req.params.items()})
