"""XSS: every page the service serves carries the security headers, and whatever a page shows is escaped."""
from __future__ import annotations

import pytest

from tests.fakes import FakeOpenAI
from tests.helpers.data import write
from tests.security.attack import bench_data, concrete, label, routes

HTML_ROUTES = [r for r in routes() if r.shape == "html"]
MARKUP = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture
def app(home, make_app):
    with FakeOpenAI() as fake:
        bench_data(home, fake)
        yield make_app()


def assert_secured(headers: dict, where: str) -> None:
    csp = headers.get("Content-Security-Policy", "")
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, where
    assert "unsafe-inline" not in csp, where
    assert headers.get("X-Frame-Options") == "DENY", where
    assert headers.get("X-Content-Type-Options") == "nosniff", where
    assert headers.get("Referrer-Policy") == "same-origin", where


@pytest.mark.parametrize("route", HTML_ROUTES, ids=label)
def test_every_page_carries_the_security_headers(app, route):
    method = "GET" if route.method == "HEAD" else route.method
    status, headers, _ = app(method, concrete(route), raw=b"" if method == "POST" else None,
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    if headers.get("Content-Type", "").startswith("text/html"):
        assert_secured(headers, label(route))


def test_error_pages_carry_them_too_and_escape_the_path(app):
    status, headers, page = app("GET", "/no/such/" + MARKUP.replace(" ", "%20"))
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    assert_secured(headers, "404")
    assert "<script>" not in page and "<img" not in page


def test_what_the_dashboard_shows_is_escaped(home, app):
    write(home, "collections.json", {"collections": {"core": {"members": ["a"], "description": MARKUP}}})
    write(home, "models.json", {"models": {"a": {"endpoint": "fake", "served": MARKUP}}})
    for path in ("/collections", "/collections/core", "/models", "/models/a"):    # the pages that show them
        status, headers, page = app("GET", path)
        assert status == 200
        assert_secured(headers, path)
        assert "<script>alert" not in page and "<img src=x" not in page and "&lt;script&gt;" in page, path
