"""DNS rebinding: a page whose name resolves to 127.0.0.1 gets no answer from any route. The Host must name this
server, with this port when a port is given; a Host with junk after a colon, or none at all, is refused too."""
from __future__ import annotations

import json
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
    return ["evil.example", f"evil.example:{port}", f"evil.example:{port + 1 if port < 65535 else 1}",
            "localhost:evil.example", f"127.0.0.1:{port}:x", f"localhost:@evil.example", "127.0.0.1.evil.example",
            f"localhost.evil.example:{port}", "[::1]evil", "local host", "127.0.0.1.nip.io"]


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


def test_a_loopback_host_on_another_port_passes(served):
    """A container published as 127.0.0.1:9000 -> 8122, or an SSH tunnel: the browser names the outer port. No
    rebinding page can send a loopback Host (rebinding needs a DNS name of the attacker's)."""
    port = urlsplit(served.url).port
    for host in (f"127.0.0.1:{port + 1 if port < 65535 else 1}", "localhost:9000", "[::1]:9000", "127.0.0.2:9000"):
        assert raw(served.url, "GET", "/healthz", headers={"Host": host})[0] == 200, host


def test_the_refusal_names_the_setting_with_the_host_that_was_sent(served):
    status, _, body = raw(served.url, "GET", "/healthz", headers={"Host": "Bench.Example.com:9000"})
    assert status == 403
    said = json.loads(body)["error"]["message"]
    assert "Host 'bench.example.com:9000' is not one this server answers to." in said
    assert "Set BENCHWARMERS_PUBLIC_HOSTS=bench.example.com:9000 where the service starts" in said


@pytest.mark.parametrize("route", ROUTES, ids=label)
def test_a_request_without_host_is_refused(served, route):
    reply = wire(served.url, f"{route.method} {concrete(route)} HTTP/1.1\r\nContent-Length: 0\r\n\r\n".encode())
    assert status_of(reply) == 400, (label(route), reply[:200])


def test_a_long_host_that_passes_is_not_kept():
    """The passed Hosts are remembered (a few hundred at most): one longer than any name with its port (a loopback
    address padded with 60 KB of spaces passes) is checked every time and never kept, so Hosts cannot pin
    megabytes of memory before any sign-in."""
    from benchwarmers.server import guard
    from benchwarmers.server.messages import Request
    guard._check_host.cache_clear()
    guard.check_host(Request("GET", "/", headers={"host": "127.0.0.1:8122"}), "127.0.0.1", (), 8122)
    assert guard._check_host.cache_info().currsize == 1
    for n in range(3):
        guard.check_host(Request("GET", "/", headers={"host": "127.0.0.1" + " " * (60_000 + n)}), "127.0.0.1", (),
                         8122)
    assert guard._check_host.cache_info().currsize == 1
    with pytest.raises(guard.BadHost):   # a long foreign one is still refused
        guard.check_host(Request("GET", "/", headers={"host": "evil.example" + "x" * 400}), "127.0.0.1", (), 8122)
