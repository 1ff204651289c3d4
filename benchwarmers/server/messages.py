"""Request and Response: the plain values the app takes and gives, free of any socket."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any, Iterator

from .. import strictjson
from ..errors import BadRequest


@dataclass
class Request:
    method: str
    path: str
    query: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)      # lower-case names
    body: bytes = b""
    client: str = "127.0.0.1"
    params: dict = field(default_factory=dict)       # filled from the route's pattern
    caller: Any = None                               # the gateway key record, once authenticated
    is_admin: bool = False
    for_page: bool = False                           # a dashboard page's in-process call: the page passed the admin
    #                                                  check, so it needs no gateway key (require_keys included)
    app: Any = None                                  # the App handling it: a dashboard page calls the admin API
    #                                                  through the same app and route table, in-process
    gone: Any = None                                 # () -> bool: the client closed its connection (None: cannot
    #                                                  tell, an in-process call); a long wait looks now and then

    def json(self) -> dict:
        """The body as a JSON object; 400 saying what is wrong otherwise."""
        if not self.body.strip():
            raise BadRequest("The request body is empty.", "Send a JSON object with Content-Type: application/json.")
        try:
            data = strictjson.loads(self.body)
        except UnicodeDecodeError:
            raise BadRequest("The request body is not UTF-8 text.", "Send JSON encoded as UTF-8.") from None
        except strictjson.NotJson as e:
            raise BadRequest(f"The request body is not valid JSON: {e}.") from None
        except json.JSONDecodeError as e:
            raise BadRequest(f"Malformed JSON at line {e.lineno} column {e.colno}: {e.msg}.",
                             "Send a valid JSON object.") from None
        except RecursionError:
            raise BadRequest("The JSON is nested too deeply to read.", "Send a flatter JSON object.") from None
        if not isinstance(data, dict):
            raise BadRequest(f"The request body must be a JSON object, not {type(data).__name__}.",
                             "Wrap the fields in {...}.")
        return data

    def cookie(self, name: str) -> str | None:
        raw = self.headers.get("cookie")
        if not raw:
            return None
        jar = SimpleCookie()
        try:
            jar.load(raw)
        except CookieError:   # a malformed Cookie header carries no session: the request is simply not logged in
            return None
        return jar[name].value if name in jar else None


# Referrer-Policy same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on a form's POST,
# which the cross-site check must refuse; same-origin still sends nothing to another site.
HTML_SECURITY = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


# json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False), one encoder made once (its encode()
# keeps no state between calls: circular data is refused as before)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    stream: Iterator[bytes] | None = None            # chunks written as they come (chunked encoding)

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict | None = None) -> "Response":
        try:
            text = _ENCODE(data)
        except ValueError:   # NaN or an infinity held from before they were refused: JSON has no word for them
            text = json.dumps(_no_nan(data), ensure_ascii=False, separators=(",", ":"))
        return cls(status, text.encode("utf-8", "replace"), {"Content-Type": "application/json", **(headers or {})})

    @classmethod
    def html(cls, text: str, status: int = 200, headers: dict | None = None) -> "Response":
        """A page, with the headers every page carries: no script or style but our own files, never in a frame,
        no type sniffing, no Referer leaving the service."""
        return cls(status, text.encode("utf-8", "replace"), {"Content-Type": "text/html; charset=utf-8",
                                                             **HTML_SECURITY, **(headers or {})})

    @classmethod
    def streaming(cls, chunks: Iterator[bytes], content_type: str, headers: dict | None = None) -> "Response":
        return cls(200, b"", {"Content-Type": content_type, "Cache-Control": "no-cache",
                              "X-Accel-Buffering": "no", **(headers or {})}, stream=chunks)

    @classmethod
    def redirect(cls, location: str, headers: dict | None = None) -> "Response":
        return cls(303, b"", {"Location": location, **(headers or {})})


def _no_nan(value):
    """`value` with null for every NaN and infinity (a record or file from before they were refused)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    return value
