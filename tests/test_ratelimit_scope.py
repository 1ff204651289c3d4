"""A rate limit rests what it names: one model's 429 rests that model, not its neighbours on the same endpoint;
a limit the headers say is the key's (OpenRouter's) rests the whole connection."""
from __future__ import annotations

import time

import pytest

from tests.fakes import Reply
from tests.helpers.data import configure
from tests.helpers.panel import fake  # noqa: F401  (the fixture)

ASK = {"model": "bench/core", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def app(home, fake, make_app):
    configure(home, {"up": (fake, "openai")},
              {"a": ("up", "m-a", {"tools": True}), "b": ("up", "m-b", {"tools": True})},
              {"core": {"members": ["a", "b"], "explore": 0}})
    return make_app()


def seats(reply) -> dict:
    return {s["model"]: s["status"] for s in reply["bench"]["seats"]}


@pytest.mark.parametrize("style", ["openai", "retry_after", "anthropic"])
def test_one_models_429_rests_that_model_only(app, fake, style):
    fake.script("m-a", Reply.error(429, style=style, retry_after=60))
    status, _, first = app("POST", "/v1/chat/completions", ASK)
    assert status == 200 and seats(first) == {"a": "failed", "b": "ok"}
    status, _, second = app("POST", "/v1/chat/completions", ASK)
    assert status == 200 and seats(second) == {"a": "skipped", "b": "ok"}, second["bench"]
    models = {m["alias"]: m["status"] for m in app("GET", "/bench/models")[2]["models"]}
    assert models == {"a": "resting", "b": "active"}


def test_a_keys_limit_rests_the_whole_connection(app, fake):
    fake.script("m-a", Reply.error(429, style="openrouter", retry_after=60))
    app("POST", "/v1/chat/completions", ASK)
    status, headers, reply = app("POST", "/v1/chat/completions", ASK)
    assert status == 429 and "Retry-After" in headers, reply


def test_a_used_up_quota_on_a_good_answer_rests_its_model_only(app, fake):
    reset = "30s"
    fake.script("m-a", Reply(headers={"x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "0",
                                      "x-ratelimit-reset-requests": reset}))
    assert seats(app("POST", "/v1/chat/completions", ASK)[2]) == {"a": "ok", "b": "ok"}
    assert seats(app("POST", "/v1/chat/completions", ASK)[2]) == {"a": "skipped", "b": "ok"}


def test_route_mode_fails_over_and_then_skips_only_the_limited_member(app, fake):
    fake.script("m-a", Reply.error(429, style="openai", retry_after=60))
    turn = {"model": "bench/core:route", "messages": [{"role": "user", "content": "hi"}]}
    for _ in range(2):
        status, headers, reply = app("POST", "/v1/chat/completions", turn)
        assert status == 200 and headers["x-bench-model"] == "b", reply
    asked = [r.body["model"] for r in fake.requests if isinstance(r.body, dict) and "model" in r.body]
    assert asked.count("m-a") == 1                      # asked once, then left to rest


def test_rests_survive_a_restart_per_model(home, fake, make_app, app):
    fake.script("m-a", Reply.error(429, style="openai", retry_after=60))
    app("POST", "/v1/chat/completions", ASK)
    app.bench.db.sync()
    again = make_app()
    assert again.bench.resting.until("up", "m-a") > time.time()
    assert again.bench.resting.until("up", "m-b") is None and again.bench.resting.until("up") is None
