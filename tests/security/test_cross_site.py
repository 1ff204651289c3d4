"""Cross-site requests: a web page in the user's browser cannot change anything, on any route that writes."""
from __future__ import annotations

import pytest

from tests.security.attack import bench_data, concrete, label, routes, writes
from tests.fakes import FakeOpenAI

ROUTES = [r for r in routes() if writes(r)]
ATTACKS = ({"Origin": "http://evil.example"}, {"Origin": "null"}, {"Referer": "http://evil.example/page"},
           {"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://127.0.0.1.evil.example"})


@pytest.fixture
def app(home, make_app):
    with FakeOpenAI() as fake:
        bench_data(home, fake)
        yield make_app()


@pytest.mark.parametrize("route", ROUTES, ids=label)
def test_every_writing_route_refuses_a_cross_site_request(app, route):
    before = app.bench.config.version
    for headers in ATTACKS:
        status, _, body = app(route.method, concrete(route), {"name": "x"}, headers=headers)
        assert status == 403, (label(route), headers, status, body)
    assert app.bench.config.version == before      # and nothing was written


def test_the_services_own_origin_passes(app):
    status, _, _ = app("POST", "/bench/verdict", {"call": "nosuch", "useful": True},
                       headers={"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"})
    assert status == 404      # past the guard: the call is unknown
