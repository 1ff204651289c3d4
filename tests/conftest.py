"""Shared fixtures: every test gets its own data folder and llm user folder; services start on port 0."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.server import shut_down
from tests.helpers.http import Http
from tests.helpers.inproc import InProcess


def pytest_collection_modifyitems(config, items):
    """On pytest-xdist workers, the slow tests first: a long test started last would keep one worker busy after the
    others ran out of work. Every worker sorts alike, so they agree on the order."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No test reads or writes the real user's data folder, keys.json or environment settings, nor sees the keys
    an earlier test made known to redaction (a remembered key held back a streamed piece that looked like its start)."""
    from benchwarmers import redaction
    monkeypatch.setattr(redaction, "_known", set(redaction._known))
    monkeypatch.setattr(redaction, "_listed", redaction.ListedKeys())
    data = tmp_path / "data"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(data))
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    for name in ("BENCHWARMERS_ADMIN_TOKEN", "BENCHWARMERS_KEY", "BENCHWARMERS_URL", "BENCHWARMERS_PUBLIC_HOSTS",
                 "BENCHWARMERS_HOST", "BENCHWARMERS_PORT", "BENCHWARMERS_TIMEOUT", "BENCH_CLIENT"):
        monkeypatch.delenv(name, raising=False)
    return data


@pytest.fixture(autouse=True)
def no_forge():
    """No test downloads from GitHub: `bench suite fetch` and the Suite page's button, unless a test points them at
    its own mirror, reach a loopback port where nothing listens (the forge unreachable)."""
    from benchwarmers.suite import fetch
    fetch.use_for_tests(None, "http://127.0.0.1:9")
    yield
    fetch.use_for_tests(None)


@pytest.fixture
def home(isolated) -> Path:
    from benchwarmers import home as home_mod
    home_mod.init(isolated)
    return isolated


def stopped(svc) -> None:
    """svc.stop(), its serving loop ended at once rather than at its next poll (a wait every test paid)."""
    shut_down(svc.httpd)
    svc.stop()


@pytest.fixture
def service(home):
    """The real service (dashboard + gateway) on 127.0.0.1, port 0, stopped after the test."""
    from benchwarmers.service.lifecycle import Service
    svc = Service(home).start()
    yield svc
    stopped(svc)


@pytest.fixture
def make_service(home):
    """Start services with options (admin token, role, ...); all are stopped after the test."""
    from benchwarmers.service.lifecycle import Service
    started = []

    def make(**kw):
        svc = Service(kw.pop("home", home), **kw).start()
        started.append(svc)
        return svc
    yield make
    for svc in started:
        stopped(svc)


@pytest.fixture
def make_app(home):
    """Apps called in-process, no socket (options as for a service: admin_token, role, ...), each with its own
    Bench; all closed after the test."""
    from benchwarmers.service.app import App
    from benchwarmers.bench import Bench
    benches = []

    def make(**kw) -> InProcess:
        benches.append(Bench.open(kw.pop("home", home), **kw))
        return InProcess(App(benches[-1]))
    yield make
    for bench in benches:
        bench.close()


@pytest.fixture
def app(make_app) -> InProcess:
    """The service's app called in-process: app(method, path, body) -> (status, headers, body); app.bench is its
    Bench (the same one a started service builds)."""
    return make_app()


@pytest.fixture
def http(service) -> Http:
    return Http(service.url)
