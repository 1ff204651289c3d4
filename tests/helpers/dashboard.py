"""Helpers for dashboard tests without a browser: a cookie-keeping HTTP session that posts forms as a browser does."""
from __future__ import annotations

import http.client
import json
import secrets
from typing import Callable
from urllib.parse import urlencode, urlsplit

SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "referrer-policy", "x-frame-options")


class Session:
    """One browser's worth of cookies; requests are sent as-is and redirects are not followed."""

    def __init__(self, url: str):
        self.url = url
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                on_data: Callable[[bytes], object] | None = None):
        """(status, headers, text); on_data(what has arrived so far) is called as a streamed body comes in."""
        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        hdrs = dict(headers or {})
        if self.cookies:
            hdrs["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            data = resp.read() if on_data is None else as_it_comes(resp, on_data)
            for name, value in resp.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.split(";")[0].partition("=")
                    if "max-age=0" in value.lower():
                        self.cookies.pop(key, None)
                    else:
                        self.cookies[key] = rest
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data.decode("utf-8", "replace")
        finally:
            conn.close()

    def get(self, path: str, **headers):
        return self.request("GET", path, headers=headers)

    def json(self, path: str):
        status, _, text = self.get(path)
        assert status == 200, (path, status, text[:500])
        return json.loads(text)

    @property
    def csrf(self) -> str:
        if "bw_csrf" not in self.cookies:
            self.get("/login")
        return self.cookies["bw_csrf"]

    def form(self, path: str, fields, script: bool = False, files: list | None = None):
        """POST a form (fields: dict or list of pairs) with the CSRF token; script=True asks for JSON as app.js does."""
        pairs = list(fields.items()) if isinstance(fields, dict) else list(fields)
        pairs.append(("csrf", self.csrf))
        headers = {"Accept": "application/json"} if script else {}
        if files:
            body, ctype = multipart(pairs, files)
        else:
            body, ctype = urlencode(pairs).encode(), "application/x-www-form-urlencoded"
        headers["Content-Type"] = ctype
        status, hdrs, text = self.request("POST", path, body, headers)
        return status, hdrs, (json.loads(text) if script and text else text)


def as_it_comes(resp, on_data: Callable[[bytes], object]) -> bytes:
    data = b""
    while chunk := resp.read1(65536):
        data += chunk
        on_data(data)
    return data


def multipart(pairs: list, files: list) -> tuple[bytes, str]:
    """fields and files [(field, filename, type, bytes)] as multipart/form-data."""
    boundary = "----bw" + secrets.token_hex(8)
    out = []
    for name, value in pairs:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, filename, ctype, data in files:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                   f"Content-Type: {ctype}\r\n\r\n".encode() + data + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out), f"multipart/form-data; boundary={boundary}"
