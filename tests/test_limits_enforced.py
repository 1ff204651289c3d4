"""Rate limits enforced before a call is sent, counted at a fake upstream: a burst against a limited connection,
calls that wait and calls refused unsent, every format saying so, explore seats and scheduled jobs passing over a
model that would wait, the roster's rest, and counts that survive a restart."""
from __future__ import annotations

import threading
from datetime import datetime

import pytest

from tests.helpers.clock import FakeClock, HeldClock
from tests.helpers.data import write
from tests.helpers.http import Http
from tests.helpers.jobs import run_job
from tests.helpers.panel import (at_once, body, chat_requests, fake, requests_for, setup_bench,  # noqa: F401
                                 wait_for)

REFUSED = "rate limited: resets at"


def limits(home, connections: dict | None = None, models: dict | None = None) -> None:
    write(home, "limits.json", {"limits": {"connections": connections or {}, "models": models or {}}})


def burst(url: str, count: int, model: str = "a") -> list:
    """`count` direct asks at once; their (status, body) in the order they were started."""
    api = Http(url)
    return at_once(count, lambda i: api("POST", "/v1/chat/completions", body(model, f"ask {i}"), timeout=120)[::2])


def test_a_burst_of_20_against_5_a_minute_sends_exactly_5_and_refuses_the_rest(home, fake, make_service):
    setup_bench(home, fake)
    limits(home, connections={"fake": {"rpm": 5}})
    svc = make_service()
    replies = burst(svc.url, 20)
    assert len(chat_requests(fake)) == 5                          # counted at the upstream
    answered = [b for status, b in replies if status == 200]
    refused = [b for status, b in replies if status != 200]
    assert len(answered) == 5 and len(refused) == 15
    for b in refused:                                             # refused before sending, saying when it resets
        assert b["error"]["code"] == "rate_limited" and REFUSED in b["error"]["message"], b
        assert "rpm 5 of connection 'fake'" in b["error"]["message"]
    seen = Http(svc.url)("GET", "/bench/limits")[2]
    fake_row = next(c for c in seen["connections"] if c["name"] == "fake")
    assert fake_row["windows"]["rpm"] | {"resets_at": None} == {"limit": 5, "used": 5, "left": 0, "resets_at": None,
                                                              "what": "requests a minute"}
    assert fake_row["state"] == "at"


def test_calls_that_may_wait_go_out_five_a_minute_as_the_clock_moves(home, fake, make_service):
    setup_bench(home, fake, settings={"limit_wait_seconds": 150})
    limits(home, connections={"fake": {"rpm": 5}})
    clock = HeldClock(start=datetime(2026, 11, 3, 10, 0))
    svc = make_service(clock=clock)
    replies: list = []
    runner = threading.Thread(target=lambda: replies.extend(burst(svc.url, 20)))
    runner.start()
    for sent in (5, 10):                      # each minute lets exactly five more through; the rest keep waiting
        wait_for(lambda: len(chat_requests(fake)) == sent and clock.waiting == 20 - sent, 30)
        assert len(chat_requests(fake)) == sent
        clock.advance(seconds=60)
    runner.join(60)                           # the last five would have to wait till minute 3: past their 150 s
    assert len(chat_requests(fake)) == 15
    assert sorted(status for status, _ in replies) == [200] * 15 + [429] * 5


@pytest.mark.parametrize("path, payload, text", [
    ("/v1/chat/completions", {"model": "bench/core", "messages": [{"role": "user", "content": "hi"}]},
     lambda d: d["choices"][0]["message"]["content"]),
    ("/v1/messages", {"model": "bench/core", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]},
     lambda d: d["content"][0]["text"]),
    ("/v1beta/models/bench/core:generateContent", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
     lambda d: d["candidates"][0]["content"]["parts"][0]["text"]),
    ("/api/chat", {"model": "bench/core", "stream": False, "messages": [{"role": "user", "content": "hi"}]},
     lambda d: d["message"]["content"]),
    ("/v1/responses", {"model": "bench/core", "input": "hi"},
     lambda d: d["output"][0]["content"][0]["text"]),
])
def test_a_refused_seat_sends_nothing_and_every_format_says_when_it_resets(home, fake, make_service, path, payload,
                                                                          text):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    limits(home, models={"a": {"rpmonth": 1}})
    svc = make_service()
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body("a", "first"))[0] == 200      # a's one call of the month
    status, _, d = api("POST", path, payload)
    assert status == 200, d
    said = text(d)
    assert "## Seat 1 · a · member · skipped" in said and REFUSED in said and "rpmonth 1 of model 'a'" in said
    assert "b says: hi" in said
    assert len(requests_for(fake, "m-a")) == 1 and len(requests_for(fake, "m-b")) == 1


def test_a_route_turn_fails_over_before_sending_to_a_member_out_of_quota(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    limits(home, models={"a": {"rpmonth": 1}, "b": {"rpmonth": 1}})
    svc = make_service()
    api = Http(svc.url)
    first = api("POST", "/v1/chat/completions", body("bench/core:route", "one"))[2]
    pinned = first["bench"]["model"]
    second = api("POST", "/v1/chat/completions", body("bench/core:route", "two"))[2]
    other = ({"a", "b"} - {pinned}).pop()
    assert second["bench"]["model"] == other
    assert len(chat_requests(fake)) == 2                          # one each: the member out of quota got nothing
    status, _, third = api("POST", "/v1/chat/completions", body("bench/core:route", "three"))
    assert status == 429 and len(chat_requests(fake)) == 2, third


def test_explore_seats_pass_over_models_that_would_wait(home, fake, make_service):
    setup_bench(home, fake)                                      # core: a, b, c and one explore seat from x, y, z
    limits(home, models={"x": {"rpmonth": 1}, "y": {"rpmonth": 1}})
    svc = make_service()
    api = Http(svc.url)
    for alias in ("x", "y"):
        assert api("POST", "/v1/chat/completions", body(alias))[0] == 200
    for _ in range(2):
        d = api("POST", "/v1/chat/completions", body())[2]["bench"]
        explorers = [s["model"] for s in d["seats"] if s["kind"] == "explore"]
        assert explorers == ["z"], d
    assert len(requests_for(fake, "m-x")) == 1 and len(requests_for(fake, "m-y")) == 1
    passed = {p["model"]: p["reason"] for p in d["passed_over"]}
    assert REFUSED in passed["x"] and REFUSED in passed["y"]


def test_the_roster_shows_a_model_resting_until_its_limit_resets(home, fake, make_service):
    setup_bench(home, fake)
    limits(home, models={"a": {"rpd": 1}})
    svc = make_service()
    api = Http(svc.url)
    api("POST", "/v1/chat/completions", body("a"))
    a = next(m for m in api("GET", "/bench/models")[2]["models"] if m["alias"] == "a")
    assert a["status"] == "resting" and a["status_text"].startswith("resting until ")
    midnight = (svc.bench.clock.now() // 86400 + 1) * 86400      # a day limit resets at midnight UTC
    assert a["resting_until"] == midnight


def test_a_scheduled_probe_skips_a_model_that_would_wait(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    limits(home, models={"a": {"rpd": 1}})
    svc = make_service(clock=FakeClock(start=datetime(2026, 11, 3, 10, 0)))
    Http(svc.url)("POST", "/v1/chat/completions", body("a"))
    run = run_job(svc, "probe")
    skipped = {s["model"]: s["why"] for s in run["detail"]["skipped"]}
    assert REFUSED in skipped["a"] and "rpd 1 of model 'a'" in skipped["a"]
    assert len(requests_for(fake, "m-a")) == 1                    # the ask's, and no probe
    assert "b" in run["detail"]["ok"]


def test_counts_and_limits_survive_a_restart(home, fake, make_service):
    setup_bench(home, fake)
    api_limits = {"name": "fake", "rpd": 3}
    start = datetime(2026, 11, 3, 10, 0)
    svc = make_service(clock=FakeClock(start=start))
    assert Http(svc.url)("POST", "/bench/limits", api_limits)[0] == 200
    for _ in range(3):
        assert Http(svc.url)("POST", "/v1/chat/completions", body("a"))[0] == 200
    svc.stop()
    again = make_service(clock=FakeClock(start=start).advance(minutes=5))
    status, _, d = Http(again.url)("POST", "/v1/chat/completions", body("a"))
    assert status == 429 and "rpd 3 of connection 'fake'" in d["error"]["message"]
    assert len(chat_requests(fake)) == 3


def test_a_probe_asked_for_is_refused_unsent_when_its_limit_is_used_up(home, fake, make_service):
    setup_bench(home, fake)
    limits(home, models={"a": {"rpmonth": 1}})
    api = Http(make_service().url)
    assert api("POST", "/bench/models/a/probe", {})[0] == 200
    status, headers, d = api("POST", "/bench/models/a/probe", {})
    assert status == 429 and REFUSED in d["error"]["message"] and "Nothing was sent" in d["error"]["message"], d
    assert int(headers["Retry-After"]) > 0 and len(requests_for(fake, "m-a")) == 1
