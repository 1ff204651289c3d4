"""The catalog at work: seating and route mode read its facts, roles fit purposes, paid turns are held."""
from __future__ import annotations

import io
import json

import pytest

from benchwarmers.cli.main import main
from tests.fakes import FakeOpenAI
from tests.fakes.server import Reply
from tests.helpers.catalog import catalog_host, install_samples, map_endpoints  # noqa: F401 (fixture)
from tests.helpers.dashboard import Session
from tests.helpers.data import configure, write
from tests.helpers.http import Http

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
IMAGE = [{"type": "text", "text": "What is in this picture?"},
         {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]


@pytest.fixture
def fake():
    f = FakeOpenAI().start()
    yield f
    f.stop()


def served_calls(fake, served: str) -> list:
    return [r for r in fake.requests if isinstance(r.body, dict) and r.body.get("model") == served]


def ask(http, model: str, content="Review this.", **extra):
    return http("POST", "/v1/chat/completions", {"model": model, "messages": [{"role": "user", "content": content}],
                                                 **extra})


def test_route_mode_skips_a_member_the_catalog_says_cannot_see(home, fake, make_service):
    # 'blind' has no vision fact of its own; the catalog (models.dev, Groq) says its model reads text only
    configure(home, {"gq": (fake, "openai"), "plain": (fake, "openai")},
              {"blind": ("gq", "openai/gpt-oss-120b", {"tools": True}),
               "eyes": ("plain", "m-eyes", {"tools": True, "vision": True})},
              {"core": {"members": ["blind", "eyes"], "explore": 0}})
    map_endpoints(home, {"gq": "groq"})
    http = Http(make_service().url)
    status, headers, data = ask(http, "bench/core:route", IMAGE)
    assert status == 200, data
    assert headers["x-bench-model"] == "eyes"
    assert served_calls(fake, "openai/gpt-oss-120b") == []
    status, headers, _ = ask(http, "bench/core:route", "no image here", user="someone-else")
    assert status == 200 and headers["x-bench-model"] in ("blind", "eyes")


def test_explore_seats_go_only_to_models_fit_for_the_purpose(home, fake, make_service):
    configure(home, {"oa": (fake, "openai"), "plain": (fake, "openai")},
              {"a": ("plain", "m-a"), "painter": ("oa", "gpt-image-1-mini"), "writer": ("plain", "m-writer")},
              {"core": {"members": ["a"], "explore": 1, "purpose": "review"}})
    map_endpoints(home, {"oa": "openai"})
    install_samples(home)
    http = Http(make_service().url)
    for _ in range(2):     # the second time the painter has waited longest, so it is looked at first
        status, _, data = ask(http, "bench/core")
        assert status == 200, data
        assert [s["model"] for s in data["bench"]["seats"]] == ["a", "writer"]
    assert {"model": "painter", "reason": "role image does not fit purpose 'review'"} in data["bench"]["passed_over"]
    assert served_calls(fake, "gpt-image-1-mini") == []
    status, _, data = http("PUT", "/bench/models/painter/roles", {"roles": ["general"]})
    assert status == 200 and data["model"]["catalog"]["roles"] == ["general"]
    assert data["model"]["catalog"]["roles_set_by"] == "user"
    status, _, data = ask(http, "bench/core")
    assert [s["model"] for s in data["bench"]["seats"]] == ["a", "painter"]


def test_a_free_model_whose_price_turns_up_is_held_until_confirmed(home, fake, make_service, catalog_host, capsys):
    configure(home, {"or": (fake, "openai")}, {"a": ("or", "m-a"), "coder": ("or", "qwen/qwen3-coder:free")},
              {"core": {"members": ["a"], "explore": 1}})
    map_endpoints(home, {"or": "openrouter"})
    svc = make_service()
    http = Http(svc.url)
    status, _, d = http("POST", "/bench/catalog/refresh", {})
    assert status == 200 and d["held"] == []
    sample = json.loads(catalog_host.body["/api.json"])
    sample["openrouter"]["models"]["qwen/qwen3-coder:free"]["cost"] = {"input": 0.5, "output": 1.0}
    catalog_host.body["/api.json"] = json.dumps(sample).encode()
    status, _, d = http("POST", "/bench/catalog/refresh", {})
    assert [h["model"] for h in d["held"]] == ["coder"]
    reason = d["held"][0]["reason"]
    assert "now costs $0.5 in / $1 out per million tokens (models.dev/openrouter)" in reason
    status, _, d = http("GET", "/bench/status")
    assert d["held"][0]["model"] == "coder"
    home_page = Session(svc.url)
    status, _, page = home_page.get("/")
    assert status == 200 and 'id="held"' in page and 'href="/models/coder"' in page
    assert "it was free and now costs" in page
    assert 'action="/held/coder/confirm"' in page and "bench model confirm NAME" in page
    status, _, data = ask(http, "bench/core")
    assert [s["model"] for s in data["bench"]["seats"]] == ["a"]
    assert any(p["model"] == "coder" and p["reason"].startswith("held: it was free")
               for p in data["bench"]["passed_over"])
    status, _, d = http("POST", "/bench/models/coder/probe")
    assert status == 409 and d["error"]["code"] == "model_held"
    assert served_calls(fake, "qwen/qwen3-coder:free") == []
    status, _, d = http("GET", "/bench/models/coder")
    assert d["model"]["status"] == "held" and d["model"]["status_text"].startswith("held: it was free")
    assert main(["--url", svc.url, "status"]) == 0
    assert "Held: coder: it was free" in capsys.readouterr().out
    status, headers, _ = home_page.form("/held/coder/confirm", {})        # accepted from Home, back on Home
    assert status == 303 and headers["location"] == "/"
    _, _, page = home_page.get("/")
    assert "Accepted the new price of coder: it is active" in page and 'id="held"' not in page
    assert http("GET", "/bench/models/coder")[2]["model"]["status"] == "active"
    status, _, d = http("GET", "/bench/status")
    assert d["held"] == []
    status, _, data = ask(http, "bench/core")
    assert [s["model"] for s in data["bench"]["seats"]] == ["a", "coder"]
    status, _, d = http("POST", "/bench/models/coder/confirm")
    assert status == 409 and d["error"]["code"] == "not_held"


def test_a_served_name_that_loses_free_is_held(home, fake, make_service):
    configure(home, {"hub": (fake, "openai")}, {"m": ("hub", "vendor/model:free")})
    map_endpoints(home, {"hub": "some-hub"})          # a provider the catalog has no prices for
    http = Http(make_service().url)
    assert http("GET", "/bench/status")[2]["held"] == []
    write(home, "models.json", {"models": {"m": {"endpoint": "hub", "served": "vendor/model", "facts": {}}}})
    held = http("GET", "/bench/status")[2]["held"]
    assert held and held[0]["reason"] == "its served name lost ':free' (vendor/model:free -> vendor/model)"
    # free again (a zero price of your own): released without a confirmation
    status, _, _ = http("PUT", "/bench/models/m/facts", {"price_in": 0, "price_out": 0})
    assert status == 200 and http("GET", "/bench/status")[2]["held"] == []


def test_probe_all_skips_a_held_model(home, fake, app):
    configure(home, {"hub": (fake, "openai")}, {"m": ("hub", "vendor/model:free"), "other": ("hub", "m-other")})
    map_endpoints(home, {"hub": "some-hub"})
    assert app.bench.catalog.holds() == []            # first sight: 'm' is free
    write(home, "models.json", {"models": {"m": {"endpoint": "hub", "served": "vendor/model"},
                                           "other": {"endpoint": "hub", "served": "m-other"}}})
    assert [h["model"] for h in app.bench.catalog.holds()] == ["m"]
    results = app.bench.health.probe_all()
    assert [r["model"] for r in results] == ["other"]
    assert served_calls(fake, "vendor/model") == []


def test_each_fact_shows_its_source_and_your_own_facts_win(home, fake, make_service):
    fake.set_models([{"id": "openai/gpt-oss-120b", "context_length": 8192}])
    configure(home, {"gq": (fake, "openai")}, {"oss": ("gq", "openai/gpt-oss-120b", {"context_window": 8192})})
    map_endpoints(home, {"gq": "groq"})
    http = Http(make_service().url)
    status, _, d = http("GET", "/bench/models/oss")
    facts = d["model"]["catalog"]["facts"]
    assert d["model"]["catalog"]["provider"] == "groq" and d["model"]["facts"] == {"context_window": 8192}
    assert facts["context_window"] == {"value": 131072, "source": "models.dev/groq"}
    assert facts["price_out"] == {"value": 0.6, "source": "models.dev/groq"}
    status, _, d = http("PUT", "/bench/models/oss/facts", {"context_window": 64000, "vision": True})
    facts = d["model"]["catalog"]["facts"]
    assert facts["context_window"] == {"value": 64000, "source": "override"} and facts["vision"]["value"] is True
    status, _, d = http("PUT", "/bench/models/oss/facts", {"context_window": None})
    assert d["model"]["catalog"]["facts"]["context_window"]["source"] == "models.dev/groq"
    status, _, d = http("GET", "/bench/models")
    assert d["models"][0]["catalog"]["facts"]["vision"]["source"] == "override"
    status, _, d = http("GET", "/bench/candidates")
    row = d["candidates"][0]
    assert row["catalog"]["provider"] == "groq" and row["catalog"]["facts"]["tools"]["source"] == "models.dev/groq"


def test_the_models_passed_over_are_kept_with_the_panel_shown_on_its_page_and_printed(home, fake, make_service,
                                                                                      capsys, monkeypatch):
    configure(home, {"oa": (fake, "openai"), "plain": (fake, "openai")},
              {"a": ("plain", "m-a"), "painter": ("oa", "gpt-image-1-mini")},
              {"core": {"members": ["a"], "explore": 1, "purpose": "review"}})
    map_endpoints(home, {"oa": "openai"})
    install_samples(home)
    svc = make_service()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))                 # nothing piped in
    assert main(["--url", svc.url, "ask", "core", "Review this."]) == 0
    why = "role image does not fit purpose 'review'"
    assert f"passed over for an explore seat: painter ({why})" in capsys.readouterr().err
    http = Http(svc.url)
    panel = http("GET", "/bench/history")[2]["items"][0]["id"]
    assert http("GET", f"/bench/history/{panel}")[2]["passed_over"] == [{"model": "painter", "reason": why}]
    page = Session(svc.url).get(f"/calls/{panel}")[2]
    passed = page[page.index("Passed over for an explore seat"):]
    assert 'href="/models/painter"' in passed and "role image does not fit purpose &#x27;review&#x27;" in passed
    status, _, data = http("PUT", "/bench/collections/core", {"members": ["a"], "explore": 0})
    assert status == 200, data
    assert ask(http, "bench/core")[0] == 200                         # no explore seat: nobody passed over
    panel = http("GET", "/bench/history")[2]["items"][0]["id"]
    assert http("GET", f"/bench/history/{panel}")[2]["passed_over"] == []
    assert "Passed over" not in Session(svc.url).get(f"/calls/{panel}")[2]


@pytest.mark.parametrize("path, body, says", [
    ("/bench/models/oss/facts", {"colour": "red"}, "Unknown fact 'colour'"),
    ("/bench/models/oss/facts", {}, "Say which facts to set"),
    ("/bench/models/oss/facts", {"price_in": -1}, "price_in must be a number of dollars"),
    ("/bench/models/oss/facts", {"context_window": 0}, "context_window must be a whole number above 0"),
    ("/bench/models/oss/facts", {"context_window": 12.5}, "context_window must be a whole number above 0"),
    ("/bench/models/oss/facts", {"vision": "yes"}, "vision must be true or false"),
    ("/bench/models/oss/roles", {"roles": ["painter"]}, "Unknown role 'painter'"),
    ("/bench/models/oss/roles", {"roles": []}, "Roles must be a non-empty list"),
    ("/bench/models/oss/roles", {"other": 1}, "Send {\"roles\""),
    ("/bench/collections/core", {"purpose": "poetry"}, "Unknown purpose 'poetry'"),
])
def test_bad_facts_roles_and_purposes_are_400s_that_say_what_is_allowed(home, fake, http, path, body, says):
    configure(home, {"gq": (fake, "openai")}, {"oss": ("gq", "openai/gpt-oss-120b")},
              {"core": {"members": ["oss"], "explore": 0}})
    status, _, d = http("PUT", path, body)
    assert status == 400 and says in d["error"]["message"], d


def test_unknown_models_are_404s_with_suggestions(home, fake, http):
    configure(home, {"gq": (fake, "openai")}, {"oss": ("gq", "openai/gpt-oss-120b")})
    for method, path, body in (("PUT", "/bench/models/os/facts", {"tools": True}),
                               ("PUT", "/bench/models/os/roles", {"roles": None}),
                               ("POST", "/bench/models/os/confirm", None)):
        status, _, d = http(method, path, body)
        assert status == 404 and "'oss'" in d["error"]["message"]


def test_a_collection_states_its_purpose(home, fake, http):
    configure(home, {"gq": (fake, "openai")}, {"oss": ("gq", "openai/gpt-oss-120b")})
    status, _, d = http("PUT", "/bench/collections/rev", {"members": ["oss"], "purpose": "review"})
    assert status == 200 and d["purpose"] == "review"
    status, _, d = http("GET", "/bench/collections/rev")
    assert d["purpose"] == "review"
    status, _, d = http("PUT", "/bench/collections/rev", {"purpose": ""})
    assert d["purpose"] == ""


def test_a_model_without_any_fact_still_takes_its_seat(home, fake, make_service):
    fake.script("*", Reply(text="fine"))
    configure(home, {"plain": (fake, "openai")}, {"a": ("plain", "m-a")}, {"core": {"members": ["a"], "explore": 0}})
    status, _, data = ask(Http(make_service().url), "bench/core", IMAGE)
    assert status == 200 and data["bench"]["seats"][0]["status"] == "ok"


def test_free_models_only_their_own_app_can_use_take_no_explore_seat_until_switched_on(home, fake, make_service):
    # OpenCode Zen's free models answer only OpenCode itself; FreeLLMAPI lists big-pickle free there
    configure(home, {"zen": (fake, "openai"), "plain": (fake, "openai")},
              {"a": ("plain", "m-a"), "pickle": ("zen", "big-pickle"), "writer": ("plain", "m-writer")},
              {"core": {"members": ["a"], "explore": 1}})
    map_endpoints(home, {"zen": "opencode"})
    http = Http(make_service().url)
    for _ in range(2):
        status, _, data = ask(http, "bench/core")
        assert status == 200, data
        assert [s["model"] for s in data["bench"]["seats"]] == ["a", "writer"]
    reason = next(p["reason"] for p in data["bench"]["passed_over"] if p["model"] == "pickle")
    assert reason.startswith("its provider's free models work only in OpenCode")
    status, _, d = http("GET", "/bench/catalog/app-only")
    zen = {p["provider"]: p for p in d["providers"]}["opencode"]
    assert zen["use_free"] is False and zen["app"] == "OpenCode" and zen["doc"].startswith("https://")
    status, _, d = http("PUT", "/bench/catalog/app-only/opencode", {"use_free": True})
    assert status == 200 and d["use_free"] is True
    assert json.loads((home / "config" / "overrides.json").read_text())["providers"] == {"opencode": {"use_free": True}}
    status, _, data = ask(http, "bench/core")
    assert [s["model"] for s in data["bench"]["seats"]] == ["a", "pickle"]
    assert http("PUT", "/bench/catalog/app-only/opencode", {"use_free": "yes"})[0] == 400
    assert http("PUT", "/bench/catalog/app-only/groq", {"use_free": True})[0] == 404
    http("PUT", "/bench/catalog/app-only/opencode", {"use_free": False})
    assert json.loads((home / "config" / "overrides.json").read_text())["providers"] == {}


def test_the_onboard_page_shows_the_catalogs_facts_with_their_sources(home, fake, make_service):
    fake.set_models([{"id": "openai/gpt-oss-120b"}, {"id": "house-model", "context_length": 4096}])   # lists no facts
    configure(home, {"gq": (fake, "openai")}, {})
    map_endpoints(home, {"gq": "groq"})
    s = Session(make_service().url)
    candidates = {c["served"]: c for c in s.json("/onboard.json")["candidates"]}
    sourced = candidates["openai/gpt-oss-120b"]["catalog"]["facts"]
    assert sourced["context_window"] == {"value": 131072, "source": "models.dev/groq"}
    page = s.get("/onboard")[2]
    row = page[page.index("openai/gpt-oss-120b"):]
    row = row[:row.index("</tr>")]
    assert '131,072 context · tools' in row and '<span class="muted">(models.dev/groq)</span>' in row
    price = sourced["price_in"]["value"], sourced["price_out"]["value"]
    assert f"${price[0]:g} in, ${price[1]:g} out per million tokens" in row
    row = page[page.index("house-model"):]
    assert row[:row.index("</tr>")].count("4,096 context") == 1
