"""SSRF and key exfiltration: the stored key never follows a changed base URL unasked; route mode forwards only the
fields each API's allow-list names; a key an upstream echoes is redacted; a canary key shows up on no route."""
from __future__ import annotations

import json

import pytest

from benchwarmers import keys
from tests.fakes import FakeAnthropic, FakeGemini, FakeOpenAI, Reply
from tests.helpers.data import configure
from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data, concrete, keyed_endpoint, label, routes

KEY = "sk-canary-EXFIL-0123456789abcdef"


# ---- a changed base URL ----------------------------------------------------------------------------

def test_a_changed_base_url_needs_the_key_again(home, make_app):
    with FakeOpenAI() as real, FakeOpenAI() as thief:
        real.expect_key(KEY)
        app = make_app()
        status, _, made = app("POST", "/bench/endpoints", {"name": "up", "base_url": real.url, "key": KEY})
        assert status == 201, made
        status, _, reply = app("POST", "/bench/endpoints", {"name": "up", "base_url": thief.url, "replace": True})
        assert status == 400 and "keep_key" in reply["error"]["message"], reply
        assert not thief.requests                                    # the thief never heard of it
        assert app.bench.registry.endpoint("up").base_url == real.url.rstrip("/")
        # said explicitly, it may follow; a new key given with the change needs no confirmation
        assert app("POST", "/bench/endpoints", {"name": "up", "base_url": thief.url, "replace": True,
                                                "keep_key": True})[0] == 201
        assert thief.requests[-1].headers["authorization"] == f"Bearer {KEY}"
        assert app("POST", "/bench/endpoints", {"name": "up", "base_url": real.url, "replace": True,
                                                "key": KEY})[0] == 201


def test_the_same_base_url_keeps_its_key_without_asking(home, make_app):
    with FakeOpenAI() as real:
        app = make_app()
        assert app("POST", "/bench/endpoints", {"name": "up", "base_url": real.url, "key": KEY})[0] == 201
        assert app("POST", "/bench/endpoints", {"name": "up", "base_url": real.url + "/", "api": "openai",
                                                "replace": True})[0] == 201


# ---- route mode's pass-through ---------------------------------------------------------------------

def route_app(home, make_app, fake, api: str):
    configure(home, {"up": (fake, api)}, {"m": ("up", "m-s", {"tools": True})},
              {"core": {"members": ["m"], "explore": 0}})
    return make_app()


CASES = {
    "openai": (FakeOpenAI, "/v1/chat/completions",
               {"model": "bench/core:route", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.5,
                "models": ["openai/gpt-5-pro"], "provider": {"allow_fallbacks": True}, "n": 50,
                "service_tier": "priority", "route": "fallback", "plugins": [{"id": "web"}], "store": True,
                "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
                          {"type": "web_search"}]},
               {"temperature", "messages", "tools"}, {"models", "provider", "n", "service_tier", "route", "plugins",
                                                      "store"}),
    "anthropic": (FakeAnthropic, "/v1/messages",
                  {"model": "bench/core:route", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}],
                   "thinking": {"type": "enabled", "budget_tokens": 1024},
                   "mcp_servers": [{"type": "url", "url": "https://mcp.example", "name": "x"}],
                   "container": "cntr_1", "service_tier": "auto",
                   "tools": [{"name": "f", "input_schema": {"type": "object"}},
                             {"type": "web_search_20250305", "name": "web_search"},
                             {"type": "code_execution_20250522", "name": "code_execution"}]},
                  {"thinking", "messages", "tools"}, {"mcp_servers", "container", "service_tier"}),
    "gemini": (FakeGemini, "/v1beta/models/bench/core:route:generateContent",
               {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "cachedContent": "cachedContents/x",
                "generationConfig": {"temperature": 0.2, "candidateCount": 8},
                "tools": [{"functionDeclarations": [{"name": "f"}]}, {"googleSearch": {}}]},
               {"contents", "tools"}, {"cachedContent"}),
}


@pytest.mark.parametrize("api", sorted(CASES))
def test_route_mode_forwards_only_the_allow_list_and_records_the_rest(home, make_app, api):
    fake_cls, path, body, kept, dropped = CASES[api]
    with fake_cls() as fake:
        app = route_app(home, make_app, fake, api)
        status, headers, reply = app("POST", path, body)
        assert status == 200, reply
        sent = fake.requests[-1].body
        assert kept <= set(sent) and not dropped & set(sent), sorted(sent)
        tools = json.dumps(sent.get("tools"))
        assert "web_search" not in tools and "code_execution" not in tools and "googleSearch" not in tools
        if api == "gemini":
            assert "candidateCount" not in json.dumps(sent.get("generationConfig"))
        record = app.bench.calls.get(headers["x-bench-call"])
        noted = " ".join(record.extra["dropped"])
        assert all(name in noted for name in dropped), noted


# ---- a key echoed back -----------------------------------------------------------------------------

@pytest.mark.parametrize("stream", [False, True])
def test_a_key_an_upstream_echoes_in_an_answer_is_redacted(home, make_app, monkeypatch, stream):
    monkeypatch.setenv("BENCHWARMERS_KEY_UP", KEY)
    with FakeOpenAI() as fake:
        fake.expect_key(KEY)
        fake.script("*", Reply(text=f"Your key is {KEY}, and again: {KEY}.", chunk_chars=5))
        configure(home, {"up": (fake, "openai")}, {"m": ("up", "m-s")}, {"core": {"members": ["m"], "explore": 0}})
        keyed_endpoint(home, "up")
        app = make_app()
        for model in ("bench/core", "bench/core:route"):
            status, _, reply = app("POST", "/v1/chat/completions", {"model": model, "stream": stream, "messages": [
                {"role": "user", "content": "what is my key?"}]})
            assert status == 200
            text = json.dumps(reply) if not isinstance(reply, str) else reply
            assert KEY not in text and "[redacted]" in text, text[:400]
        app.bench.db.sync()
        leaked = app.bench.db.query("SELECT id FROM calls WHERE answer LIKE ?", (f"%{KEY}%",))
        assert not leaked


# ---- a canary on every route -----------------------------------------------------------------------

@pytest.mark.parametrize("route", routes(), ids=label)
def test_a_canary_key_reaches_no_response(home, fake, make_app, route):
    """The provider key sits in keys.json; every route, asked with an admin token, answers without it."""
    bench_data(home, fake)
    keyed_endpoint(home)
    keys.store("fake", KEY)
    fake.expect_key(KEY)
    app = make_app(admin_token=TOKEN)
    body = {"name": "core", "model": "bench/core", "messages": [{"role": "user", "content": "hi"}],
            "contents": [{"parts": [{"text": "hi"}]}], "prompt": "hi", "input": "hi", "served": "m-a"}
    status, headers, reply = app(route.method, concrete(route), body if route.method != "GET" else None,
                                 headers=ADMIN_HEADERS)
    assert KEY not in json.dumps(reply) + json.dumps(headers), label(route)


def test_gateway_md_lists_exactly_what_passes_through():
    """The allow-list is documented: each API's row in GATEWAY.md names every field the code lets through."""
    from pathlib import Path
    from benchwarmers.providers import PROVIDERS
    doc = (Path(__file__).resolve().parent.parent.parent / "GATEWAY.md").read_text(encoding="utf-8")
    doc = doc[doc.index("**What passes through.**"):]
    rows = {"openai": "| OpenAI chat completions |", "anthropic": "| Anthropic Messages |", "gemini": "| Gemini |",
            "ollama": "| Ollama chat |"}
    for api, start in rows.items():
        allowed = PROVIDERS[api].passthrough_fields
        row = next(line for line in doc.splitlines() if line.startswith(start))
        passed = row.split("|")[2]
        named = {name for name in allowed if f"`{name}`" in passed}
        snake = {n for n in allowed - named if "_" in n and api == "gemini"}   # "(and their snake_case names)"
        assert named | snake == allowed, (api, allowed - named - snake)


# ---- a key pasted into a prompt --------------------------------------------------------------------

PASTED = "sk-pasted-FIRST-0123456789abcdef"
SPARE = "spare-key-from-keys-json-0123456789"


def served_texts(svc, panel: str) -> str:
    """What the record serves of one panel: its history item, each seat's call, and its dashboard page."""
    from tests.helpers.dashboard import Session
    from tests.helpers.http import Http
    http = Http(svc.url)
    status, _, item = http("GET", f"/bench/history/{panel}")
    assert status == 200, item
    calls = [http("GET", f"/bench/calls/{s['call']}")[2] for s in item["seats"]]
    page = Session(svc.url).get(f"/calls/{panel}")[2]
    return json.dumps([item, calls]) + page


def test_a_key_pasted_into_the_first_prompt_after_a_start_is_not_recorded(home, fake, make_service, monkeypatch):
    """Keys were learnt only once their endpoint was used: one pasted before that was stored and served in clear."""
    bench_data(home, fake)
    monkeypatch.setenv("BENCHWARMERS_KEY_ELSEWHERE", PASTED)      # no endpoint uses these two yet
    keys.store("spare", SPARE)
    from benchwarmers import redaction
    redaction._known.clear()                                      # as a fresh process knows nothing
    svc = make_service()
    from tests.helpers.http import Http
    status, _, reply = Http(svc.url)("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": f"why do {PASTED} and {SPARE} fail?"}]})
    assert status == 200
    served = served_texts(svc, reply["bench"]["panel"])
    assert PASTED not in served and SPARE not in served and "[redacted]" in served
    svc.bench.db.sync()
    for table in ("calls", "panels"):
        assert not svc.bench.db.query(f"SELECT 1 FROM {table} WHERE request LIKE ? OR request LIKE ?",
                                      (f"%{PASTED}%", f"%{SPARE}%"))


def test_a_key_recorded_before_it_was_known_is_redacted_as_it_is_read(home, fake, make_service, monkeypatch):
    """A record written in clear (before the key was set) is served without it once the key is known."""
    bench_data(home, fake)
    first = make_service()
    from tests.helpers.http import Http
    status, _, reply = Http(first.url)("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": f"my key {PASTED} fails"}]})      # the fake echoes it in its answer too
    assert status == 200 and PASTED in json.dumps(reply)
    panel = reply["bench"]["panel"]
    first.bench.db.sync()
    first.stop()
    monkeypatch.setenv("BENCHWARMERS_KEY_LATER", PASTED)
    served = served_texts(make_service(), panel)
    assert PASTED not in served and served.count("[redacted]") >= 3


# ---- link-local and cloud metadata addresses ---------------------------------------------------------

METADATA_SPELLINGS = ["http://169.254.169.254/latest/meta-data", "http://2852039166/v1", "http://0xa9fea9fe/v1",
                      "http://0251.0376.0251.0376/v1", "http://[::ffff:169.254.169.254]/v1", "http://[fd00:ec2::254]/v1",
                      "http://[fe80::1]:9/v1", "http://metadata.google.internal/computeMetadata/v1",
                      "http://100.100.100.200/latest", "http://169.254.10.20:8080/v1"]


@pytest.mark.parametrize("base", METADATA_SPELLINGS)
def test_a_link_local_or_metadata_base_url_is_refused_unless_allowed(service, base):
    """An endpoint at the cloud metadata address (offered by a catalog, or typed) would get the key and its answers
    shown; loopback and private ranges stay allowed, as local model servers are the point."""
    from tests.helpers.http import Http
    status, _, d = Http(service.url)("POST", "/bench/endpoints", {"name": "metal", "base_url": base, "no_key": True})
    assert status == 400 and "allow_link_local" in d["error"]["message"], d
    assert not service.bench.registry.endpoints()


def test_allowed_explicitly_a_link_local_base_url_is_tried(service):
    from tests.helpers.http import Http
    http = Http(service.url)
    status, _, d = http("POST", "/bench/endpoints", {"name": "metal", "base_url": "http://[fe80::1]:9/v1",
                                                     "no_key": True, "allow_link_local": True})
    assert status >= 400 and "is refused" not in d["error"]["message"] and "listing its models failed" in \
        d["error"]["message"]                                   # it got past the check: nothing answers there
    assert http("POST", "/bench/endpoints", {"name": "metal", "base_url": "http://[fe80::1]:9/v1",
                                             "allow_link_local": "yes"})[0] == 400
    for base in ("http://127.0.0.2:9/v1", "http://10.1.2.3:9/v1", "http://192.168.0.9:9/v1"):
        status, _, d = http("POST", "/bench/endpoints", {"name": "lan", "base_url": base, "no_key": True},
                            timeout=60)
        assert "is refused" not in json.dumps(d), base


def test_a_name_that_resolves_to_a_metadata_address_is_refused(service, monkeypatch):
    import socket
    real = socket.getaddrinfo

    def resolve(host, *args, **kw):
        if host == "models.rebound.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 443))]
        return real(host, *args, **kw)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    from tests.helpers.http import Http
    status, _, d = Http(service.url)("POST", "/bench/endpoints", {"name": "rebound", "no_key": True,
                                                                 "base_url": "https://models.rebound.example/v1"})
    assert status == 400 and "resolves to 169.254.169.254" in d["error"]["message"], d


def test_the_cli_and_the_dashboard_form_say_how_to_allow_one(service, tmp_path):
    from tests.helpers.dashboard import Session
    from tests.security.attack import cli
    done = cli(service.url, "endpoint", "add", "metal", "--base", "http://169.254.169.254/v1", "--no-key")
    assert done.returncode != 0 and b"--allow-link-local" in done.stderr
    done = cli(service.url, "endpoint", "add", "metal", "--base", "http://[fe80::1]:9/v1", "--no-key",
               "--allow-link-local")
    assert done.returncode != 0 and b"is refused" not in done.stderr and b"listing its models failed" in done.stderr
    browser = Session(service.url)
    form = {"name": "metal", "base_url": "http://169.254.169.254/v1", "no_key": "1"}
    status, headers, _ = browser.form("/endpoints/add", form)
    page = browser.get(headers["location"])[2]
    assert status == 303 and "is refused" in page and 'name="allow_link_local"' in page and "data-confirm=" in page
    status, _, d = browser.form("/endpoints/add", {**form, "base_url": "http://[fe80::1]:9/v1",
                                                   "allow_link_local": "1"}, script=True)
    assert status >= 400 and "listing its models failed" in d["error"]["message"]


# ---- a model listed under its key ------------------------------------------------------------------

def test_a_model_listed_under_a_name_that_is_its_key_is_neither_shown_nor_registered(home, make_service,
                                                                                     monkeypatch):
    """An upstream that listed a model under its own key got the key shown on the Onboard page and stored."""
    from tests.helpers.http import Http
    monkeypatch.setenv("BENCHWARMERS_KEY_UP", KEY)
    with FakeOpenAI() as fake:
        fake.expect_key(KEY)
        fake.set_models(["m-real", KEY, f"prefix-{KEY}"])
        configure(home, {"up": (fake, "openai")}, {})
        keyed_endpoint(home, "up")
        svc = make_service()
        http = Http(svc.url)
        status, _, found = http("GET", "/bench/candidates")
        assert status == 200 and "m-real" in json.dumps(found) and KEY not in json.dumps(found)
        status, _, tested = http("POST", "/bench/endpoints/up/test", {})
        assert status == 200 and tested["endpoint"]["sample"] == ["m-real"]
        for served in (KEY, f"prefix-{KEY}"):
            status, _, refused = http("POST", "/bench/models", {"served": served, "endpoint": "up"})
            assert status == 400 and "holds a provider key" in refused["error"]["message"], refused
        status, _, refused = http("POST", "/bench/models", {"served": "m-real", "endpoint": "up", "alias": KEY})
        assert status == 400
        assert KEY not in (home / "config" / "models.json").read_text(encoding="utf-8")
