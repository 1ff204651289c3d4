"""Every adapter against its fake: whole and streamed answers, tool calls, usage, every fault kind, key hygiene."""
from __future__ import annotations

import json
import re
import socket
import time

import pytest

from benchwarmers.canonical import (CONTENT_FILTER, LENGTH, STOP, TOOL_CALLS, Ask, Finish, Message, ReasoningDelta,
                                    Text, TextDelta, ToolCallDelta)
from benchwarmers.errors import BadRequest, UpstreamFailed
from benchwarmers.providers import PROVIDERS, Transport, make_provider
from benchwarmers.providers.connecting import connect_error
from benchwarmers.providers.transport import Timeouts
from tests.fakes import FAKES, Reply

APIS = sorted(PROVIDERS)
KEY = "sk-live-0123456789abcdef"
ASK = Ask(messages=[Message("user", [Text("what is two plus two?")])])
QUICK = Timeouts(connect=2, first_byte=0.5, idle=0.5)
SENTENCE_BREAK = re.compile(r"[a-z0-9)] [A-Z][a-z]+ ")      # "...connection Is the server": a missing full stop


@pytest.fixture(params=APIS)
def pair(request):
    """(provider, fake) for each protocol, the fake expecting the provider's key."""
    with FAKES[request.param]() as fake:
        fake.expect_key(KEY)
        yield make_provider(request.param, fake.url, KEY, name="bench-ep", transport=Transport()), fake


def failure(call) -> UpstreamFailed:
    with pytest.raises(UpstreamFailed) as info:
        call()
    return info.value


def test_registry_and_unknown_protocol():
    assert set(PROVIDERS) == {"openai", "anthropic", "gemini", "ollama"}
    for api, cls in PROVIDERS.items():
        assert cls.api == api and isinstance(cls.supports, dict) and cls.supports["tools"]
    with pytest.raises(BadRequest) as info:
        make_provider("cohere", "https://x", None)
    assert "openai" in str(info.value)


def test_whole_answer(pair):
    p, fake = pair
    answer = p.complete(ASK, "m1")
    assert answer.text == "m1 says: what is two plus two?"
    assert answer.finish_reason == STOP and answer.model == "m1"
    assert answer.usage.input_tokens == 5 and answer.usage.output_tokens == 7
    assert 0 < answer.ttft <= answer.seconds


def test_streamed_events(pair):
    p, fake = pair
    fake.script("m1", Reply(text="a b c d", usage={"input": 11, "output": 4}))
    events = list(p.stream(ASK, "m1"))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(texts) == "a b c d" and len(texts) == 4          # word by word, as it came
    assert isinstance(events[-1], Finish) and events[-1].reason == STOP
    answer = p.complete(ASK, "m1")
    assert answer.usage.input_tokens == 11 and answer.usage.output_tokens == 4


def test_tool_calls_parsed(pair):
    p, fake = pair
    args = {"city": "Zürich", "days": [1, 2], "units": {"temp": "C"}}
    fake.script("m", Reply(tool_calls=[("weather", args), ("clock", {})]))
    events = list(p.stream(ASK, "m"))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    if p.api in ("openai", "anthropic"):
        assert len(deltas) > 4                                      # arguments arrive in fragments
    answer = p.complete(ASK, "m")
    assert [c.name for c in answer.tool_calls] == ["weather", "clock"]
    assert json.loads(answer.tool_calls[0].arguments) == args and json.loads(answer.tool_calls[1].arguments) == {}
    assert all(c.id for c in answer.tool_calls) and answer.tool_calls[0].id != answer.tool_calls[1].id
    assert answer.finish_reason == TOOL_CALLS and answer.text == ""


def test_reasoning_and_text(pair):
    p, fake = pair
    fake.script("m", Reply(text="four", reasoning="two and two make four"))
    events = list(p.stream(ASK, "m"))
    assert any(isinstance(e, ReasoningDelta) and e.text for e in events)
    answer = p.complete(ASK, "m")
    assert answer.text == "four" and answer.reasoning[0].text == "two and two make four"


@pytest.mark.parametrize("finish, expected", [("length", LENGTH), ("content_filter", CONTENT_FILTER)])
def test_finish_reasons(pair, finish, expected):
    p, fake = pair
    if p.api == "ollama" and finish == "content_filter":
        pytest.skip("Ollama has no content filter")
    fake.script("m", Reply(text="cut", finish=finish))
    assert p.complete(ASK, "m").finish_reason == expected


def test_models_list(pair):
    p, fake = pair
    fake.set_models(["alpha", "beta"])
    assert [m["id"] for m in p.list_models()] == ["alpha", "beta"]


# ---- faults -----------------------------------------------------------------------------------

def test_wrong_key_is_auth(pair):
    p, fake = pair
    fake.expect_key("sk-some-other-key")
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "auth" and "BENCHWARMERS_KEY_BENCH_EP" in err.hint
    assert err.message.startswith(f"{p.api} endpoint 'bench-ep'")
    err = failure(p.list_models)
    assert err.kind == "auth"


@pytest.mark.parametrize("status, kind", [(404, "not_found"), (500, "server"), (503, "server"),
                                          (400, "bad_request"), (403, "auth")])
def test_http_errors(pair, status, kind):
    p, fake = pair
    fake.script("m", Reply.error(status, message="the upstream's own words"))
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == kind and err.upstream_status == status
    assert "the upstream's own words" in err.message


def test_model_not_found_in_a_400_body(pair):
    p, fake = pair
    fake.script("m", Reply.error(400, message="model 'm' does not exist"))
    assert failure(lambda: p.complete(ASK, "m")).kind == "not_found"


def test_rate_limited_in_the_protocol_own_style(pair):
    p, fake = pair
    fake.script("m", Reply.error(429, retry_after=7))
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "rate_limited" and err.reset_at is not None
    if p.api != "openai":                                           # OpenAI's own headers carry resets only
        assert err.retry_after == 7


@pytest.mark.parametrize("style", ["openai", "anthropic", "openrouter", "retry_after", "retry_after_ms",
                                   "retry_after_date"])
def test_rate_limited_every_header_style(pair, style):
    p, fake = pair
    fake.script("m", Reply.error(429, style=style, retry_after=9))
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "rate_limited"
    assert p.transport.limits.get("bench-ep")
    assert err.reset_at == pytest.approx(time.time() + 9, abs=3)


def test_timeouts(pair):
    p, fake = pair
    fake.script("m", [Reply(delay=2), Reply(stall=True)])
    assert failure(lambda: p.complete(ASK, "m", timeouts=QUICK)).kind == "timeout"
    err = failure(lambda: p.complete(ASK, "m", timeouts=QUICK))
    assert err.kind == "timeout" and "stopped sending" in err.message


def test_garbage_is_bad_response(pair):
    p, fake = pair
    fake.script("m", Reply(garbage=True))
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "bad_response" and err.hint


@pytest.mark.parametrize("cut", [{"drop_after": 3}, {"end_after": 3}, {"drop_after": 0}])
def test_cut_streams_are_dropped(pair, cut):
    p, fake = pair
    fake.script("m", Reply(text="one two three four five six", **cut))
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "dropped"


def test_error_inside_the_stream(pair):
    p, fake = pair
    fake.script("m", Reply(text="one two three four", stream_error="Overloaded, try later"))
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "server" and "Overloaded, try later" in err.message


def test_connection_refused_for_every_protocol(pair):
    p, fake = pair
    url = fake.url
    fake.stop()                                                     # nothing listens there any more
    dead = make_provider(p.api, url, KEY, transport=Transport())
    err = failure(lambda: dead.complete(ASK, "m"))
    assert err.kind == "connection"
    assert "refused the connection. Is the server running on that port?" in str(err)        # two sentences
    assert err.to_dict()["message"] == str(err)


@pytest.mark.parametrize("exc", [socket.gaierror(-2, "Name or service not known"), ConnectionRefusedError(),
                                 TimeoutError(), OSError("network is unreachable")])
def test_every_connect_fault_is_said_in_whole_sentences(exc):
    text = str(connect_error(exc, "api.example.com", 443, " (through proxy p:8080)", 10))
    assert SENTENCE_BREAK.search(text) is None, text        # no sentence runs into the next without its stop
    assert text.endswith((".", "?")), text


def test_a_message_and_its_hint_are_two_sentences():
    assert str(UpstreamFailed("connection", "x refused the connection", "Is it up?")) == \
        "x refused the connection. Is it up?"
    assert str(BadRequest("Nope.", "Try `bench x`")) == "Nope. Try `bench x`."
    assert str(BadRequest("Say 'yes.'", "Or (say no.)")) == "Say 'yes.' Or (say no.)"
    assert str(BadRequest("upstream said 500")) == "upstream said 500"        # an upstream's words, as they came


def test_keys_never_appear_in_errors(pair):
    p, fake = pair
    fake.script("m", Reply.error(401, message=f"Incorrect API key provided: {KEY}"))
    err = failure(lambda: p.complete(ASK, "m"))
    for text in (str(err), err.message, err.hint or "", json.dumps(err.to_dict()), repr(err.args)):
        assert KEY not in text
    assert "[redacted]" in err.message
    fake.script("m", Reply(stream_error=f"bad key {KEY}"))
    assert KEY not in str(failure(lambda: p.complete(ASK, "m")))


def test_only_upstream_failed_escapes(pair):
    p, fake = pair
    for reply in (Reply(garbage=True), Reply(drop_after=1), Reply(end_after=0), Reply.error(418)):
        fake.script("m", reply)
        with pytest.raises(UpstreamFailed):
            p.complete(ASK, "m")
