"""The service client used by the CLI and the MCP server: HTTP to the running service; no service at the URL is
exit 3, a refusal exit 1."""
from __future__ import annotations

import json
import os
import socket
import time
from typing import Iterator
from urllib.parse import quote

DEFAULT_URL = "http://127.0.0.1:8122"


class CommandError(Exception):
    """Ends a CLI command (exit `code`, `message` on stderr) or an MCP tool call (isError with `message`)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


class ServiceLink:
    def __init__(self, url: str | None = None, timeout: float | None = None, environ: dict | None = None):
        env = os.environ if environ is None else environ
        self.url = normalise_url(url or env.get("BENCHWARMERS_URL") or DEFAULT_URL)
        self.admin_token = env.get("BENCHWARMERS_ADMIN_TOKEN") or None
        self.key = env.get("BENCHWARMERS_KEY") or None
        self.headers: dict = {}         # sent with every request (the MCP server's X-Bench-Session)
        try:
            self.timeout = float(timeout or env.get("BENCHWARMERS_TIMEOUT") or 900)
        except ValueError:
            raise CommandError("BENCHWARMERS_TIMEOUT must be a number of seconds.", 2) from None

    def _open(self, method: str, path: str, body: dict | None, gateway: bool, timeout: float | None):
        """The open HTTP response; every way of failing becomes a CommandError with its exit code."""
        import urllib.error   # imported when a call is made: `bench serve` imports this module for CommandError alone
        import urllib.request
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json", "User-Agent": "benchwarmers-cli", **self.headers}
        if data is not None:
            headers["Content-Type"] = "application/json"
        secret = (self.key or self.admin_token) if gateway else (self.admin_token or self.key)
        if secret:
            headers["Authorization"] = f"Bearer {secret}"
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:
            raise CommandError(error_message(e.code, e.read())) from None
        except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as e:
            raise self._unreachable(e, timeout) from None

    def _unreachable(self, e: Exception, timeout: float | None) -> CommandError:
        reason = getattr(e, "reason", e)
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return CommandError(f"The service at {self.url} did not answer within {timeout or self.timeout:.0f} s.", 1)
        return CommandError(f"No Benchwarmers service answers at {self.url} ({reason}).\n"
                        "Start one with `benchwarmers` (or `python serve.py` in a checkout), "
                        "or point --url / BENCHWARMERS_URL at a running one.", 3)

    def request(self, method: str, path: str, body: dict | None = None, *, gateway: bool = False,
                timeout: float | None = None) -> dict:
        """JSON in, JSON out. gateway=True sends the gateway key (ask, collections, verdict), else the admin token."""
        resp = self._open(method, path, body, gateway, timeout)
        try:
            with resp:
                raw = resp.read()
        except (OSError, socket.timeout) as e:
            raise self._unreachable(e, timeout) from None
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise CommandError(f"The service at {self.url} answered with something that is not JSON; "
                           "is BENCHWARMERS_URL pointing at Benchwarmers?") from None

    def stream(self, path: str, body: dict, *, gateway: bool = False) -> "Stream":
        """POST and read the reply's SSE `data:` payloads as they come, within BENCHWARMERS_TIMEOUT in all.
        The request is sent (and refused, with its CommandError) before this returns; reading happens as you iterate."""
        deadline = time.monotonic() + self.timeout
        resp = self._open("POST", path, body, gateway, None)

        def payloads():
            with resp:
                for raw in lines(resp):
                    if time.monotonic() > deadline:
                        raise CommandError(f"The panel did not finish within {self.timeout:.0f} s "
                                           "(BENCHWARMERS_TIMEOUT): raise it for slow models, e.g. "
                                           "BENCHWARMERS_TIMEOUT=600.", 1)
                    line = raw.decode("utf-8", "replace").strip()
                    if not line.startswith("data:") or line == "data: [DONE]":
                        continue
                    try:
                        data = json.loads(line[5:])
                    except ValueError:
                        raise CommandError(f"The service at {self.url} streamed something that is not JSON; "
                                       "is BENCHWARMERS_URL pointing at Benchwarmers?") from None
                    if isinstance(data, dict) and data.get("error"):
                        raise CommandError(error_message(502, json.dumps(data).encode()))
                    yield data
        def lines(resp):
            try:
                yield from resp
            except (socket.timeout, TimeoutError):
                raise CommandError(f"The panel sent nothing for {self.timeout:.0f} s (BENCHWARMERS_TIMEOUT): raise "
                                   "it for slow models, e.g. BENCHWARMERS_TIMEOUT=600.", 1) from None
            except OSError as e:
                raise CommandError(f"The service at {self.url} stopped answering mid-reply "
                                   f"({type(e).__name__}).", 1) from None
        return Stream(resp.headers, payloads())

    def download(self, path: str) -> Iterator[bytes]:
        """GET `path` and its body's lines as they come (an export of any size: never read whole)."""
        resp = self._open("GET", path, None, False, None)
        with resp:
            try:
                yield from resp
            except (OSError, socket.timeout) as e:
                raise self._unreachable(e, None) from None

    def get(self, path: str, **kw) -> dict:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: dict, **kw) -> dict:
        return self.request("POST", path, body, **kw)

    def delete(self, path: str, **kw) -> dict:
        return self.request("DELETE", path, **kw)


class Stream:
    """A streamed reply: its response headers (read at once), and its payloads as you iterate."""

    def __init__(self, headers, payloads):
        self.headers = headers
        self._payloads = payloads

    def __iter__(self):
        return self._payloads


def normalise_url(url: str) -> str:
    """Accept the service root with or without a trailing /v1 (what gateway clients are told to use)."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[:-3]
    if "://" not in url:
        url = "http://" + url
    return url


def error_message(status: int, raw: bytes) -> str:
    """The service's own words from any of its error shapes."""
    try:
        body = json.loads(raw)
    except ValueError:
        return f"The service refused the request (HTTP {status})."
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return err.get("message") or f"HTTP {status}"
    if isinstance(err, str):
        return err
    return f"The service refused the request (HTTP {status})."


def q(value: str) -> str:
    return quote(value, safe="")
