"""Each seat's output budget (the client's max_tokens cut to the model's window and output limit, or the
default_max_tokens setting), and usage estimated when an upstream streams none."""
from __future__ import annotations

import sqlite3

import pytest

from benchwarmers.canonical import Ask, Message, Text
from benchwarmers.tokencount import estimate_tokens
from tests.fakes import FakeAnthropic, Reply
from tests.helpers.data import configure, write
from tests.helpers.panel import body, fake, requests_for  # noqa: F401

PROMPT = "Where can this return a stale value?"


def tokens(text: str) -> int:
    """The service's estimate of a one-message prompt."""
    return Ask(messages=[Message("user", [Text(text)])]).prompt_tokens()


def bench_of(home, fake, settings=None, **models):
    """Collection `core` of the given models ({alias: facts}) on the fake, served as m-<alias>."""
    configure(home, {"fake": (fake, "openai")}, {a: ("fake", f"m-{a}", facts) for a, facts in models.items()},
              {"core": {"members": list(models), "explore": 0}})
    if settings is not None:
        write(home, "settings.json", settings)


def sent_limit(fake, alias: str):
    (request,) = requests_for(fake, f"m-{alias}")
    return request.body.get("max_tokens")


def test_a_large_max_tokens_is_cut_to_each_seat_instead_of_skipping_it(home, fake, make_app):
    bench_of(home, fake, small={"context_window": 8192}, capped={"max_output": 1000}, open={})
    status, _, data = make_app()("POST", "/v1/chat/completions", body(content=PROMPT, max_tokens=128000))
    assert status == 200, data
    assert [s["status"] for s in data["bench"]["seats"]] == ["ok", "ok", "ok"]
    prompt = tokens(PROMPT)
    assert sent_limit(fake, "small") == 8192 - prompt
    assert sent_limit(fake, "capped") == 1000
    assert sent_limit(fake, "open") == 128000


def test_the_cut_budget_is_in_the_call_record(home, fake, make_app):
    bench_of(home, fake, capped={"max_output": 1000})
    app = make_app()
    _, _, data = app("POST", "/v1/chat/completions", body(content=PROMPT, max_tokens=128000))
    _, _, call = app("GET", f"/bench/calls/{data['bench']['seats'][0]['call']}")
    assert call["extra"]["max_tokens"] == 1000 and call["request"]["params"]["max_tokens"] == 128000


def test_only_a_prompt_that_cannot_fit_skips_a_seat_and_says_which_numbers(home, fake, make_app):
    bench_of(home, fake, tiny={"context_window": 20}, big={})
    status, _, data = make_app()("POST", "/v1/chat/completions", body(content="word " * 200, max_tokens=10))
    by = {s["model"]: s for s in data["bench"]["seats"]}
    assert status == 200 and by["big"]["status"] == "ok" and by["tiny"]["status"] == "skipped"
    assert f"about {tokens('word ' * 200)} prompt tokens, window 20" in by["tiny"]["error"]
    assert requests_for(fake, "m-tiny") == []


def test_no_able_seat_names_the_window_and_not_an_image(home, fake, make_app):
    bench_of(home, fake, tiny={"context_window": 20})
    status, _, data = make_app()("POST", "/v1/chat/completions", body(content="word " * 200))
    message = data["error"]["message"]
    assert status == 400 and "the largest is 20 tokens" in message and "image" not in message
    assert "Shorten the prompt" in message


@pytest.mark.parametrize("settings, sent", [(None, 1024), ({"default_max_tokens": 300}, 300),    # 1024: a model of
                                            ({"default_max_tokens": 0}, None)])              # unknown speed
def test_default_max_tokens_applies_only_when_the_client_sends_none(home, fake, make_app, settings, sent):
    bench_of(home, fake, settings, a={})
    app = make_app()
    assert app("POST", "/v1/chat/completions", body(content=PROMPT))[0] == 200
    assert sent_limit(fake, "a") == sent
    fake.requests.clear()
    assert app("POST", "/v1/chat/completions", body(content=PROMPT, max_tokens=77))[0] == 200
    assert sent_limit(fake, "a") == 77


def test_the_default_is_cut_to_a_small_window_too(home, fake, make_app):
    bench_of(home, fake, small={"context_window": 1000})
    assert make_app()("POST", "/v1/chat/completions", body(content=PROMPT))[0] == 200
    assert sent_limit(fake, "small") == 1000 - tokens(PROMPT)


def test_route_mode_cuts_the_budget_and_applies_no_default(home, fake, make_app):
    configure(home, {"fake": (fake, "openai")}, {"small": ("fake", "m-small", {"context_window": 2000})},
              {"core": {"members": ["small"], "explore": 0}})
    app = make_app()
    assert app("POST", "/v1/chat/completions", body("bench/core:route", PROMPT, max_tokens=64000))[0] == 200
    assert sent_limit(fake, "small") == 2000 - tokens(PROMPT)
    fake.requests.clear()
    assert app("POST", "/v1/chat/completions", body("bench/core:route", PROMPT))[0] == 200
    assert sent_limit(fake, "small") is None      # an agent that sends no limit sizes its own turns


def test_route_mode_cuts_the_budget_in_a_body_passed_through_as_it_came(home, make_app):
    an = FakeAnthropic().start()
    try:
        configure(home, {"an": (an, "anthropic")}, {"claude": ("an", "claude-s", {"max_output": 8192})},
                  {"core": {"members": ["claude"], "explore": 0}})
        status, _, data = make_app()("POST", "/v1/messages", {
            "model": "bench/core:route", "max_tokens": 128000, "metadata": {"user_id": "kept"},
            "messages": [{"role": "user", "content": PROMPT}]})
        assert status == 200, data
        sent = [r.body for r in an.requests if r.path.startswith("/v1/messages")][-1]
        assert sent["max_tokens"] == 8192 and sent["metadata"] == {"user_id": "kept"}   # the rest as it came
    finally:
        an.stop()


def test_usage_is_estimated_and_marked_when_an_upstream_streams_none(home, fake, make_app):
    bench_of(home, fake, quiet={}, loud={})
    fake.script("m-quiet", Reply(text="four words of answer", no_usage=True))
    app = make_app()
    status, _, data = app("POST", "/v1/chat/completions", body(content=PROMPT))
    by = {s["model"]: s for s in data["bench"]["seats"]}
    assert status == 200
    assert by["quiet"]["usage"]["estimated"] is True and "estimated" not in by["loud"]["usage"]
    assert by["quiet"]["usage"]["input_tokens"] == tokens(PROMPT)
    assert by["quiet"]["usage"]["output_tokens"] == estimate_tokens("four words of answer")
    _, _, quiet = app("GET", f"/bench/calls/{by['quiet']['call']}")
    _, _, loud = app("GET", f"/bench/calls/{by['loud']['call']}")
    assert quiet["tokens_estimated"] is True and quiet["output_tokens"] > 0
    assert loud["tokens_estimated"] is False
    app.bench.db.sync()
    with sqlite3.connect(home / "bench.db") as conn:
        ledger = dict(conn.execute("SELECT call, estimated FROM usage").fetchall())
    assert ledger == {by["quiet"]["call"]: 1, by["loud"]["call"]: 0}
