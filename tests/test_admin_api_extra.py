"""The admin API routes the dashboard reads: history, one ask whole, calls per day, a collection's overview,
testing an endpoint, local servers, settings."""
from __future__ import annotations

import json
import socket

import pytest

from tests.fakes import FakeOllama, FakeOpenAI, Reply
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import fake  # noqa: F401 (a started FakeOpenAI)

KEY = "sk-test-extra-0123456789abcdef"


@pytest.fixture
def api(home, fake, make_service) -> Http:
    """Members a, b of core; x the only explorer; r retired; m-a answers carry rate-limit headers."""
    configure(home, {"fake": (fake, "openai")},
              {"a": ("fake", "m-a", {"context_window": 8000, "tools": True, "vision": False}),
               "b": ("fake", "m-b", {"context_window": 32000, "tools": True}),
               "x": ("fake", "m-x"),
               "r": {"endpoint": "fake", "served": "m-r", "status": "retired", "reason": "too slow"}},
              {"core": {"members": ["a", "b", "r"], "explore": 1, "description": "review"}})
    fake.script("m-a", Reply(headers={"x-ratelimit-limit-requests": "20", "x-ratelimit-remaining-requests": "19"}))
    return Http(make_service().url)


def ask(api: Http, model: str = "bench/core", text: str = "hello") -> dict:
    status, _, d = api("POST", "/v1/chat/completions",
                       {"model": model, "messages": [{"role": "user", "content": text}]})
    assert status == 200, d
    return d["bench"]


def seat(bench: dict, model: str) -> dict:
    return next(s for s in bench["seats"] if s["model"] == model)


def test_history_lists_asks_newest_first_with_filters_and_pages(api):
    first = ask(api, text="first question")
    second = ask(api, text="second question " + "word " * 80)
    api("POST", "/bench/verdict", {"call": seat(first, "a")["call"], "useful": True})
    status, _, d = api("GET", "/bench/history")
    assert status == 200 and d["total"] == 2 and d["next"] is None and not d["total_capped"]
    newest, oldest = d["items"]
    assert (newest["id"], oldest["id"]) == (second["panel"], first["panel"])
    assert oldest["prompt"] == "first question" and newest["prompt"].endswith("…") and len(newest["prompt"]) == 240
    assert [s["model"] for s in oldest["seats"]] == ["a", "b", "r", "x"]
    assert [s["status"] for s in oldest["seats"]] == ["ok", "ok", "skipped", "ok"]
    assert oldest["answered"] == 3 and oldest["judged"] == 1 and seat(oldest, "a")["useful"] is True
    ids = lambda q: [i["id"] for i in api("GET", "/bench/history" + q)[2]["items"]]   # noqa: E731
    assert ids("?verdict=given") == [first["panel"]]
    assert ids("?verdict=missing") == [second["panel"], first["panel"]]       # first still has unjudged seats
    assert ids("?collection=nope") == [] and ids("?model=x&status=skipped") == [second["panel"], first["panel"]]
    one = api("GET", "/bench/history?per_page=1")[2]
    page = api("GET", f"/bench/history?per_page=1&before={one['next']}")[2]
    assert [i["id"] for i in page["items"]] == [first["panel"]] and page["next"] is None
    assert page["newer"] and api("GET", f"/bench/history?after={page['newer']}")[2]["items"][0]["id"] == \
        second["panel"]
    assert api("GET", "/bench/history?verdict=maybe")[0] == 400
    assert api("GET", "/bench/history?page=2")[0] == 400          # pages are cursors now, and it says so
    assert api("GET", "/bench/history?before=nonsense")[0] == 400


def test_one_ask_whole_panel_and_route_turn(api):
    b = ask(api)
    api("POST", "/bench/verdict", {"call": seat(b, "b")["call"], "useful": False, "false": ["the bug"],
                                   "note": "wrong file"})
    status, _, d = api("GET", f"/bench/history/{b['panel']}")
    assert status == 200 and d["kind"] == "panel" and d["collection"] == "core" and d["prompt"] == "hello"
    assert d["request"]["messages"][-1]["content"] == "hello" and d["merge"] is None
    got = {s["model"]: s for s in d["seats"]}
    assert got["a"]["answer"] == "m-a says: hello" and got["a"]["verdict"] is None
    assert got["b"]["verdict"] == {**got["b"]["verdict"], "useful": False, "false": ["the bug"], "note": "wrong file"}
    assert got["r"]["status"] == "skipped" and "retired" in got["r"]["error"]
    route = api("POST", "/v1/chat/completions", {"model": "bench/core:route",
                                                 "messages": [{"role": "user", "content": "fix it"}]})[2]["bench"]
    status, _, turn = api("GET", f"/bench/history/{route['call']}")
    assert status == 200 and turn["kind"] == "route" and [s["call"] for s in turn["seats"]] == [route["call"]]
    assert api("GET", "/bench/history")[2]["items"][0]["kind"] == "route"
    assert api("GET", "/bench/history/nope")[0] == 404


def test_calls_carry_their_current_verdict_and_the_record_its_interval(api):
    b = ask(api)
    api("POST", "/bench/verdict", {"call": seat(b, "a")["call"], "useful": True})
    calls = {c["model"]: c for c in api("GET", "/bench/calls?collection=core")[2]["calls"]}
    assert calls["a"]["verdict"]["useful"] is True and calls["b"]["verdict"] is None
    rec = api("GET", "/bench/record")[2]["models"]
    lo, hi = rec["a"]["useful_interval"]
    assert 0 < lo < 1 and hi == 1.0 and rec["b"]["useful_interval"] is None


def test_calls_per_day(api, fake):
    fake.script("m-b", Reply(delay=0.01))   # seconds a seat took, kept to the millisecond, are more than none
    b = ask(api)
    api("POST", "/bench/verdict", {"call": seat(b, "a")["call"], "useful": True})
    api("POST", "/bench/verdict", {"call": seat(b, "b")["call"], "useful": False})
    status, _, d = api("GET", "/bench/stats/daily?days=7")
    assert status == 200 and len(d["days"]) == 7 and [x["calls"] for x in d["days"][:-1]] == [0] * 6
    today = d["days"][-1]
    assert today["by_status"] == {"ok": 3, "failed": 0, "timeout": 0, "skipped": 1} and today["calls"] == 4
    assert today["judged"] == 2 and today["useful_rate"] == 0.5 and today["mean_seconds"] > 0
    assert today["cumulative"]["judged"] == 2 and len(today["cumulative"]["interval"]) == 2
    one = api("GET", "/bench/stats/daily?days=3&model=a")[2]["days"][-1]
    assert one["calls"] == 1 and one["useful"] == 1
    assert api("GET", "/bench/stats/daily?days=0")[0] == 400


def test_collection_overview_counts_shares_and_suggests(api):
    for _ in range(5):
        b = ask(api)
        api("POST", "/bench/verdict", {"call": seat(b, "x")["call"], "useful": True})
        api("POST", "/bench/verdict", {"call": seat(b, "a")["call"], "useful": False,
                                       "false": ["claim one", "claim two"]})
    status, _, d = api("GET", "/bench/collections/core/overview")
    assert status == 200 and d["name"] == "core" and d["description"] == "review"
    assert d["seats"] == {"members": 2, "explore": 1, "referee": 0, "calls": 3, "merged_calls": 4, "route_calls": 1,
                          "explorers": 1}          # its points are off: no referee's call
    assert d["together"] == {"context_window": 8000, "context_unknown": [], "tools": True, "vision": False,
                             "tightest_limit": {"endpoint": "fake", "requests_limit": 20, "tokens_limit": None}}
    kinds = {s["kind"]: s for s in d["suggestions"]}
    assert set(kinds) == {"retired", "replace", "promote"}
    assert kinds["promote"]["model"] == "x" and "5 of 5" in kinds["promote"]["text"]
    assert kinds["replace"]["model"] == "a" and kinds["retired"]["model"] == "r"
    assert d["names"] == {"panel": "bench/core", "merged": "bench/core:merged", "route": "bench/core:route"}
    detail = {m["alias"]: m for m in d["members_detail"]}
    assert detail["a"]["record"]["judged"] == 5 and detail["r"]["status"] == "retired"
    assert api("GET", "/bench/collections/nope/overview")[0] == 404


def test_endpoint_test_and_local_servers(http, monkeypatch):
    with FakeOpenAI() as oa, FakeOllama() as ol:
        oa.set_models(["m1", "m2"]).expect_key(KEY)
        ol.set_models(["llama3.2"])
        assert http("POST", "/bench/endpoints", {"name": "oa", "base_url": oa.url, "key": KEY})[0] == 201
        oa.set_models(["m1", "m2", "m3"])
        status, _, d = http("POST", "/bench/endpoints/oa/test")
        assert status == 200 and d["ok"] and d["endpoint"]["served_count"] == 3 and d["endpoint"]["sample"][2] == "m3"
        oa.expect_key("another-key-0000000000")
        status, _, d = http("POST", "/bench/endpoints/oa/test")
        assert status == 502 and "failed its test" in d["error"]["message"] and KEY not in json.dumps(d)
        assert http("POST", "/bench/endpoints/nope/test")[0] == 404

        monkeypatch.setenv("OLLAMA_HOST", ol.root.replace("http://", ""))
        server = http("GET", "/bench/local-servers")[2]["servers"][0]
        assert server == {"api": "ollama", "name": "ollama", "base_url": ol.root, "answering": True, "models": 1,
                          "endpoint": None}
        http("POST", "/bench/endpoints", {"name": "mine", "base_url": ol.root.replace("127.0.0.1", "localhost"),
                                          "api": "ollama", "no_key": True})
        assert http("GET", "/bench/local-servers")[2]["servers"][0]["endpoint"] == "mine"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("OLLAMA_HOST", f"http://0.0.0.0:{s.getsockname()[1]}")
    server = http("GET", "/bench/local-servers")[2]["servers"][0]
    assert server["answering"] is False and server["base_url"].startswith("http://127.0.0.1:")


def test_settings_read_and_change(http, home):
    status, _, d = http("GET", "/bench/settings")
    by = {s["name"]: s for s in d["settings"]}
    assert status == 200 and by["seat_timeout"]["value"] == 300.0 and by["seat_timeout"]["set"] is False
    assert by["panel_workers"]["restart"] is True and by["seat_timeout"]["restart"] is False and d["problem"] is None
    status, _, d = http("POST", "/bench/settings", {"seat_timeout": 120, "merge_model": "a"})
    by = {s["name"]: s for s in d["settings"]}
    assert status == 200 and by["seat_timeout"]["value"] == 120.0 and by["seat_timeout"]["set"] is True
    assert json.loads((home / "config" / "settings.json").read_text()) == {"seat_timeout": 120.0, "merge_model": "a"}
    http("POST", "/bench/settings", {"seat_timeout": None})
    assert "seat_timeout" not in json.loads((home / "config" / "settings.json").read_text())
    for body, words in (({"nope": 1}, "Unknown setting"), ({"seat_timeout": -1}, "cannot be"),
                        ({"seat_timeout": "soon"}, "must be a number"), ({}, "at least one"),
                        ({"confidently_wrong_ratio": 3}, "cannot be")):
        status, _, d = http("POST", "/bench/settings", body)
        assert status == 400 and words in d["error"]["message"], body
    write(home, "settings.json", {})
    (home / "config" / "settings.json").write_text("{broken", encoding="utf-8")
    d = http("GET", "/bench/settings")[2]
    assert "settings.json" in d["problem"] and {s["name"]: s for s in d["settings"]}["seat_timeout"]["value"] == 300.0
    status, _, d = http("POST", "/bench/settings", {"seat_timeout": 5})
    assert status >= 400 and "by hand" in d["error"]["message"]
    assert (home / "config" / "settings.json").read_text() == "{broken"


def test_cli_endpoint_test_and_settings(service, capsys):
    from benchwarmers.cli.main import main

    def cli(*argv):
        code = main(["--url", service.url, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    with FakeOllama() as ol:
        ol.set_models(["llama3.2", "qwen3"])
        cli("endpoint", "add", "local", "--base", ol.root, "--api", "ollama", "--no-key")
        code, out, _ = cli("endpoint", "test", "local")
        assert code == 0 and "serves 2 models" in out and "llama3.2" in out
    code, _, err = cli("endpoint", "test", "local")
    assert code == 1 and "failed its test" in err
    code, out, _ = cli("settings")
    assert code == 0 and "seat_timeout" in out and "300.0" in out and "needs a restart" in out
    code, out, _ = cli("settings", "set", "seat_timeout", "90")
    assert code == 0 and "seat_timeout is now 90.0." in out
    code, out, _ = cli("settings", "set", "merge_model", "deepseek")
    assert code == 0 and '"deepseek"' in out
    code, out, _ = cli("settings", "set", "merge_model", "default")
    assert code == 0 and "null" in out
    code, _, err = cli("settings", "set", "seat_timeout", "-3")
    assert code == 1 and "cannot be" in err
