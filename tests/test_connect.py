"""Provider sign-in over real HTTP against fake providers: the PKCE key handoff (OpenRouter, NanoGPT), the
device sign-in (Pollinations), refusals, the result on the Endpoints page, and the key never leaving keys.json."""
from __future__ import annotations

import http.client
import json
import logging
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from benchwarmers.signin import flows, vendors
from tests.fakes import FakeOpenAI
from tests.fakes.signin import FakeNanoGPT, FakeOpenRouter, FakePollinations
from tests.helpers.signin import pointed_at

TOKEN = "connect-admin-token-0123456789"


class Browser:
    """One request per call (redirects are not followed), cookies kept by name and path as a browser keeps
    them; every status line, header and body it sees is kept in `seen` for the leak checks."""

    def __init__(self):
        self.cookies: dict[tuple[str, str], str] = {}
        self.seen: list[str] = []

    def request(self, method: str, url: str, form: dict | None = None, origin: str | None = None):
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {}
        jar = "; ".join(f"{n}={v}" for (n, p), v in self.cookies.items() if parts.path.startswith(p))
        if jar:
            headers["Cookie"] = jar
        body = None
        if form is not None:
            body = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if origin:
            headers["Origin"] = origin
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        raw = resp.read().decode("utf-8", "replace")
        got = {k.lower(): v for k, v in resp.getheaders()}
        conn.close()
        self.seen.append(f"{resp.status} {json.dumps(got)} {raw}")
        self.keep(got.get("set-cookie"))
        return resp.status, got, raw

    def keep(self, cookie: str | None) -> None:
        if not cookie:
            return
        pair, *attrs = [p.strip() for p in cookie.split(";")]
        name, value = pair.split("=", 1)
        path = next((a.split("=", 1)[1] for a in attrs if a.lower().startswith("path=")), "/")
        if any(a.lower() == "max-age=0" for a in attrs):
            self.cookies.pop((name, path), None)
        else:
            self.cookies[(name, path)] = value

    def get(self, url: str):
        return self.request("GET", url)

    def post(self, url: str, form: dict | None = None, origin: str | None = None):
        return self.request("POST", url, form or {}, origin)

    def form(self, service, path: str, **fields):
        """A dashboard form post, with the CSRF token a page of the service gave this browser."""
        if ("bw_csrf", "/") not in self.cookies:
            self.get(service.url + "/login")
        return self.post(service.url + path, {**fields, "csrf": self.cookies[("bw_csrf", "/")]}, origin=service.url)


def keys_json(isolated) -> dict:
    path = isolated.parent / "llm" / "keys.json"
    return json.loads(path.read_text()) if path.exists() else {}


def start(browser: Browser, service, provider: str, **form):
    status, headers, body = browser.form(service, f"/connect/{provider}", **form)
    assert status == 303, body
    return headers["location"]


def refused_start(service, provider: str, **form):
    """A start as a script posts it (JSON back): (status, error message)."""
    browser = Browser()
    browser.get(service.url + "/login")
    fields = urlencode({**form, "csrf": browser.cookies[("bw_csrf", "/")]}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", urlsplit(service.url).port, timeout=30)
    conn.request("POST", f"/connect/{provider}", fields, {"Content-Type": "application/x-www-form-urlencoded",
                                                          "Accept": "application/json", "Origin": service.url,
                                                          "Cookie": f"bw_csrf={browser.cookies[('bw_csrf', '/')]}"})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body["error"]["message"]


def through_auth_page(browser: Browser, auth_url: str) -> str:
    """The fake's auth page approves and sends the browser back: the callback URL with the code."""
    status, headers, _ = browser.get(auth_url)
    assert status == 302
    return headers["location"]


def landed(status: int, headers: dict) -> str:
    """The page the callback answers with moves on by itself to the Endpoints page with the result's id."""
    assert status == 200 and headers["refresh"].startswith("0; url=/endpoints?signin=")
    return headers["refresh"].split("url=", 1)[1]


def result_of(http, status: int, headers: dict) -> dict:
    status, _, d = http("GET", "/bench/connect?result=" + landed(status, headers).split("=", 1)[1])
    assert status == 200
    return d["result"]


@pytest.fixture
def openrouter():
    with FakeOpenRouter() as fake, pointed_at("openrouter", site=fake.site, base_url=fake.url):
        fake.set_models(["or-one", "or-two"])
        yield fake


@pytest.mark.parametrize("provider, fake_class", [("openrouter", FakeOpenRouter), ("nanogpt", FakeNanoGPT)])
def test_the_handoff_round_trip_adds_the_endpoint_and_the_key_only_in_keys_json(
        provider, fake_class, service, http, isolated, caplog):
    caplog.set_level(logging.DEBUG)
    with fake_class() as fake, pointed_at(provider, site=fake.site, base_url=fake.url):
        fake.set_models(["m-one", "m-two", "m-three"])
        browser = Browser()
        auth = start(browser, service, provider)
        query = parse_qs(urlsplit(auth).query)
        assert auth.startswith(fake.site + "/auth?") and query["code_challenge_method"] == ["S256"]
        assert query["callback_url"][0].startswith(f"{service.url}/connect/{provider}/callback/")
        back = through_auth_page(browser, auth)
        status, headers, _ = browser.get(back)
        result = result_of(http, status, headers)
        assert result["ok"] and result["endpoint"] == provider and "3 models" in result["message"]
        key = fake.issued[0]
        assert keys_json(isolated)[provider] == key
        _, _, listed = http("GET", "/bench/endpoints")
        added = {e["name"]: e for e in listed["endpoints"]}[provider]
        assert added["key_source"] == "keys.json" and added["base_url"] == fake.url and added["served_count"] == 3
        assert fake.last.headers["authorization"] == f"Bearer {key}"       # the models list took the new key

        # the same callback again: the state worked once, and no second exchange reaches the provider
        exchanges = len(fake.exchanges)
        status, _, body = browser.get(back)
        assert status == 400 and "already finished" in body
        assert len(fake.exchanges) == exchanges and len(fake.issued) == 1

        _, _, providers = http("GET", "/bench/connect")
    service.bench.db.sync()
    everything = browser.seen + [json.dumps(listed), json.dumps(providers), json.dumps(result), caplog.text]
    assert not [s for s in everything if key in s]
    assert [p for p in isolated.rglob("*") if p.is_file() and key.encode() in p.read_bytes()] == []


def test_a_state_this_service_did_not_start_is_refused(service, openrouter):
    browser = Browser()
    status, _, body = browser.get(f"{service.url}/connect/openrouter/callback/not-a-state?code=whatever")
    assert status == 400 and "not started by this service" in body
    back = through_auth_page(browser, start(browser, service, "openrouter"))
    state = urlsplit(back).path.rsplit("/", 1)[1]
    status, _, body = browser.get(f"{service.url}/connect/nanogpt/callback/{state}?code=x")   # another provider
    assert status == 400
    assert openrouter.exchanges == []


def test_a_callback_from_another_browser_is_refused_and_the_right_one_still_finishes(service, http, openrouter):
    mine, other = Browser(), Browser()
    back = through_auth_page(mine, start(mine, service, "openrouter"))
    status, _, body = other.get(back)
    assert status == 400 and "another browser" in body and openrouter.exchanges == []
    status, headers, _ = mine.get(back)
    assert result_of(http, status, headers)["ok"]


def test_a_code_for_a_flow_that_expired_is_refused(service, openrouter, isolated, monkeypatch):
    monkeypatch.setattr(flows, "FLOW_SECONDS", 0)       # every flow is expired as soon as it starts
    browser = Browser()
    back = through_auth_page(browser, start(browser, service, "openrouter"))
    status, _, body = browser.get(back)
    assert status == 400 and "expired" in body
    assert openrouter.exchanges == [] and "openrouter" not in keys_json(isolated)


def test_a_code_exchanged_with_the_wrong_verifier_is_refused_by_the_provider(service, http, openrouter, isolated):
    browser = Browser()
    first, second = start(browser, service, "openrouter"), start(browser, service, "openrouter")
    code = parse_qs(urlsplit(through_auth_page(browser, first)).query)["code"][0]
    second_callback = parse_qs(urlsplit(second).query)["callback_url"][0]
    status, headers, _ = browser.get(f"{second_callback}?code={code}")   # flow 1's code, flow 2's verifier
    result = result_of(http, status, headers)
    assert not result["ok"] and "refused the sign-in code" in result["message"]
    assert openrouter.refused and openrouter.issued == [] and "openrouter" not in keys_json(isolated)
    _, _, listed = http("GET", "/bench/endpoints")
    assert listed["endpoints"] == []


def test_the_fake_checks_the_verifier_against_the_challenge(openrouter):
    verifier = "v" * 43
    code = openrouter.new_code(flows.challenge(verifier))
    for sent, expected in (("w" * 43, 403), (verifier, 403)):     # a refused try spends the code, as it should
        conn = http.client.HTTPConnection("127.0.0.1", openrouter.port, timeout=10)
        conn.request("POST", "/api/v1/auth/keys", json.dumps({"code": code, "code_verifier": sent,
                                                              "code_challenge_method": "S256"}),
                     {"Content-Type": "application/json"})
        assert conn.getresponse().status == expected
        conn.close()
    code = openrouter.new_code(flows.challenge(verifier))
    assert flows.exchange_code(vendors.get("openrouter"), code, verifier) == openrouter.issued[0]


def test_the_user_saying_no_adds_nothing(service, http, openrouter, isolated):
    openrouter.deny = True
    browser = Browser()
    status, headers, _ = browser.get(through_auth_page(browser, start(browser, service, "openrouter")))
    result = result_of(http, status, headers)
    assert not result["ok"] and "did not approve" in result["message"]
    assert keys_json(isolated) == {}


def test_nanogpt_state_sent_back_must_match(service):
    with FakeNanoGPT() as fake, pointed_at("nanogpt", site=fake.site, base_url=fake.url):
        browser = Browser()
        back = through_auth_page(browser, start(browser, service, "nanogpt"))
        assert "state=" in back
        status, _, body = browser.get(back.replace("state=", "state=x"))
        assert status == 400 and "does not match" in body and fake.exchanges == []


def test_with_an_admin_token_start_needs_the_session_and_the_callback_needs_only_the_flow(make_service, openrouter,
                                                                                             isolated):
    svc = make_service(admin_token=TOKEN)
    browser = Browser()
    status, _, _ = browser.form(svc, "/connect/openrouter")
    assert status == 401
    status, _, _ = browser.form(svc, "/login", token=TOKEN)
    assert status == 303
    back = through_auth_page(browser, start(browser, svc, "openrouter"))
    # the browser arrives from the provider's site: SameSite=Strict keeps the session cookie off this request
    session = browser.cookies.pop(("bw_session", "/"))
    status, headers, page = browser.get(back)
    to = landed(status, headers)
    assert "set-cookie" not in headers or "bw_csrf" not in headers["set-cookie"]   # the page's own cookie stays
    assert keys_json(isolated)["openrouter"] == openrouter.issued[0]
    status, headers, _ = browser.get(svc.url + to)               # still without the session: the login keeps
    assert status == 303 and headers["location"] == "/login?next=" + to.replace("?", "%3F").replace("=", "%3D")
    browser.cookies[("bw_session", "/")] = session                # the Refresh from our own page sends it
    status, _, page = browser.get(svc.url + to)
    assert status == 200 and "OpenRouter connected: endpoint openrouter serves" in page
    status, _, _ = Browser().get(f"{svc.url}/bench/connect")
    assert status == 401


def test_signing_in_again_replaces_the_key_and_a_name_taken_elsewhere_is_a_conflict(service, http, openrouter,
                                                                                   isolated):
    for _ in range(2):
        browser = Browser()
        browser.get(through_auth_page(browser, start(browser, service, "openrouter")))
    assert len(openrouter.issued) == 2 and keys_json(isolated)["openrouter"] == openrouter.issued[1]
    with FakeOpenAI() as other:
        status, _, _ = http("POST", "/bench/endpoints", {"name": "elsewhere", "base_url": other.url, "no_key": True})
    assert status == 201
    status, message = refused_start(service, "openrouter", name="elsewhere")
    assert status == 409 and "another endpoint name" in message
    back = through_auth_page(browser, start(browser, service, "openrouter", name="second"))
    status, headers, _ = browser.get(back)
    assert result_of(http, status, headers)["endpoint"] == "second"


def test_pollinations_device_sign_in(service, http, isolated):
    with FakePollinations() as fake, pointed_at("pollinations", device_url=fake.device_url,
                                                        base_url=fake.url):
        fake.set_models(["openai", "mistral"])
        waiting = Browser()
        location = start(waiting, service, "pollinations")
        assert location.startswith("/connect/pollinations/wait/")
        status, headers, page = waiting.get(service.url + location)
        user_code = next(iter(fake.pending.values()))["user_code"]
        assert status == 200 and user_code in page and fake.root + "/device" in page and headers["refresh"] == "5"
        assert [r for r in fake.requests if r.path == "/api/device/token"]                      # it asked once, and was told to wait

        approving = Browser()
        location = start(approving, service, "pollinations", name="polli")
        fake.approve_all()
        status, headers, _ = approving.get(service.url + location)
        result = result_of(http, status, headers)
        assert result["ok"] and "expire" in result["message"]
        key = fake.issued[0]
        assert keys_json(isolated)["polli"] == key
        assert not [s for s in waiting.seen + approving.seen + [json.dumps(result)] if key in s]

        denied = Browser()
        location = start(denied, service, "pollinations", name="nope")
        fake.deny_all()
        status, headers, _ = denied.get(service.url + location)
        assert not result_of(http, status, headers)["ok"] and "nope" not in keys_json(isolated)


def test_the_provider_list_and_the_refusals_for_what_cannot_sign_in(service, http):
    status, _, d = http("GET", "/bench/connect")
    entries = {p["id"]: p for p in d["providers"]}
    assert {"openrouter", "nanogpt", "huggingface", "pollinations", "openai", "github", "anthropic", "gemini",
            "ollama"} <= set(entries)
    assert entries["openrouter"]["kind"] == "sign-in" and entries["openrouter"]["start"] == "/connect/openrouter"
    assert entries["huggingface"]["kind"] == "paste" and entries["huggingface"]["start"] is None
    assert entries["ollama"]["kind"] == "local" and entries["ollama"]["start"] is None   # the page's one click
    assert all(p["why"] and p["doc"].startswith("https://") and p["base_url"] for p in d["providers"])
    assert all(p["key_page"] for p in d["providers"] if p["kind"] == "paste")
    status, message = refused_start(service, "huggingface")
    assert status == 400 and "huggingface.co/settings/tokens" in message
    status, message = refused_start(service, "ollama")
    assert status == 400 and "takes no sign-in" in message
    assert refused_start(service, "nobody")[0] == 404
    browser = Browser()
    browser.get(service.url + "/login")
    status, _, _ = browser.post(f"{service.url}/connect/openrouter", {"csrf": browser.cookies[("bw_csrf", "/")]},
                                origin="http://evil.example")
    assert status == 403
    status, _, _ = browser.post(f"{service.url}/connect/openrouter", {"csrf": "not-the-token"}, origin=service.url)
    assert status == 403


def test_a_refused_start_from_the_page_goes_back_with_the_reason(service):
    browser = Browser()
    status, headers, _ = browser.form(service, "/connect/anthropic")
    assert status == 303 and headers["location"] == "/endpoints"
    _, _, page = browser.get(service.url + "/endpoints")
    assert "has no sign-in this service can use" in page


def test_the_endpoints_page_shows_the_result_and_fills_the_paste_form(service, openrouter):
    browser = Browser()
    status, headers, _ = browser.get(through_auth_page(browser, start(browser, service, "openrouter")))
    _, _, page = browser.get(service.url + landed(status, headers))
    assert 'id="signin-result"' in page and "OpenRouter connected: endpoint openrouter serves 2 models" in page
    _, _, page = browser.get(service.url + "/endpoints?signin=forgotten")
    assert "no longer kept" in page
    _, _, page = browser.get(service.url + "/endpoints?paste=huggingface")
    assert 'value="https://router.huggingface.co/v1"' in page and "has no sign-in here" in page
    assert 'href="https://huggingface.co/settings/tokens"' in page
    _, _, page = browser.get(service.url + "/endpoints?name=groq&base_url=https://api.groq.com/openai/v1&api=nope")
    assert 'value="groq"' in page and 'value="https://api.groq.com/openai/v1"' in page
    assert '<option value="openai" selected>' in page


@pytest.mark.parametrize("bad", ["sk-or-v1-\x00injected", "sk-or-v1-" + "a" * 100_000, "sk-or-v1- spaced",
                                 "sk-or-v1-\u00e9t\u00e9"])
def test_a_key_an_exchange_returns_is_held_to_the_pasted_key_rule(service, http, openrouter, isolated, bad):
    """A key holding a NUL or 100 KB long went out as `Authorization: Bearer ...`; it is refused as a pasted one is:
    visible ASCII, at most 512 characters."""
    openrouter.key_prefix = bad
    browser = Browser()
    back = through_auth_page(browser, start(browser, service, "openrouter"))
    result = result_of(http, *browser.get(back)[:2])
    said = result["message"]     # a space is refused by the exchange's own reading, the rest where keys are added
    assert not result["ok"] and ("cannot be used" in said or "without a usable key" in said) and "\x00" not in said
    assert "openrouter" not in keys_json(isolated) and http("GET", "/bench/endpoints")[2]["endpoints"] == []
    assert not [r for r in openrouter.requests if r.path.endswith("/models")]      # the key was sent nowhere


def test_a_pasted_key_past_512_characters_or_outside_visible_ascii_is_refused(service, http):
    for key in ("sk-" + "a" * 510, "sk-\u00e9t\u00e9-0123456789", "sk-\x00abc"):
        status, _, d = http("POST", "/bench/endpoints", {"name": "pasted", "base_url": "http://127.0.0.1:9/v1",
                                                         "key": key})
        assert status == 400 and "cannot be used" in d["error"]["message"], key
