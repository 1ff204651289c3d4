"""What every attack module shares: the route table classified, a concrete path per route, raw HTTP clients."""
from __future__ import annotations

import http.client
import json
import re
import socket
from urllib.parse import urlsplit

from benchwarmers.server.routes import ADMIN, GATEWAY, PUBLIC, Route
from benchwarmers.service.table import build_table
from tests.helpers.data import configure

TOKEN = "security-suite-admin-0123456789"
ADMIN_HEADERS = {"Authorization": f"Bearer {TOKEN}"}
CLASSES = (PUBLIC, GATEWAY, ADMIN)
# Each public route was reviewed: anyone may call it, admin token or not. A route that becomes public fails
# test_auth.py::test_every_public_route_was_reviewed until it is looked at and listed here. The sign-in callback
# comes from the provider's site, so no SameSite=Strict session cookie is sent with it: it is held to a flow an
# admin started instead (a single-use 192-bit state, 10 minutes, the starting browser's binding cookie), which
# test_auth.py::test_the_public_sign_in_callback_takes_only_the_flow_an_admin_started attacks. The own-app
# callback is the same check with the state in its query (tests/test_connect_apps.py attacks it).
REVIEWED_PUBLIC = {("GET", "/healthz"), ("HEAD", "/"), ("GET", "/openapi.json"), ("GET", "/login"),
                   ("POST", "/login"), ("POST", "/logout"), ("GET", "/static/{name}"),
                   ("GET", "/connect/{provider}/callback/{state}"), ("GET", "/connect/{provider}/callback")}
SAMPLES = {"name": "core", "id": "nosuchcall", "alias": "a", "model": "bench/core"}
STATIC = {"name": "style.css"}


def routes() -> list[Route]:
    return build_table().routes


def label(route: Route) -> str:
    return f"{route.method} {route.pattern}"


def concrete(route: Route) -> str:
    """A path that the route matches, with plausible values in its parameters."""
    values = STATIC if route.pattern.startswith("/static/") else SAMPLES
    return re.sub(r"\{(\w+)(?::path)?\}", lambda m: values.get(m.group(1), "x"), route.pattern)


def writes(route: Route) -> bool:
    return route.method not in ("GET", "HEAD", "OPTIONS")


def takes_json(route: Route) -> bool:
    """Routes whose body is JSON (the dashboard's forms are not)."""
    return writes(route) and route.shape != "html"


def bench_data(home, fake) -> None:
    """Collections core (a, b) and secret (x) on one fake OpenAI upstream; model 'paid' is ad hoc."""
    configure(home, {"fake": (fake, "openai")},
              {"a": ("fake", "m-a"), "b": ("fake", "m-b"), "x": ("fake", "m-x"),
               "paid": {"endpoint": "fake", "served": "m-paid", "ad_hoc": True, "facts": {}}},
              {"core": {"members": ["a", "b"], "explore": 0}, "secret": {"members": ["x"], "explore": 0}})


def raw(url: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
        timeout: float = 30):
    """One request with exactly these headers (Host added unless given): (status, headers, body)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        given = {k.lower() for k in (headers or {})}
        conn.putrequest(method, path, skip_host="host" in given, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None and "content-length" not in given and "transfer-encoding" not in given:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def wire(url: str, data: bytes, wait: float = 5.0) -> bytes:
    """Send these exact bytes; what came back within `wait` seconds (b"" if nothing)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait) as s:
        s.sendall(data)
        got = b""
        try:
            while b"\r\n\r\n" not in got:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except socket.timeout:
            pass
        return got


def status_of(reply: bytes) -> int | None:
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return int(m.group(1)) if m else None


def as_json(data: bytes):
    return json.loads(data)


def cli(url: str, *args: str, **env) -> "subprocess.CompletedProcess":
    """`bench ARGS` in a child process against the service at `url` (no stdin)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent.parent
    environ = {**os.environ, "BENCHWARMERS_URL": url, "PYTHONPATH": str(root), "PYTHONIOENCODING": "utf-8", **env}
    return subprocess.run([sys.executable, "-m", "benchwarmers", *args], cwd=str(root), env=environ,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60)


def keyed_endpoint(home, name: str = "fake") -> None:
    """Make an endpoint of the test data folder one that sends its key (from the environment or keys.json)."""
    path = home / "config" / "endpoints.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["endpoints"][name]["no_key"] = False
    path.write_text(json.dumps(data), encoding="utf-8")
