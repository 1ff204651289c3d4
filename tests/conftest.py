"""Shared fixtures: every test gets its own data folder and llm user folder; services start on port 0."""
from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No test reads or writes the real user's data folder, keys.json or environment settings."""
    data = tmp_path / "data"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(data))
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    for name in ("BENCHWARMERS_ADMIN_TOKEN", "BENCHWARMERS_KEY", "BENCHWARMERS_URL", "BENCHWARMERS_PUBLIC_HOSTS",
                 "BENCHWARMERS_HOST", "BENCHWARMERS_PORT", "BENCHWARMERS_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    return data


@pytest.fixture
def home(isolated) -> Path:
    from benchwarmers import home as home_mod
    home_mod.init(isolated)
    return isolated


@pytest.fixture
def service(home):
    """The real service (dashboard + gateway) on 127.0.0.1, port 0, stopped after the test."""
    from benchwarmers.server.lifecycle import Service
    svc = Service(home).start()
    yield svc
    svc.stop()


@pytest.fixture
def make_service(home):
    """Start services with options (admin token, role, ...); all are stopped after the test."""
    from benchwarmers.server.lifecycle import Service
    started = []

    def make(**kw):
        svc = Service(kw.pop("home", home), **kw).start()
        started.append(svc)
        return svc
    yield make
    for svc in started:
        svc.stop()


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


@pytest.fixture
def http(service) -> Http:
    return Http(service.url)
