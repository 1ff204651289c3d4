"""The usage ledger against the fake upstream's own counts, its cuts and costs, what exploration cost and found; and
each provider's rate-limit signals driving the book that keeps a model from being called."""
from __future__ import annotations

import pytest

from benchwarmers.store.ledger import cost_of
from tests.fakes import FakeGemini, Reply
from tests.helpers.catalog import map_endpoints
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import body, chat_requests, fake, requests_for, setup_bench, wait_for  # noqa: F401
from tests.helpers.suite import wait_run
from tests.test_suite_run import oracle  # noqa: F401 (fixture)


def by(api, cut: str, **query) -> dict:
    q = "&".join(f"{k}={v}" for k, v in {"by": cut, **query}.items())
    status, _, d = api("GET", f"/bench/usage?{q}")
    assert status == 200, d
    return {r["name"]: r for r in d["rows"]} | {"TOTAL": d["total"]}


def test_ledger_totals_equal_what_the_upstream_counted_for_panels_route_turns_and_probes(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 1, "merge_model": "merger", "shadow": 1}})
    svc = make_service()
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body("bench/core", "review this please"))[0] == 200
    assert api("POST", "/v1/chat/completions", body("bench/core:merged", "merge these words"))[0] == 200
    assert api("POST", "/v1/chat/completions", body("bench/core:route", "one turn"))[0] == 200
    assert api("POST", "/v1/chat/completions", body("bench/core:route", "a streamed turn", stream=True))[0] == 200
    assert api("POST", "/bench/models/a/probe", {})[0] == 200
    wait_for(lambda: "shadow" in by(api, "kind"))                    # shadow seats answer off the turn's path
    kinds = by(api, "kind")
    total = kinds["TOTAL"]
    assert total["input_tokens"] == fake.reported["input"] and total["output_tokens"] == fake.reported["output"]
    assert total["calls"] == len(chat_requests(fake))
    assert {"member", "explore", "merge", "route", "shadow", "probe"} <= set(kinds)
    assert kinds["probe"]["calls"] == 1 and kinds["merge"]["calls"] == 1
    models = by(api, "model")
    assert sum(r["calls"] for k, r in models.items() if k != "TOTAL") == total["calls"]
    assert by(api, "connection")["fake"]["calls"] == total["calls"]
    assert by(api, "collection")["core"]["calls"] == total["calls"] - 1    # the probe belongs to no collection


def test_cost_comes_from_the_price_you_set_and_unpriced_calls_are_counted(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    map_endpoints(home, {"fake": "groq"})          # a hosted provider the catalog has no price for (not local: free)
    svc = make_service()
    api = Http(svc.url)
    assert api("PUT", "/bench/models/a/facts", {"price_in": 2.0, "price_out": 8.0})[0] == 200
    api("POST", "/v1/chat/completions", body("bench/core", "count these five words"))
    rows = by(api, "model")
    a_calls = [r for r in requests_for(fake, "m-a")]
    assert len(a_calls) == 1
    a = rows["a"]
    assert a["cost"] == pytest.approx(cost_of(2.0, 8.0, a["input_tokens"], a["output_tokens"]))
    assert rows["b"]["cost"] is None and rows["b"]["unpriced"] == 1
    assert rows["TOTAL"]["unpriced"] == 1 and rows["TOTAL"]["cost"] == pytest.approx(a["cost"])


def test_what_exploration_cost_and_found(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a"], "explore": 1}})
    svc = make_service()
    api = Http(svc.url)
    seats = api("POST", "/v1/chat/completions", body("bench/core", "find the bug"))[2]["bench"]["seats"]
    explorer = next(s for s in seats if s["kind"] == "explore")
    api("POST", "/bench/verdict", {"call": explorer["call"], "useful": True})
    assert api("PUT", "/bench/collections/core", {"members": ["a", explorer["model"]], "explore": 1})[0] == 200
    x = api("GET", "/bench/usage")[2]["exploration"]
    assert x["calls"] == 1 and x["judged"] == 1 and x["useful"] == 1
    assert x["promoted"] == [{"collection": "core", "model": explorer["model"]}]


@pytest.mark.parametrize("query, words", [
    ("month=2026-13", "is not a month"), ("by=price", "Cannot total usage by 'price'"),
    ("days=0", "days must be a whole number"), ("colour=blue", "Unknown parameter"),
])
def test_usage_refuses_bad_input_saying_what_to_fix(app, query, words):
    status, _, d = app("GET", f"/bench/usage?{query}")
    assert status == 400 and words in d["error"]["message"], d


RETRY = 120.0        # long past a seat's wait, so the model rests rather than waits


@pytest.mark.parametrize("style", ["openai", "anthropic", "openrouter", "retry_after", "retry_after_ms",
                                   "retry_after_date"])
def test_each_header_style_of_a_429_drives_the_book(home, fake, make_service, style):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    fake.script("m-a", [Reply.error(429, style=style, retry_after=RETRY)])
    svc = make_service()
    api = Http(svc.url)
    api("POST", "/v1/chat/completions", body("a"))
    status, _, d = api("POST", "/v1/chat/completions", body("a"))
    assert status == 429 and "resting until" in d["error"]["message"], d
    assert len(requests_for(fake, "m-a")) == 1
    row = next(m for m in api("GET", "/bench/limits")[2]["models"] if m["name"] == "a")
    assert row["state"] == "at" and row["blocked_until"] >= svc.bench.clock.now() + RETRY - 5


def test_a_gemini_retry_info_drives_the_book(home, make_service):
    gem = FakeGemini().start()
    try:
        configure(home, {"g": (gem, "gemini")}, {"a": ("g", "m-a"), "b": ("g", "m-b")},
                  {"core": {"members": ["a", "b"], "explore": 0}})
        gem.script("m-a", [Reply.error(429, retry_after=RETRY)])
        api = Http(make_service().url)
        api("POST", "/v1/chat/completions", body("a"))
        status, _, d = api("POST", "/v1/chat/completions", body("a"))
        assert status == 429 and "resting until" in d["error"]["message"], d
        assert len(gem.calls("m-a")) == 1
    finally:
        gem.stop()


def test_headers_of_an_answer_that_say_none_are_left_keep_the_model_from_the_next_ask(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    fake.script("m-a", [Reply(headers={"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
                                       "x-ratelimit-reset-requests": f"{RETRY:g}s"})])
    svc = make_service()
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body("a"))[0] == 200
    status, _, d = api("POST", "/v1/chat/completions", body("a"))
    assert status == 429 and len(requests_for(fake, "m-a")) == 1, d
    fake_row = next(c for c in api("GET", "/bench/limits")[2]["connections"] if c["name"] == "fake")
    assert fake_row["learned"]["requests_limit"] == 60


def test_a_user_limit_is_never_loosened_by_a_header(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a"], "explore": 0}})
    write(home, "limits.json", {"limits": {"connections": {"fake": {"rpm": 2}}}})
    fake.script("m-a", Reply(headers={"x-ratelimit-limit-requests": "1000", "x-ratelimit-remaining-requests": "999",
                                      "x-ratelimit-reset-requests": "1s"}))
    api = Http(make_service().url)
    statuses = [api("POST", "/v1/chat/completions", body("a"))[0] for _ in range(3)]
    assert statuses == [200, 200, 429] and len(requests_for(fake, "m-a")) == 2
    row = next(c for c in api("GET", "/bench/limits")[2]["connections"] if c["name"] == "fake")
    assert row["set"] == {"rpm": 2} and row["windows"]["rpm"]["limit"] == 2


def test_suite_tasks_are_the_suite_s_lines(oracle, make_service):
    svc = make_service()
    http = Http(svc.url)
    _, _, d = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-claim-*"})
    wait_run(http, d["runs"][0]["id"])
    assert http("POST", "/v1/chat/completions", body("right"))[0] == 200      # a client's direct ask is a member's
    kinds = by(http, "kind")
    assert kinds["suite"]["calls"] == 2 and kinds["member"]["calls"] == 1
