"""Form actions change the bench through the service's own admin API, called in-process as the page's request.

The call goes through the same app, route table, guard and handlers as an HTTP client's, authorised by the page
request's own cookie or token, so a page can do nothing its user could not do with the API or the CLI.
"""
from __future__ import annotations

import json

from ..errors import BenchError
from ..server.messages import Request
from .pagewords import for_page

FORWARD = ("host", "cookie", "authorization")


class Refused(BenchError):
    """The admin API's refusal, passed on with its own status, code and words."""

    def __init__(self, message: str, status: int, code: str | None):
        super().__init__(message)
        self.status, self.code = status, code or BenchError.code


def call(req: Request, method: str, path: str, body: dict | None = None, query: dict | None = None) -> dict:
    """The JSON answer of `method path`; a refusal is raised as Refused."""
    headers = {k: v for k, v in req.headers.items() if k in FORWARD}
    data = b""
    if body is not None:
        data = json.dumps(body).encode()
        headers["content-type"] = "application/json"
    query = {k: str(v) for k, v in (query or {}).items() if v not in (None, "")}
    inner = Request(method, path, query, headers, data, req.client)
    inner.for_page = req.is_admin or req.for_page
    resp = req.app.handle(inner)
    raw = resp.body or (b"".join(resp.stream) if resp.stream is not None else b"")   # a listing comes in pages
    payload = json.loads(raw) if raw else {}
    if resp.status >= 400:
        err = payload.get("error") if isinstance(payload, dict) else None
        message = err.get("message") if isinstance(err, dict) else None
        raise Refused(for_page(message) if message else f"The API refused {method} {path} (HTTP {resp.status}).",
                      resp.status,
                      err.get("code") if isinstance(err, dict) else None)
    return payload


def get(req: Request, path: str, **query) -> dict:
    return call(req, "GET", path, query=query)


def post(req: Request, path: str, body: dict | None = None) -> dict:
    return call(req, "POST", path, {} if body is None else body)
