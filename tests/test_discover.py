"""Discover: models worth adding with this install's routes to them; onboarding one; the catalog commands."""
from __future__ import annotations

import io
import json

import pytest

from benchwarmers.cli.main import main
from tests.fakes import FakeOpenAI
from tests.helpers.catalog import install_samples, map_endpoints
from tests.helpers.dashboard import Session
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.panel import wait_for


@pytest.fixture
def hub():
    """An OpenAI-compatible fake standing in for OpenRouter (the endpoint 'or' is mapped to it)."""
    f = FakeOpenAI().start().set_models(["qwen/qwen3-coder:free", "qwen/qwen3-coder"])
    yield f
    f.stop()


@pytest.fixture
def api(home, hub, make_service):
    configure(home, {"or": (hub, "openai")}, {})
    map_endpoints(home, {"or": "openrouter"})
    install_samples(home)
    return Http(make_service().url)


def rows(api, query: str = "") -> list[dict]:
    status, _, d = api("GET", "/bench/discover" + query)
    assert status == 200, d
    return d["models"]


def test_discover_lists_a_model_with_its_route_and_one_call_onboards_it(api):
    found = {(m["provider"], m["model"]): m for m in rows(api)}
    coder = found[("openrouter", "qwen/qwen3-coder:free")]
    assert coder["free"] is True and coder["facts"]["context_window"] == 262000 and coder["facts"]["tools"] is True
    assert coder["routes"] == [{"endpoint": "or", "served": "qwen/qwen3-coder:free", "on_bench": None,
                                "listed": False, "via": None,
                                "onboard": "bench onboard qwen/qwen3-coder:free --endpoint or",
                                "onboard_argv": ["bench", "onboard", "qwen/qwen3-coder:free", "--endpoint", "or"]}]
    assert coder["no_route"] is None and "code" in coder["roles"]
    route = coder["routes"][0]
    status, _, d = api("POST", "/bench/models", {"served": route["served"], "endpoint": route["endpoint"],
                                                "quick": True})
    assert status == 201, d
    alias = d["model"]["alias"]
    again = {(m["provider"], m["model"]): m for m in rows(api)}
    assert again[("openrouter", "qwen/qwen3-coder:free")]["routes"][0]["on_bench"] == alias


def test_a_route_counts_only_when_the_endpoints_own_list_offers_the_model(home, make_service, capsys):
    paid_only = FakeOpenAI().start().set_models(["qwen/qwen3-coder"])           # no ':free' twin on this one
    try:
        configure(home, {"or": (paid_only, "openai")}, {})
        map_endpoints(home, {"or": "openrouter"})
        install_samples(home)
        svc = make_service()
        api = Http(svc.url)
        found = {m["model"]: m for m in rows(api) if m["provider"] == "openrouter"}
        assert [r["listed"] for r in found["qwen/qwen3-coder:free"]["routes"]] == [False]   # not read yet: trusted
        assert api("GET", "/bench/candidates")[0] == 200                      # the service reads the list
        found = {m["model"]: m for m in rows(api) if m["provider"] == "openrouter"}
        free = found["qwen/qwen3-coder:free"]
        assert free["routes"] == [] and free["unlisted"] == ["or"] and free["no_route"]["provider"] == "openrouter"
        assert [(r["endpoint"], r["listed"]) for r in found["qwen/qwen3-coder"]["routes"]] == [("or", True)]
        assert found["qwen/qwen3-coder"]["unlisted"] == []
        assert main(["--url", svc.url, "discover", "--find", "qwen3-coder"]) == 0
        out = capsys.readouterr()
        assert "no route: or does not list it" in out.out and "endpoint add openrouter" not in out.err
        page = Session(svc.url).get("/discover?find=qwen3-coder")[2]
        assert "no route: your endpoint or does not list it" in page
    finally:
        paid_only.stop()


def test_a_model_with_no_route_names_the_provider_to_add(api):
    groq = {m["model"]: m for m in rows(api) if m["provider"] == "groq"}
    oss = groq["openai/gpt-oss-120b"]
    assert oss["routes"] == []
    assert oss["no_route"] == {"provider": "groq", "name": "Groq", "base_url": "https://api.groq.com/openai/v1",
                               "api": "openai", "command": "bench endpoint add groq --base https://api.groq.com/openai/v1",
                               "argv": ["bench", "endpoint", "add", "groq", "--base", "https://api.groq.com/openai/v1"]}
    # Groq lists it at $0.15/$0.60, and FreeLLMAPI's dated hint names its free tier
    assert oss["free"] is True and oss["free_tier"]["rpd"] == 1000 and oss["free_tier"]["as_of"] == "2026-06"
    assert oss["sources"] == ["models.dev", "FreeLLMAPI (2026-06)"]


def test_worth_adding_leaves_out_the_old_the_dear_the_deprecated_and_image_makers(api):
    shown = {(m["provider"], m["model"]) for m in rows(api, "?limit=1000")}
    assert ("openrouter", "google/gemma-3-27b-it:free") not in shown      # released 2025-03: not recent
    assert ("groq", "moonshotai/kimi-k2-instruct") not in shown           # $1/$3: not cheap, no free tier
    assert ("mistral", "devstral-small-2507") not in shown                # deprecated
    assert ("openai", "gpt-image-1-mini") not in shown                    # answers in images only
    assert ("openai", "gpt-5-nano") in shown                              # $0.05/$0.40: cheap


def test_the_filters(api):
    assert {m["model"] for m in rows(api, "?free=1") if not m["free"]} == set()
    assert all(m["facts"].get("tools") is True for m in rows(api, "?tools=1"))
    assert all(m["facts"].get("vision") is True for m in rows(api, "?vision=1"))
    assert {m["model"] for m in rows(api, "?min_context=400000&find=qwen")} == {"qwen/qwen3-coder"}
    assert [m["model"] for m in rows(api, "?find=GPT-5-NANO")] == ["gpt-5-nano"]
    assert len(rows(api, "?limit=2")) == 2
    for bad in ("?min_context=lots", "?limit=0", "?limit=5000"):
        status, _, d = api("GET", "/bench/discover" + bad)
        assert status == 400 and "whole number" in d["error"]["message"]


@pytest.fixture
def bench(api, capsys, monkeypatch):
    def run(*argv):
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = main(["--url", api.base, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_bench_discover_prints_the_routes_and_the_command_that_onboards(bench):
    code, out, err = bench("discover", "--free", "--find", "qwen3-coder")
    assert code == 0, err
    assert "qwen/qwen3-coder:free" in out and "openrouter" in out and "free" in out
    assert "To queue one for onboarding: bench onboard qwen/qwen3-coder:free --endpoint or" in err
    command = err.split("To queue one for onboarding: ", 1)[1].split("  (")[0].split("\n")[0].split()
    code, out, err = bench(*command[1:])                 # the command printed queues it
    assert code == 0, err
    assert "qwen/qwen3-coder:free" in out and "queued" in out
    code, out, err = bench("discover", "--find", "gpt-oss-120b")
    assert "no route yet: add Groq" in out
    assert "To add a provider: bench endpoint add groq --base https://api.groq.com/openai/v1" in err
    code, out, _ = bench("discover", "--vision", "--json")
    assert code == 0 and all(m["facts"]["vision"] for m in json.loads(out)["models"])
    code, _, err = bench("discover", "--find", "no-such-model-anywhere")
    assert code == 0 and "Nothing matches" in err


def test_bench_catalog_and_model_set_role_show(bench, api):
    code, out, _ = bench("catalog")
    assert code == 0 and "models.dev" in out and "fetched" in out and "freellmapi" in out and "shipped" in out
    code, _, err = bench("onboard", "qwen/qwen3-coder:free", "--endpoint", "or", "--alias", "coder", "--quick",
                         "--wait")
    assert code == 0, err
    code, out, err = bench("model", "set", "coder", "--context", "32768", "--no-vision", "--price-in", "0.1")
    assert code == 0, err
    assert "context_window  32768" in out and "override" in out and "models.dev/openrouter" in out
    code, out, _ = bench("model", "role", "coder", "code", "reasoning")
    assert code == 0 and "Roles: code, reasoning (set by you)" in out
    code, out, _ = bench("model", "role", "coder", "--auto")
    assert "(from its facts)" in out
    code, _, err = bench("model", "role", "coder", "painter")
    assert code == 1 and "Unknown role 'painter'" in err
    code, _, err = bench("model", "set", "coder")
    assert code == 2 and "Say which facts" in err
    code, out, _ = bench("model", "show", "coder")
    assert code == 0 and "SOURCE" in out and "override" in out
    code, out, _ = bench("models")
    assert "32k ctx" in out
    code, _, err = bench("model", "confirm", "coder")
    assert code == 1 and "'coder' is not held" in err


def test_free_models_that_work_only_in_their_own_app_are_left_out_until_switched_on(api):
    assert rows(api, "?find=pickle") == []
    status, _, d = api("GET", "/bench/discover?find=pickle")
    assert [(a["provider"], a["app"], a["models"]) for a in d["app_only"]] == [("opencode", "OpenCode", 1)]
    assert api("PUT", "/bench/catalog/app-only/opencode", {"use_free": True})[0] == 200
    found = rows(api, "?find=pickle")
    assert [(m["provider"], m["model"], m["free"]) for m in found] == [("opencode", "big-pickle", True)]
    assert api("GET", "/bench/discover?find=pickle")[2]["app_only"] == []


def test_the_discover_page_filters_and_queues_a_routed_model_in_one_click(api, hub):
    s = Session(api.base)
    status, _, page = s.get("/discover?free=1&find=qwen3-coder")
    assert status == 200 and 'href="/discover.json?free=1&amp;find=qwen3-coder"' in page
    d = s.json("/discover.json?free=1&find=qwen3-coder")
    assert d["filters"] == {"free": True, "tools": False, "vision": False, "reachable": False, "find": "qwen3-coder",
                            "min_context": None}
    assert d["models"][0]["model"] == "qwen/qwen3-coder:free" and all(m["free"] for m in d["models"])
    assert all("qwen3-coder" in (m["model"] + m["name"]).lower() for m in d["models"])
    assert 'value="or|qwen/qwen3-coder:free"' in page and 'data-key="or|qwen/qwen3-coder:free"' in page
    groq = next(m for m in s.json("/discover.json?find=gpt-oss-120b")["models"] if m["provider"] == "groq")
    reachable = s.json("/discover.json?reachable=1")["models"]            # only what an endpoint here serves
    assert reachable and all(m["routes"] for m in reachable)
    assert not any(m["provider"] == "groq" for m in s.json("/discover.json?reachable=1&find=gpt-oss-120b")["models"])
    assert groq["add"] == {"how": "paste", "name": "Groq", "href": "/endpoints?name=groq&base_url=https%3A%2F%2Fapi."
                                                                  "groq.com%2Fopenai%2Fv1&api=openai#add"}
    status, headers, _ = s.form("/discover/onboard", {"pick": "or|qwen/qwen3-coder:free",
                                                     "back": "/discover?free=1&find=qwen3-coder"})
    assert status == 303 and headers["location"] == "/discover?free=1&find=qwen3-coder"
    item = s.json("/discover.json?free=1")["models"][0]["routes"][0]["item"]
    assert item["served"] == "qwen/qwen3-coder:free" and item["mode"] == "quick"
    wait_for(lambda: s.json("/discover.json?free=1")["models"][0]["routes"][0]["item"]["state"] == "done")
    route = s.json("/discover.json?free=1")["models"][0]["routes"][0]
    assert route["on_bench"] and route["item"]["model"] == route["on_bench"]
    _, _, page = s.get("/discover?min_context=lots")
    assert "Min context must be a whole number" in page
    assert s.form("/discover/onboard", {})[0] == 303                  # nothing picked: back with the reason
    assert "No model picked" in s.get("/discover")[2]
