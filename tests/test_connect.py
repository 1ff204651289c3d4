"""Provider sign-in over real HTTP against fake providers: the PKCE key handoff (OpenRouter, NanoGPT), the
device sign-in (Pollinations), a local Ollama, refusals, and the key never leaving keys.json."""
from __future__ import annotations

import http.client
import json
import logging
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from benchwarmers import connect, signin
from fakes import FakeOllama, FakeOpenAI
from fakes.signin import FakeNanoGPT, FakeOpenRouter, FakePollinations

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


def keys_json(isolated) -> dict:
    path = isolated.parent / "llm" / "keys.json"
    return json.loads(path.read_text()) if path.exists() else {}


def start(browser: Browser, service, provider: str, **form):
    status, headers, body = browser.post(f"{service.url}/connect/{provider}", form, origin=service.url)
    assert status == 303, body
    return headers["location"]


def through_auth_page(browser: Browser, auth_url: str) -> str:
    """The fake's auth page approves and sends the browser back: the callback URL with the code."""
    status, headers, _ = browser.get(auth_url)
    assert status == 302
    return headers["location"]


def result_of(http, location: str) -> dict:
    assert location.startswith("/?signin=")
    status, _, d = http("GET", "/bench/connect?result=" + location.split("=", 1)[1])
    assert status == 200
    return d["result"]


@pytest.fixture
def openrouter():
    with FakeOpenRouter() as fake, connect.pointed_at("openrouter", site=fake.site, base_url=fake.url):
        fake.set_models(["or-one", "or-two"])
        yield fake


@pytest.mark.parametrize("provider, fake_class", [("openrouter", FakeOpenRouter), ("nanogpt", FakeNanoGPT)])
def test_the_handoff_round_trip_adds_the_endpoint_and_the_key_only_in_keys_json(
        provider, fake_class, service, http, isolated, caplog):
    caplog.set_level(logging.DEBUG)
    with fake_class() as fake, connect.pointed_at(provider, site=fake.site, base_url=fake.url):
        fake.set_models(["m-one", "m-two", "m-three"])
        browser = Browser()
        auth = start(browser, service, provider)
        query = parse_qs(urlsplit(auth).query)
        assert auth.startswith(fake.site + "/auth?") and query["code_challenge_method"] == ["S256"]
        assert query["callback_url"][0].startswith(f"{service.url}/connect/{provider}/callback/")
        back = through_auth_page(browser, auth)
        status, headers, _ = browser.get(back)
        assert status == 303
        result = result_of(http, headers["location"])
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
    service.ctx.db.sync()
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
    assert status == 303 and result_of(http, headers["location"])["ok"]


def test_a_code_for_a_flow_that_expired_is_refused(service, openrouter, isolated, monkeypatch):
    monkeypatch.setattr(signin, "FLOW_SECONDS", 0)       # every flow is expired as soon as it starts
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
    result = result_of(http, headers["location"])
    assert status == 303 and not result["ok"] and "refused the sign-in code" in result["message"]
    assert openrouter.refused and openrouter.issued == [] and "openrouter" not in keys_json(isolated)
    _, _, listed = http("GET", "/bench/endpoints")
    assert listed["endpoints"] == []


def test_the_fake_checks_the_verifier_against_the_challenge(openrouter):
    verifier = "v" * 43
    code = openrouter.new_code(signin.challenge(verifier))
    for sent, expected in (("w" * 43, 403), (verifier, 403)):     # a refused try spends the code, as it should
        conn = http.client.HTTPConnection("127.0.0.1", openrouter.port, timeout=10)
        conn.request("POST", "/api/v1/auth/keys", json.dumps({"code": code, "code_verifier": sent,
                                                              "code_challenge_method": "S256"}),
                     {"Content-Type": "application/json"})
        assert conn.getresponse().status == expected
        conn.close()
    code = openrouter.new_code(signin.challenge(verifier))
    assert signin.exchange_code(connect.get("openrouter"), code, verifier) == openrouter.issued[0]


def test_the_user_saying_no_adds_nothing(service, http, openrouter, isolated):
    openrouter.deny = True
    browser = Browser()
    status, headers, _ = browser.get(through_auth_page(browser, start(browser, service, "openrouter")))
    result = result_of(http, headers["location"])
    assert status == 303 and not result["ok"] and "did not approve" in result["message"]
    assert keys_json(isolated) == {}


def test_nanogpt_state_sent_back_must_match(service):
    with FakeNanoGPT() as fake, connect.pointed_at("nanogpt", site=fake.site, base_url=fake.url):
        browser = Browser()
        back = through_auth_page(browser, start(browser, service, "nanogpt"))
        assert "state=" in back
        status, _, body = browser.get(back.replace("state=", "state=x"))
        assert status == 400 and "does not match" in body and fake.exchanges == []


def test_with_an_admin_token_start_needs_the_session_and_the_callback_needs_only_the_flow(make_service, openrouter,
                                                                                             isolated):
    svc = make_service(admin_token=TOKEN)
    browser = Browser()
    status, _, _ = browser.post(f"{svc.url}/connect/openrouter", origin=svc.url)
    assert status == 401
    status, _, _ = browser.post(f"{svc.url}/login", {"token": TOKEN}, origin=svc.url)
    assert status == 303
    back = through_auth_page(browser, start(browser, svc, "openrouter"))
    # the browser arrives from the provider's site: SameSite=Strict keeps the session cookie off this request
    browser.cookies = {k: v for k, v in browser.cookies.items() if k[0] != "bw_session"}
    status, headers, _ = browser.get(back)
    assert status == 303 and headers["location"].startswith("/?signin=")
    assert keys_json(isolated)["openrouter"] == openrouter.issued[0]
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
    status, _, body = Browser().post(f"{service.url}/connect/openrouter", {"name": "elsewhere"}, origin=service.url)
    assert status == 409 and "another endpoint name" in body
    back = through_auth_page(browser, start(browser, service, "openrouter", name="second"))
    status, headers, _ = browser.get(back)
    assert result_of(http, headers["location"])["endpoint"] == "second"


def test_pollinations_device_sign_in(service, http, isolated):
    with FakePollinations() as fake, connect.pointed_at("pollinations", device_url=fake.device_url,
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
        result = result_of(http, headers["location"])
        assert status == 303 and result["ok"] and "expire" in result["message"]
        key = fake.issued[0]
        assert keys_json(isolated)["polli"] == key
        assert not [s for s in waiting.seen + approving.seen + [json.dumps(result)] if key in s]

        denied = Browser()
        location = start(denied, service, "pollinations", name="nope")
        fake.deny_all()
        status, headers, _ = denied.get(service.url + location)
        assert not result_of(http, headers["location"])["ok"] and "nope" not in keys_json(isolated)


def test_a_local_ollama_is_added_in_one_post(service, http):
    with FakeOllama() as fake, connect.pointed_at("ollama", base_url=fake.root):
        fake.set_models(["llama3.2"])
        status, headers, _ = Browser().post(f"{service.url}/connect/ollama", origin=service.url)
        result = result_of(http, headers["location"])
        assert status == 303 and result["ok"]
        _, _, listed = http("GET", "/bench/endpoints")
        assert [(e["name"], e["api"], e["key_source"]) for e in listed["endpoints"]] == [("ollama", "ollama", "none")]


def test_the_provider_list_and_the_refusals_for_what_cannot_sign_in(service, http):
    status, _, d = http("GET", "/bench/connect")
    entries = {p["id"]: p for p in d["providers"]}
    assert {"openrouter", "nanogpt", "huggingface", "pollinations", "openai", "github", "anthropic", "gemini",
            "ollama"} <= set(entries)
    assert entries["openrouter"]["kind"] == "sign-in" and entries["openrouter"]["start"] == "/connect/openrouter"
    assert entries["huggingface"]["kind"] == "paste" and entries["huggingface"]["start"] is None
    assert all(p["why"] and p["doc"].startswith("https://") and p["base_url"] for p in d["providers"])
    assert all(p["key_page"] for p in d["providers"] if p["kind"] == "paste")
    status, _, body = Browser().post(f"{service.url}/connect/huggingface", origin=service.url)
    assert status == 400 and "huggingface.co/settings/tokens" in body
    status, _, _ = Browser().post(f"{service.url}/connect/nobody", origin=service.url)
    assert status == 404
    status, _, _ = Browser().post(f"{service.url}/connect/openrouter", origin="http://evil.example")
    assert status == 403
