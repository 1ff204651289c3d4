"""Authentication and escalation: every route classified, every admin route closed without the token, every gateway
route without a key, each key form accepted, guessing throttled, weak tokens refused, keys kept out of logs."""
from __future__ import annotations

import logging

import pytest

from benchwarmers.service.lifecycle import BindRefused, Service
from benchwarmers.signin import flows
from benchwarmers.signin.vendors import HANDOFF
from tests.fakes.signin import FakeOpenRouter
from tests.helpers.signin import pointed_at
from tests.security.attack import (ADMIN, ADMIN_HEADERS, CLASSES, GATEWAY, PUBLIC, REVIEWED_PUBLIC, TOKEN, bench_data,
                                   concrete, label, raw, routes)

ROUTES = routes()


@pytest.fixture
def keyed(guarded):
    """An app with the admin token set, the suite's bench, and a gateway key for `core`."""
    app, make_key = guarded
    return app, make_key(["core"])


def test_every_route_is_classified():
    """Each route says who may call it; the dashboard's own pages are also marked dashboard-only."""
    unclassified = [label(r) for r in ROUTES if r.auth not in CLASSES]
    assert not unclassified, f"routes with no classification (public, gateway or admin): {unclassified}"
    html_admin = [label(r) for r in ROUTES if r.shape == "html" and r.auth == ADMIN and not r.dashboard_only]
    assert not html_admin, f"dashboard pages not marked dashboard_only: {html_admin}"


def test_every_public_route_was_reviewed():
    public = {(r.method, r.pattern) for r in ROUTES if r.auth == PUBLIC}
    assert public <= REVIEWED_PUBLIC, f"new public routes: review them, then list them in attack.py: " \
                                      f"{public - REVIEWED_PUBLIC}"


@pytest.mark.parametrize("route", [r for r in ROUTES if r.auth == ADMIN], ids=label)
def test_admin_routes_refuse_no_token_a_wrong_one_and_a_gateway_key(keyed, route):
    app, key = keyed
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": f"Bearer {key}"},
                    {"x-api-key": key}):
        status, got, _ = app(route.method, concrete(route), {} if route.method != "GET" else None, headers=headers)
        if route.shape == "html" and route.method == "GET":
            assert status == 303 and got["Location"].startswith("/login"), (headers, status)
        else:
            assert status == 401, (label(route), headers, status)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.auth == GATEWAY], ids=label)
def test_gateway_routes_refuse_no_key_and_a_wrong_one(keyed, route):
    app, _ = keyed
    for headers in ({}, {"Authorization": "Bearer bw-not-a-key"}, {"x-goog-api-key": "bw-not-a-key"}):
        status, _, _ = app(route.method, concrete(route), {} if route.method != "GET" else None, headers=headers)
        assert status == 401, (label(route), headers, status)


@pytest.mark.parametrize("route", [r for r in ROUTES if r.auth == PUBLIC], ids=label)
def test_public_routes_need_nothing(keyed, route):
    """(The login form itself answers a missing token with its page again, 401.)"""
    app, _ = keyed
    status, _, _ = app(route.method, concrete(route), None)
    assert status != 401 or (route.method, route.pattern) == ("POST", "/login"), label(route)


def test_the_public_sign_in_callback_takes_only_the_flow_an_admin_started(keyed):
    """Without the session cookie, the callback takes nothing but a live flow's state from the browser holding its
    binding cookie: an unknown state, another provider's, a missing or wrong cookie are 400s that reach no
    provider; a refusal for a cookie leaves the flow to its own browser, and a state works once."""
    app, _ = keyed
    with FakeOpenRouter() as fake, pointed_at("openrouter", site=fake.site, base_url=fake.url):
        flow = app.bench.signins.add(flows.Flow("openrouter", HANDOFF, "openrouter", False))
        path = flow.landing + "?code=stolen"
        for url, headers in ((f"/connect/openrouter/callback/{'A' * 32}?code=x", {"Cookie": f"bw_signin={flow.binding}"}),
                             (path, {}), (path, {"Cookie": "bw_signin=" + "B" * 32}),
                             (path, {"Authorization": f"Bearer {TOKEN}"}),       # the admin, but not its browser
                             (path.replace("/openrouter/", "/nanogpt/", 1), {"Cookie": f"bw_signin={flow.binding}"})):
            status, _, page = app("GET", url, headers=headers)
            assert status == 400 and "Start the sign-in again" in page, (url, headers, status)
        assert fake.exchanges == []
        flow = app.bench.signins.add(flows.Flow("openrouter", HANDOFF, "openrouter", False))
        status, got, _ = app("GET", flow.landing + "?code=whatever", headers={"Cookie": f"bw_signin={flow.binding}"})
        assert status == 200 and got["Refresh"].startswith("0; url=/endpoints?signin=") and len(fake.exchanges) == 1
        status, _, _ = app("GET", flow.landing + "?code=whatever", headers={"Cookie": f"bw_signin={flow.binding}"})
        assert status == 400 and len(fake.exchanges) == 1


def test_each_key_form_is_accepted_and_an_empty_bearer_hides_none(keyed):
    app, key = keyed
    ask = {"model": "bench/core", "messages": [{"role": "user", "content": "hi"}]}
    for headers, query in (({"Authorization": f"Bearer {key}"}, ""), ({"x-api-key": key}, ""),
                           ({"x-goog-api-key": key}, ""), ({"api-key": key}, ""), ({}, f"?key={key}"),
                           ({"Authorization": "Bearer ", "x-api-key": key}, ""),
                           ({"Authorization": "Bearer", "x-goog-api-key": key}, "")):
        status, _, data = app("POST", "/v1/chat/completions" + query, ask, headers=headers)
        assert status == 200, (headers, query, data)


def test_guessing_the_admin_token_is_throttled(keyed):
    """200 guesses once all got a quick 401; after ten, an address gets 429 for each wrong one until the window
    passes. The right token still gets in: ten wrong guesses from a shared address locked its owner out."""
    app, _ = keyed
    statuses = [app("GET", "/bench/status", headers={"Authorization": f"Bearer guess-{i:04d}-0123456789"})[0]
                for i in range(30)]
    assert statuses[:10] == [401] * 10
    assert set(statuses[10:]) == {429}
    status, headers, _ = app("GET", "/bench/status", headers={"Authorization": "Bearer guess-again-0123456789"})
    assert status == 429 and int(headers["Retry-After"]) >= 1
    assert app("GET", "/bench/status", headers=ADMIN_HEADERS)[0] == 200


def test_a_guesser_cannot_lock_the_apps_out(keyed):
    """Behind a hosting platform's proxy every client has the proxy's address: an app's own key (nothing to guess
    in 192 random bits) and the admin token still get through while that address is throttled, and a guess sent
    with a wrong key is still refused."""
    app, key = keyed
    for i in range(12):
        app("POST", "/v1/chat/completions", {"model": "bench/core"}, headers={"Authorization": f"Bearer bw-guess{i}"})
    assert app("POST", "/v1/chat/completions", {"model": "bench/core"},
               headers={"Authorization": "Bearer bw-guess-again"})[0] == 429
    assert app("GET", "/bench/status", headers=ADMIN_HEADERS)[0] == 200
    status, _, _ = app("POST", "/v1/chat/completions", {"model": "bench/core"},
                       headers={"Authorization": f"Bearer {key}"})
    assert status not in (401, 429)


def test_guessing_at_the_login_form_is_throttled_too(keyed):
    app, _ = keyed
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": "bw_csrf=c0ffee"}   # the form's own
    statuses = [app("POST", "/login", raw=f"csrf=c0ffee&token=guess{i}".encode(), headers=form)[0] for i in range(15)]
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}


def test_an_apps_own_key_on_an_admin_route_is_not_counted_as_a_guess(keyed):
    app, key = keyed
    for _ in range(15):
        assert app("GET", "/bench/status", headers={"Authorization": f"Bearer {key}"})[0] == 401
    assert app("GET", "/bench/status", headers=ADMIN_HEADERS)[0] == 200


@pytest.mark.parametrize("token", [" " * 16, "\t" * 20, "a" * 32, "abcdefg" * 3, "short-token"])
def test_a_weak_token_cannot_guard_a_public_address(home, token):
    with pytest.raises(BindRefused):
        Service(home, host="0.0.0.0", admin_token=token)


def test_debug_logs_never_hold_a_key_sent_as_a_query_parameter(home, fake, make_service, caplog):
    bench_data(home, fake)
    svc = make_service(admin_token=TOKEN)
    status, _, made = raw(svc.url, "POST", "/bench/keys", b'{"name": "app", "collections": ["core"]}',
                          {**ADMIN_HEADERS, "Content-Type": "application/json"})
    key = __import__("json").loads(made)["key"]
    with caplog.at_level(logging.DEBUG, logger="benchwarmers"):
        assert raw(svc.url, "GET", f"/v1beta/models?key={key}")[0] == 200
        assert raw(svc.url, "GET", f"/v1beta/models?alt=json&key={key}")[0] == 200
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "v1beta/models" in logged          # the request line was logged ...
    assert key not in logged                  # ... without the key
