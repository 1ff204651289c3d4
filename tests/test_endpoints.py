"""Endpoints over the admin API: add (checked first, for all four protocols), list, remove, candidates, faults."""
from __future__ import annotations

import json
import socket

import pytest

from benchwarmers.providers import PROVIDERS
from tests.fakes import FAKES
from tests.fakes.canned import Canned

KEY = "sk-test-endpoints-0123456789"


@pytest.fixture
def fakes():
    started = []

    def make(api: str, models=("m-one", "m-two"), key: str | None = KEY):
        fake = FAKES[api]().start().set_models(list(models))
        if key and api != "ollama":
            fake.expect_key(key)
        started.append(fake)
        return fake
    yield make
    for f in started:
        f.stop()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def saved(app) -> dict:
    return json.loads((app.bench.config.path("endpoints.json")).read_text())["endpoints"]


def keys_json(isolated) -> dict:
    path = isolated.parent / "llm" / "keys.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.parametrize("api", sorted(PROVIDERS))
def test_add_each_protocol_checks_by_listing_then_saves(api, app, fakes, isolated):
    fake = fakes(api, models=["alpha-1", "beta-2"])
    body = {"name": f"my-{api}", "base_url": fake.url, "api": api}
    body.update({"no_key": True} if api == "ollama" else {"key": KEY})
    status, _, d = app("POST", "/bench/endpoints", body)
    assert status == 201, d
    e = d["endpoint"]
    assert (e["api"], e["served_count"], sorted(e["sample"])) == (api, 2, ["alpha-1", "beta-2"])
    assert e["key_source"] == ("none" if api == "ollama" else "keys.json")
    assert fake.requests, "the endpoint was asked for its models"
    assert saved(app)[f"my-{api}"]["api"] == api
    if api != "ollama":
        assert keys_json(isolated)[f"my-{api}"] == KEY
        assert KEY not in app.bench.config.path("endpoints.json").read_text()
    status, _, d = app("GET", "/bench/endpoints")
    assert [x["name"] for x in d["endpoints"]] == [f"my-{api}"]
    assert KEY not in json.dumps(d)


def test_wrong_key_saves_nothing_and_says_what_to_do(app, fakes, isolated):
    fake = fakes("openai")
    status, _, d = app("POST", "/bench/endpoints", {"name": "oa", "base_url": fake.url, "key": "sk-wrong-999999999"})
    assert status == 502
    msg = d["error"]["message"]
    assert d["error"]["code"] == "upstream_auth" and "key was refused" in msg and "\n" not in msg
    assert saved(app) == {} and "oa" not in keys_json(isolated)


@pytest.mark.parametrize("case, code, words", [
    ("unreachable", "upstream_connection", "Nothing answered"),
    ("garbage", "upstream_bad_response", "protocol"),
    ("truncated", "upstream_dropped", "try again"),
    ("rate_limited", "upstream_rate_limited", "wait 7 s"),
    ("not_found", "upstream_not_found", "base URL"),
])
def test_faults_give_one_line_and_save_nothing(case, code, words, app, isolated):
    canned = None
    if case == "unreachable":
        url = f"http://127.0.0.1:{closed_port()}/v1"
    else:
        canned = {"garbage": Canned(200, b"<html>Welcome to nginx</html>", {"Content-Type": "text/html"}),
                  "truncated": Canned(200, b'{"data": [{"id": "a"', {"Content-Type": "application/json"}, cut=True),
                  "rate_limited": Canned(429, b'{"error": {"message": "slow down"}}',
                                         {"Content-Type": "application/json", "Retry-After": "7"}),
                  "not_found": Canned(404, b'{"error": {"message": "no such route"}}',
                                      {"Content-Type": "application/json"})}[case]
        url = canned.url
    try:
        status, _, d = app("POST", "/bench/endpoints", {"name": "oa", "base_url": url, "key": KEY})
    finally:
        if canned:
            canned.stop()
    assert status in (502, 504), d
    msg = d["error"]["message"]
    assert d["error"]["code"].startswith(code) and words in msg and "\n" not in msg
    assert "'oa' was not added" in msg
    assert saved(app) == {} and "oa" not in keys_json(isolated)


@pytest.mark.parametrize("body, status, words", [
    ({"name": "bad name!", "base_url": "http://x"}, 400, "not a valid name"),
    ({"name": "ok", "base_url": "ftp://x"}, 400, "not a usable base URL"),
    ({"name": "ok", "base_url": "http://u:p@x"}, 400, "without credentials"),
    ({"name": "ok", "base_url": "http://x", "api": "cohere"}, 400, "Unknown api"),
    ({"name": "ok", "base_url": "http://x"}, 400, "--key-stdin"),
    ({"name": "ok", "base_url": "http://x", "no_key": True, "key": KEY}, 400, "not both"),
    ({"name": "ok", "base_url": "http://x", "key": "sk bad key"}, 400, "spaces"),
])
def test_bad_input_is_refused_before_any_call(body, status, words, app):
    got, _, d = app("POST", "/bench/endpoints", body)
    assert got == status and words in d["error"]["message"], d
    assert saved(app) == {}


def test_key_from_environment_is_used_and_reported(app, fakes, monkeypatch, isolated):
    fake = fakes("openai")
    monkeypatch.setenv("BENCHWARMERS_KEY_ENV_EP", KEY)
    status, _, d = app("POST", "/bench/endpoints", {"name": "env-ep", "base_url": fake.url})
    assert status == 201 and d["endpoint"]["key_source"] == "environment"
    assert keys_json(isolated) == {}
    assert fake.last.headers["authorization"] == f"Bearer {KEY}"


def test_existing_name_conflicts_unless_replace(app, fakes):
    a, b = fakes("openai", models=["one"]), fakes("openai", models=["one", "two"])
    assert app("POST", "/bench/endpoints", {"name": "oa", "base_url": a.url, "key": KEY})[0] == 201
    status, _, d = app("POST", "/bench/endpoints", {"name": "oa", "base_url": b.url, "key": KEY})
    assert status == 409 and "--replace" in d["error"]["message"]
    status, _, d = app("POST", "/bench/endpoints", {"name": "oa", "base_url": b.url, "replace": True})
    assert status == 400 and "keep_key" in d["error"]["message"]       # a new URL: the key is not sent unasked
    status, _, d = app("POST", "/bench/endpoints", {"name": "oa", "base_url": b.url, "replace": True,
                                                    "keep_key": True})
    assert status == 201 and d["endpoint"]["served_count"] == 2 and d["endpoint"]["base_url"] == b.url


def test_remove_retires_its_models_and_restore_needs_it_back(app, fakes):
    fake = fakes("openai", models=["m-one"])
    app("POST", "/bench/endpoints", {"name": "oa", "base_url": fake.url, "key": KEY})
    assert app("POST", "/bench/models", {"served": "m-one", "quick": True})[0] == 201
    status, _, d = app("DELETE", "/bench/endpoints/oa")
    assert status == 200 and d["retired"] == ["m-one"] and "keys.json" in d["note"]
    assert saved(app) == {}
    _, _, m = app("GET", "/bench/models/m-one")
    assert m["model"]["status"] == "retired" and "removed" in m["model"]["reason"]
    status, _, d = app("POST", "/bench/models/m-one/restore")
    assert status == 404 and "bench endpoint add oa" in d["error"]["message"]
    assert app("DELETE", "/bench/endpoints/oa")[0] == 404


def test_candidates_mark_the_bench_and_survive_a_dead_endpoint(app, fakes):
    a, b = fakes("openai", models=["m-one", "m-two"]), fakes("anthropic", models=["claude-x"])
    app("POST", "/bench/endpoints", {"name": "oa", "base_url": a.url, "key": KEY})
    app("POST", "/bench/endpoints", {"name": "an", "base_url": b.url, "api": "anthropic", "key": KEY})
    app("POST", "/bench/models", {"served": "m-one", "alias": "first", "quick": True})
    _, _, d = app("GET", "/bench/candidates")
    got = {(c["endpoint"], c["served"]): c["on_bench"] for c in d["candidates"]}
    assert got == {("oa", "m-one"): "first", ("oa", "m-two"): None, ("an", "claude-x"): None}
    b.stop()
    _, _, d = app("GET", "/bench/candidates?new=1")
    assert [(c["endpoint"], c["served"]) for c in d["candidates"]] == [("oa", "m-two")]
    assert [e["endpoint"] for e in d["errors"]] == ["an"] and d["errors"][0]["error"]


def test_admin_token_is_required_when_set(make_service, fakes):
    from tests.helpers.http import Http
    svc = make_service(admin_token="t" * 24)
    http = Http(svc.url)
    for method, path in (("GET", "/bench/endpoints"), ("GET", "/bench/candidates"), ("GET", "/bench/models"),
                         ("POST", "/bench/endpoints"), ("DELETE", "/bench/endpoints/x"), ("POST", "/bench/models")):
        assert http(method, path, {} if method == "POST" else None)[0] == 401, path
    status, _, d = http("GET", "/bench/endpoints", headers={"Authorization": "Bearer " + "t" * 24})
    assert status == 200 and d == {"endpoints": []}


def test_a_broken_keys_json_refuses_the_endpoint_and_keeps_every_key(app, fakes, isolated):
    fake = fakes("openai")
    path = isolated.parent / "llm" / "keys.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = '{"openai": "sk-llm-own-key-000000",\n "other": 1,,}\n'
    path.write_text(broken, encoding="utf-8")
    status, _, d = app("POST", "/bench/endpoints", {"name": "oa", "base_url": fake.url, "key": KEY})
    assert status == 500 and d["error"]["code"] == "config_error", d
    assert f"{path}:2:" in d["error"]["message"] and KEY not in json.dumps(d)
    assert path.read_text(encoding="utf-8") == broken and saved(app) == {}
