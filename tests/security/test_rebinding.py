"""DNS rebinding: a page whose name resolves to 127.0.0.1 gets no answer from any route. The Host must name this
server, with this port when a port is given; a Host with junk after a colon, or none at all, is refused too."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.security.attack import bench_data, concrete, label, raw, routes, status_of, wire
from tests.fakes import FakeOpenAI

ROUTES = routes()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One service for the module (no admin token: the Host check must hold on its own)."""
    from benchwarmers import home as home_mod
    from benchwarmers.service.lifecycle import Service
    data = tmp_path_factory.mktemp("rebinding") / "data"
    home_mod.init(data)
    with FakeOpenAI() as fake:
        bench_data(data, fake)
        svc = Service(data).start()
        try:
            yield svc
        finally:
            svc.stop()


def foreign_hosts(url: str) -> list[str]:
    port = urlsplit(url).port
    return ["evil.example", f"evil.example:{port}", f"localhost:{port + 1 if port < 65535 else 1}",
            "localhost:evil.example", f"127.0.0.1:{port}:x", f"localhost:@evil.example", "127.0.0.1.evil.example",
            "[::1]evil", "local host"]


@pytest.mark.parametrize("route", ROUTES, ids=label)
def test_a_foreign_host_gets_no_answer_on_any_route(served, route):
    for host in foreign_hosts(served.url):
        status, _, body = raw(served.url, route.method, concrete(route), b"{}" if route.method != "GET" else None,
                              {"Host": host, "Content-Type": "application/json"})
        assert status in (400, 403), (label(route), host, status)
        assert b"Traceback" not in body


def test_own_names_with_our_port_or_none_pass(served):
    port = urlsplit(served.url).port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", "127.0.0.1", f"LOCALHOST:{port}"):
        assert raw(served.url, "GET", "/healthz", headers={"Host": host})[0] == 200, host


@pytest.mark.parametrize("route", ROUTES, ids=label)
def test_a_request_without_host_is_refused(served, route):
    reply = wire(served.url, f"{route.method} {concrete(route)} HTTP/1.1\r\nContent-Length: 0\r\n\r\n".encode())
    assert status_of(reply) == 400, (label(route), reply[:200])
