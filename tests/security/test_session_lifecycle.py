"""Session lifecycle: the dashboard's login cookie is a random id the service keeps, with an expiry; it is Secure
behind HTTPS, ends at log-out, and the CSRF cookie changes at login. What only the cookie proves cannot write through
the JSON API without the CSRF header; the admin token is refused in a URL; the guess throttle counts the loopback
network as one address and never locks out a right token or a live session."""
from __future__ import annotations

import http.client
import json
import re
from urllib.parse import urlsplit

import pytest

from benchwarmers.server.logins import SESSION_IDLE, SESSION_MOST, Logins
from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data, raw

FORM = "application/x-www-form-urlencoded"


def cookies_of(headers: list) -> dict:
    """{name: (value, flags)} of every Set-Cookie in a response's header list."""
    out = {}
    for name, value in headers:
        if name.lower() == "set-cookie":
            pair, *flags = [p.strip() for p in value.split(";")]
            key, _, val = pair.partition("=")
            out[key] = (val, {f.split("=")[0].lower(): f.partition("=")[2] for f in flags})
    return out


def request(url: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
            source: str | None = None):
    """(status, [(header, value)], body), each Set-Cookie kept; `source`: the client's own address."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


def login(url: str, extra: dict | None = None) -> tuple[dict, dict]:
    """(cookies set by the login page, cookies set by the login): a browser logging in with the token."""
    _, got, _ = request(url, "GET", "/login", headers=extra)
    before = cookies_of(got)
    csrf = before["bw_csrf"][0]
    status, got, _ = request(url, "POST", "/login", f"csrf={csrf}&token={TOKEN}&next=/".encode(),
                             {"Content-Type": FORM, "Cookie": f"bw_csrf={csrf}", **(extra or {})})
    assert status == 303
    return before, cookies_of(got)


def jar(cookies: dict) -> str:
    return "; ".join(f"{k}={v[0]}" for k, v in cookies.items())


@pytest.fixture
def svc(home, fake, make_service):
    bench_data(home, fake)
    return make_service(admin_token=TOKEN)


def opens(url: str, cookie: str) -> bool:
    return request(url, "GET", "/collections", headers={"Cookie": cookie})[0] == 200


def test_each_login_gets_its_own_random_session_and_a_new_csrf_cookie(svc):
    """The cookie was an HMAC of the token: one fixed value, the same in every browser, forever."""
    before, first = login(svc.url)
    _, second = login(svc.url)
    one, two = first["bw_session"][0], second["bw_session"][0]
    assert one != two and len(one) >= 43 and TOKEN not in one
    assert opens(svc.url, f"bw_session={one}") and opens(svc.url, f"bw_session={two}")
    assert first["bw_csrf"][0] != before["bw_csrf"][0]              # a token planted before the login is worth nothing
    flags = first["bw_session"][1]
    assert {"httponly", "samesite", "path"} <= set(flags) and int(flags["max-age"]) == SESSION_MOST
    assert "secure" not in flags                                   # plain HTTP on loopback: a browser would drop it


def test_behind_https_every_cookie_is_secure(svc):
    """The hosting templates put HTTPS in front; the proxy says so in X-Forwarded-Proto."""
    before, after = login(svc.url, {"X-Forwarded-Proto": "https"})
    assert "secure" in before["bw_csrf"][1]
    assert "secure" in after["bw_session"][1] and "secure" in after["bw_csrf"][1]


def test_log_out_ends_the_session_wherever_its_cookie_was_copied(svc):
    _, cookies = login(svc.url)
    copied = jar(cookies)
    assert opens(svc.url, copied)
    status, got, _ = request(svc.url, "POST", "/logout", f"csrf={cookies['bw_csrf'][0]}".encode(),
                             {"Content-Type": FORM, "Cookie": copied})
    assert status == 303 and cookies_of(got)["bw_session"][1]["max-age"] == "0"
    assert not opens(svc.url, copied)                              # it survived log-out before
    assert request(svc.url, "GET", "/bench/status", headers={"Cookie": copied})[0] == 401


def test_a_session_expires_when_idle_and_at_its_most(svc):
    now = [1000.0]
    svc.bench.logins = Logins(clock=lambda: now[0])
    _, cookies = login(svc.url)
    used = jar(cookies)
    now[0] += SESSION_IDLE - 60
    assert opens(svc.url, used)                                    # a request keeps it from idling out ...
    now[0] += SESSION_IDLE + 1
    assert not opens(svc.url, used)                                # ... and none for that long ends it
    _, cookies = login(svc.url)
    used = jar(cookies)
    for _ in range(SESSION_MOST // SESSION_IDLE + 1):
        now[0] += SESSION_IDLE - 60
        opened = opens(svc.url, used)
    assert not opened                                              # used all along, it ends a week after login


def test_a_json_write_with_only_the_session_cookie_needs_the_csrf_header(svc):
    """Origin was the only defence: a request that carries the cookie but no Origin (a browser that omits it, or a
    page on a sibling subdomain under a loose proxy) could make a key."""
    _, cookies = login(svc.url)
    body = json.dumps({"name": "planted", "collections": ["*"]}).encode()
    headers = {"Content-Type": "application/json", "Cookie": jar(cookies)}
    status, _, refused = request(svc.url, "POST", "/bench/keys", body, headers)
    assert status == 403 and b"X-CSRF-Token" in refused
    status, _, refused = request(svc.url, "POST", "/bench/keys", body, {**headers, "X-CSRF-Token": "forged-value"})
    assert status == 403
    status, _, _ = request(svc.url, "POST", "/bench/keys", body, {**headers, "X-CSRF-Token": cookies["bw_csrf"][0]})
    assert status == 201
    status, _, _ = request(svc.url, "POST", "/bench/keys", json.dumps({"name": "tool", "collections": ["*"]}).encode(),
                           {"Content-Type": "application/json", **ADMIN_HEADERS})
    assert status == 201                                           # the token in a header needs no cookie or header
    assert request(svc.url, "GET", "/bench/keys", headers={"Cookie": jar(cookies)})[0] == 200   # reads need none


@pytest.mark.parametrize("path", ["/bench/status", "/v1/models", "/v1beta/models"])
def test_the_admin_token_is_refused_in_a_url(svc, path):
    status, _, body = raw(svc.url, "GET", f"{path}?key={TOKEN}")
    assert status == 401 and b"refused in a URL" in body
    assert raw(svc.url, "GET", path, headers=ADMIN_HEADERS)[0] == 200


def loopback_source(n: int) -> str:
    return f"127.0.{n // 250}.{n % 250 + 2}"


def test_the_loopback_network_counts_as_one_address(svc):
    """127.0.x.y are all this machine: each counted apart, they gave 40 unthrottled guesses."""
    try:
        request(svc.url, "GET", "/healthz", source=loopback_source(0))
    except OSError:
        pytest.skip("this system routes only 127.0.0.1 on loopback")
    statuses = [request(svc.url, "GET", "/bench/status", headers={"Authorization": f"Bearer guess-{n:04d}-0123456789"},
                        source=loopback_source(n))[0] for n in range(20)]
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}


def test_a_live_session_and_the_right_token_pass_a_throttled_address(svc):
    """Ten wrong guesses from an address (one proxy in front of everyone) locked the admin out of their own service."""
    _, cookies = login(svc.url)
    for n in range(12):
        request(svc.url, "GET", "/bench/status", headers={"Authorization": f"Bearer guess-{n:04d}-0123456789"})
    assert request(svc.url, "GET", "/bench/status", headers={"Authorization": "Bearer guess-more-0123456789"})[0] == 429
    assert request(svc.url, "GET", "/bench/status", headers={"Cookie": jar(cookies)})[0] == 200
    assert request(svc.url, "GET", "/bench/status", headers=ADMIN_HEADERS)[0] == 200
    assert request(svc.url, "GET", "/bench/status", headers={"Cookie": "bw_session=" + "A" * 43})[0] == 429
    csrf = cookies["bw_csrf"][0]
    status, got, _ = request(svc.url, "POST", "/login", f"csrf={csrf}&token={TOKEN}".encode(),
                             {"Content-Type": FORM, "Cookie": f"bw_csrf={csrf}"})
    assert status == 303 and "bw_session" in cookies_of(got)      # the login form lets the right token in too
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", cookies_of(got)["bw_session"][0])
