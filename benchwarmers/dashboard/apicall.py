"""Pages read and change the bench through the service's own admin API, called in-process as the page's request.

The call goes through the same route table, guard and handlers as an HTTP client's, authorised by the page
request's own cookie or token, so a page can do nothing its user could not do with the API or the CLI.
"""
from __future__ import annotations

import json

from ..errors import BenchError
from ..server.app import App
from ..server.messages import Request

FORWARD = ("host", "cookie", "authorization")
_router = None


def router():
    global _router
    if _router is None:
        from ..server.table import build_router   # the table lists the pages, which import this module
        _router = build_router()
    return _router


def call(req: Request, ctx, method: str, path: str, body: dict | None = None, query: dict | None = None) -> dict:
    """The JSON answer of `method path`; a refusal is raised as a BenchError with the API's status and words."""
    headers = {k: v for k, v in req.headers.items() if k in FORWARD}
    data = b""
    if body is not None:
        data = json.dumps(body).encode()
        headers["content-type"] = "application/json"
    query = {k: str(v) for k, v in (query or {}).items() if v not in (None, "")}
    resp = App(ctx, router()).handle(Request(method, path, query, headers, data, req.client))
    payload = json.loads(resp.body) if resp.body else {}
    if resp.status >= 400:
        err = payload.get("error") if isinstance(payload, dict) else None
        message = err.get("message") if isinstance(err, dict) else None
        raise BenchError(message or f"The API refused {method} {path} (HTTP {resp.status}).", status=resp.status,
                         code=err.get("code") if isinstance(err, dict) else None)
    return payload


def get(req: Request, ctx, path: str, **query) -> dict:
    return call(req, ctx, "GET", path, query=query)


def post(req: Request, ctx, path: str, body: dict | None = None) -> dict:
    return call(req, ctx, "POST", path, {} if body is None else body)
