"""Sign-in with the user's own app over real HTTP: the client id (PUT /bench/connect/{provider}/app), Hugging Face's
authorization code with PKCE to the fixed callback, GitHub's device flow (pending, slow_down, expired, denied),
hostile token answers, and the tokens never leaving keys.json."""
from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from benchwarmers.signin import renewal
from tests.fakes.appsignin import FakeGitHub, FakeHuggingFace
from tests.helpers.signin import pointed_at
from tests.test_connect import Browser, keys_json, landed, result_of, start


def use_app(http, provider: str, **body):
    status, _, d = http("PUT", f"/bench/connect/{provider}/app", {"client_id": "my-app", **body})
    assert status == 200, d
    return d


def sent_to(fake, path: str) -> list:
    return [r for r in list(fake.requests) if r.path == path]


def signins(isolated) -> dict:
    path = isolated / "config" / "signins.json"
    return json.loads(path.read_text())["endpoints"] if path.exists() else {}


@pytest.fixture
def hf():
    with FakeHuggingFace() as fake, pointed_at("huggingface", authorize_url=fake.root + "/oauth/authorize",
                                               token_url=fake.root + "/oauth/token", base_url=fake.url):
        fake.set_models(["meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen3-32B"])
        yield fake


@pytest.fixture
def github():
    with FakeGitHub() as fake, pointed_at("github", code_url=fake.root + "/login/device/code",
                                          token_url=fake.root + "/login/oauth/access_token", base_url=fake.url):
        fake.set_models(["openai/gpt-4.1-mini"])
        yield fake


def hf_round_trip(browser: Browser, service, hf) -> tuple:
    auth = start(browser, service, "huggingface")
    status, headers, _ = browser.get(auth)
    assert status == 302, headers
    return browser.get(headers["location"])


def test_the_app_is_set_listed_and_forgotten_and_its_secret_stays_in_keys_json(service, http, isolated):
    _, _, d = http("GET", "/bench/connect")
    hf = {p["id"]: p for p in d["providers"]}["huggingface"]
    assert hf["kind"] == "paste" and hf["start"] is None and hf["app"]["client_id"] is None
    d = use_app(http, "huggingface", client_secret="hf-app-secret-0123456789")
    assert d["provider"]["kind"] == "sign-in" and d["provider"]["start"] == "/connect/huggingface"
    assert d["provider"]["flow"] == "oauth" and d["app"] == {"provider": "huggingface", "client_id": "my-app",
                                                             "client_secret": "keys.json"}
    _, _, listed = http("GET", "/bench/connect")
    assert {p["id"]: p for p in listed["providers"]}["huggingface"]["start"] == "/connect/huggingface"
    assert keys_json(isolated)["huggingface.app-secret"] == "hf-app-secret-0123456789"
    assert [p for p in isolated.rglob("*") if p.is_file() and b"hf-app-secret" in p.read_bytes()] == []
    assert "hf-app-secret" not in json.dumps(listed)
    for bad in ("has space", "x" * 201, "tab\there", 12):
        status, _, err = http("PUT", "/bench/connect/huggingface/app", {"client_id": bad})
        assert status == 400, bad
    assert http("PUT", "/bench/connect/openrouter/app", {"client_id": "x"})[0] == 404
    assert http("PUT", "/bench/connect/github/app", {"client_id": "x", "extra": 1})[0] == 400
    assert http("PUT", "/bench/connect/github/app", {"client_id": None, "client_secret": "orphan-secret"})[0] == 400
    assert "github.app-secret" not in keys_json(isolated)
    status, _, d = http("PUT", "/bench/connect/huggingface/app", {"client_id": None})
    assert status == 200 and d["provider"]["kind"] == "paste" and "huggingface.app-secret" not in keys_json(isolated)


def test_hugging_face_signs_in_with_pkce_to_the_fixed_callback(service, http, isolated, hf):
    use_app(http, "huggingface")
    browser = Browser()
    auth = start(browser, service, "huggingface")
    q = parse_qs(urlsplit(auth).query)
    assert auth.startswith(hf.root + "/oauth/authorize?") and q["client_id"] == ["my-app"]
    assert q["redirect_uri"] == [service.url + "/connect/huggingface/callback"]
    assert "inference-api" in q["scope"][0] and q["code_challenge_method"] == ["S256"]
    status, headers, _ = browser.get(auth)
    back = headers["location"]
    assert back.startswith(service.url + "/connect/huggingface/callback?code=")
    status, headers, _ = browser.get(back)
    result = result_of(http, status, headers)
    assert result["ok"] and result["endpoint"] == "huggingface" and "2 models" in result["message"]
    token = hf.issued[0]
    stored = keys_json(isolated)
    assert stored["huggingface"] == token and stored["huggingface.refresh"].startswith("ref_")
    kept = signins(isolated)["huggingface"]
    assert kept["provider"] == "huggingface" and kept["refreshable"] and kept["expires"] > 0
    status, _, body = browser.get(back)                   # the state worked once
    assert status == 400 and "already finished" in body
    _, _, listed = http("GET", "/bench/endpoints")
    service.bench.db.sync()
    seen = browser.seen + [json.dumps(listed), json.dumps(result)]
    assert not [s for s in seen if token in s or stored["huggingface.refresh"] in s]
    assert [p for p in isolated.rglob("*") if p.is_file() and token.encode() in p.read_bytes()] == []


def test_a_pasted_key_or_removing_the_endpoint_forgets_its_sign_in(service, http, isolated, hf):
    use_app(http, "huggingface")
    for then in ("paste", "remove"):
        status, headers, _ = hf_round_trip(Browser(), service, hf)
        assert result_of(http, status, headers)["ok"]
        assert http("GET", "/bench/endpoints")[2]["endpoints"][0]["signin"]["refreshable"]
        assert "huggingface.refresh" in keys_json(isolated) and "huggingface" in signins(isolated)
        if then == "paste":
            hf.expect_key("hf_pasted_token_0123")
            status, _, d = http("POST", "/bench/endpoints", {"name": "huggingface", "base_url": hf.url,
                                                             "key": "hf_pasted_token_0123", "replace": True})
            assert status == 201 and d["endpoint"]["signin"] is None, d
        else:
            assert http("DELETE", "/bench/endpoints/huggingface")[0] == 200
        assert signins(isolated) == {} and "huggingface.refresh" not in keys_json(isolated)


def test_the_callback_refuses_a_missing_or_foreign_state_another_browser_and_a_denial(service, http, isolated, hf):
    use_app(http, "huggingface")
    browser, other = Browser(), Browser()
    status, _, body = browser.get(service.url + "/connect/huggingface/callback?code=x")
    assert status == 400 and "no state" in body
    status, _, body = browser.get(service.url + "/connect/huggingface/callback?code=x&state=made-up")
    assert status == 400 and "not started by this service" in body
    auth = start(browser, service, "huggingface")
    _, headers, _ = browser.get(auth)
    status, _, body = other.get(headers["location"])
    assert status == 400 and "another browser" in body
    status, headers, _ = browser.get(headers["location"])       # the right browser still finishes
    assert result_of(http, status, headers)["ok"]
    hf.deny = True
    status, headers, _ = hf_round_trip(Browser(), service, hf)
    result = result_of(http, status, headers)
    assert not result["ok"] and "did not approve" in result["message"] and len(hf.issued) == 1


def test_without_an_app_hugging_face_stays_a_pasted_key_with_the_reason(service, http):
    status, headers, _ = Browser().form(service, "/connect/huggingface")
    assert status == 303
    browser = Browser()
    browser.get(service.url + "/login")
    status, _, page = browser.get(service.url + "/endpoints")
    assert 'href="/settings#apps"' in page


@pytest.mark.parametrize("hostile", [{"access_token": "has a space", "expires_in": 3600},
                                     {"access_token": "x" * 513},
                                     {"access_token": 12345},
                                     {"token_type": "bearer"},
                                     {"access_token": "ok_token", "refresh_token": "bad\nrefresh"},
                                     b"<html>Bad Gateway</html>"])
def test_a_hostile_token_answer_adds_nothing(service, http, isolated, hf, hostile):
    use_app(http, "huggingface")
    hf.hostile = hostile
    status, headers, _ = hf_round_trip(Browser(), service, hf)
    result = result_of(http, status, headers)
    assert not result["ok"] and any(w in result["message"] for w in ("usable", "cannot be used", "refused"))
    assert "huggingface" not in keys_json(isolated) and signins(isolated) == {}
    _, _, listed = http("GET", "/bench/endpoints")
    assert listed["endpoints"] == []


def test_an_expiry_that_is_not_a_number_is_no_expiry(service, http, isolated, hf):
    use_app(http, "huggingface")
    hf.hostile = {"access_token": "hf_oauth_plain", "expires_in": "NaN"}
    hf.expect_key("hf_oauth_plain")
    status, headers, _ = hf_round_trip(Browser(), service, hf)
    assert result_of(http, status, headers)["ok"]
    assert keys_json(isolated)["huggingface"] == "hf_oauth_plain" and signins(isolated) == {}


def poll(browser: Browser, service, location: str):
    """One visit to the wait page, as its Refresh makes (the interval is moved back so it asks at once)."""
    flow = next(iter(service.bench.signins._flows.values()), None)
    if flow is not None:
        flow.polled = 0
    return browser.get(service.url + location)


def test_github_device_flow_waits_slows_down_and_finishes(service, http, isolated, github):
    use_app(http, "github")
    browser = Browser()
    location = start(browser, service, "github")
    assert location.startswith("/connect/github/wait/")
    form = parse_qs(sent_to(github, "/login/device/code")[0].raw.decode())
    assert form["client_id"] == ["my-app"]
    github.script = ["pending", "slow_down", "slow_down"]
    status, headers, page = poll(browser, service, location)
    user_code = next(iter(github.pending.values()))["user_code"]
    assert status == 200 and user_code in page and github.root + "/login/device" in page
    assert headers["refresh"] == "5"
    status, headers, page = poll(browser, service, location)
    assert status == 200 and headers["refresh"] == "10"          # slow_down: the wait GitHub asked for
    status, headers, page = poll(browser, service, location)
    assert status == 200 and headers["refresh"] == "15"          # and 5 s more again
    github.approve_all()
    status, headers, _ = poll(browser, service, location)
    result = result_of(http, status, headers)
    assert result["ok"] and result["endpoint"] == "github"
    token = github.issued[0]
    assert keys_json(isolated)["github"] == token and signins(isolated)["github"]["refreshable"]
    sent = parse_qs(sent_to(github, "/login/oauth/access_token")[-1].raw.decode())
    assert sent["grant_type"] == ["urn:ietf:params:oauth:grant-type:device_code"]
    assert not [s for s in browser.seen if token in s]


@pytest.mark.parametrize("ending, words", [("expired", "expired before it was approved"),
                                           ("denied", "denied at the provider")])
def test_github_device_flow_that_expires_or_is_denied_adds_nothing(service, http, isolated, github, ending, words):
    use_app(http, "github")
    browser = Browser()
    location = start(browser, service, "github")
    github.approve_all(ending)
    status, headers, _ = poll(browser, service, location)
    result = result_of(http, status, headers)
    assert not result["ok"] and words in result["message"]
    assert "github" not in keys_json(isolated) and github.issued == []


def test_a_wrong_client_id_is_named_when_the_device_flow_starts(service, http, github):
    http("PUT", "/bench/connect/github/app", {"client_id": "not-mine"})
    browser = Browser()
    status, headers, _ = browser.form(service, "/connect/github")
    assert status == 303 and headers["location"] == "/endpoints"
    _, _, page = browser.get(service.url + "/endpoints")
    assert "did not start a device sign-in" in page and "Check the client id in Settings" in page
    assert service.bench.signins._flows == {} and github.issued == []


def test_the_landing_page_moves_on(service, http, hf):
    use_app(http, "huggingface")
    status, headers, _ = hf_round_trip(Browser(), service, hf)
    assert landed(status, headers).startswith("/endpoints?signin=")
    assert renewal.view(service.bench.config, "huggingface")["provider"] == "huggingface"
