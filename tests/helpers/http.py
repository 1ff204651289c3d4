"""A tiny raw-HTTP client for tests: (status, headers, body as JSON or text), errors included."""
from __future__ import annotations

import json
import urllib.error
import urllib.request


class Http:
    """A tiny raw-HTTP client for tests: (status, headers, body-as-JSON-or-text)."""

    def __init__(self, base: str):
        self.base = base

    def __call__(self, method: str, path: str, body=None, headers: dict | None = None, raw: bytes | None = None,
                 timeout: float = 30):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        hdrs = {"Content-Type": "application/json"} if data is not None else {}
        hdrs.update(headers or {})
        req = urllib.request.Request(self.base + path, data=data, headers=hdrs, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, dict(resp.headers), _decode(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), _decode(e.read())


def _decode(raw: bytes):
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
