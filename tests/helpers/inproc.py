"""The app called in-process, as the HTTP handler calls it but without a socket: for tests that need no wire."""
from __future__ import annotations

import json
from urllib.parse import parse_qsl, unquote, urlsplit

from benchwarmers.bench import Bench
from benchwarmers.server.messages import Request
from benchwarmers.service.app import App


class InProcess:
    """app(method, path, body=None, headers=None, raw=None) -> (status, headers, body as JSON or text), like
    tests.helpers.http.Http; a stream is read to its end. `bench` is the app's Bench."""

    def __init__(self, app: App):
        self.app = app

    @property
    def bench(self) -> Bench:
        return self.app.bench

    def __call__(self, method: str, path: str, body=None, headers: dict | None = None, raw: bytes | None = None,
                 timeout: float | None = None):   # timeout: Http's signature; a call in-process needs none
        split = urlsplit(path)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        sent = {"host": "127.0.0.1"}   # as every HTTP client sends it (a request without Host is refused)
        if data:
            sent["content-type"] = "application/json"
        sent.update({k.lower(): v for k, v in (headers or {}).items()})
        req = Request(method, unquote(split.path) or "/", dict(parse_qsl(split.query, keep_blank_values=True)),
                      sent, data)
        resp = self.app.handle(req)
        content = resp.body if resp.stream is None else b"".join(resp.stream)
        try:
            return resp.status, dict(resp.headers), json.loads(content)
        except ValueError:
            return resp.status, dict(resp.headers), content.decode("utf-8", "replace")
