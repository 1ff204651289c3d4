"""A parsed request is its Ask and, apart from it, its reply options and its pass-through; who asks is a value of
its own: the Ask every seat copies carries no wire."""
from __future__ import annotations

from dataclasses import fields

import pytest

from benchwarmers.askparts import ANYONE, Asker, PassThrough, ReplyOptions
from benchwarmers.canonical import Ask, Message, Text
from benchwarmers.formats import FORMATS, RequestInfo
from benchwarmers.providers.passthrough import native_body

HI = [{"role": "user", "content": "hi"}]
BODIES = {"openai_chat": {"model": "bench/core", "messages": HI, "stream": True},
          "openai_responses": {"model": "bench/core", "input": "hi", "stream": True},
          "openai_completions": {"model": "bench/core", "prompt": "hi", "stream": True},
          "anthropic": {"model": "bench/core", "max_tokens": 9, "messages": HI, "stream": True},
          "gemini": {"contents": [{"parts": [{"text": "hi"}]}]},
          "ollama": {"model": "bench/core", "messages": HI}}
HEADERS = {"anthropic-beta": "fine-grained-tool-streaming-2025-05-14", "authorization": "Bearer sk-secret",
           "x-api-key": "sk-other", "cookie": "bw_session=1", "x-claude-code-session-id": "s-1"}
WIRE_FIELDS = {"native", "native_api", "passthrough_headers", "dropped", "format", "stream", "caller", "session",
               "origin"}


def test_the_ask_holds_no_wire_and_no_asker():
    assert not WIRE_FIELDS & {f.name for f in fields(Ask)}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_parses_into_the_ask_its_reply_options_and_its_pass_through(name):
    assert set(BODIES) == set(FORMATS)           # a new format gets a body here
    fmt, body = FORMATS[name], BODIES[name]
    info = RequestInfo("/v1beta/models/bench/core:streamGenerateContent" if name == "gemini" else "/",
                       headers=HEADERS, path_model="bench/core", stream_route=name == "gemini")
    ask, reply, passthrough = fmt.parse(body, info)
    assert isinstance(ask, Ask) and ask.messages[0].text() == "hi" and ask.target.name == "core"
    assert reply == ReplyOptions(name, True, body)           # Ollama streams unless told not to; Gemini by its path
    assert (passthrough.api, passthrough.body, passthrough.dropped) == (fmt.NATIVE_API, body, ())
    assert passthrough.headers == {"anthropic-beta": HEADERS["anthropic-beta"]}   # cut at parse time: only that
    assert passthrough.takes(fmt.NATIVE_API) is (fmt.NATIVE_API is not None)


def test_what_cannot_be_carried_is_in_the_pass_through_and_narrowing_adds_what_no_member_may_get():
    body = {"model": "bench/core:route", "messages": HI, "n": 2, "provider": {"order": ["x"]},
            "tools": [{"type": "web_search"}, {"type": "function", "function": {"name": "f"}}]}
    parsed = FORMATS["openai_chat"].parse(body, RequestInfo("/v1/chat/completions"))
    assert parsed.passthrough.dropped == ("web_search tool", "n (only one choice is returned)")
    narrowed = parsed.passthrough.narrowed(native_body)
    assert "provider" not in narrowed.body and "n" not in narrowed.body and len(narrowed.body["tools"]) == 1
    assert narrowed.dropped == ("web_search tool", "n (only one choice is returned)", "field provider", "n=2")
    assert body["n"] == 2 and len(body["tools"]) == 2       # the client's body is left as it came
    generate = FORMATS["ollama"].parse({"model": "m", "prompt": "hi"}, RequestInfo("/api/generate")).passthrough
    assert generate.api is None and generate.narrowed(native_body) is generate and not generate.takes("ollama")


def test_who_asks_stays_apart_and_a_seats_copy_carries_the_content_alone():
    assert (ANYONE.caller, ANYONE.session, ANYONE.origin) == (None, None, None)
    assert Asker("ci", "s-1", None) != ANYONE and PassThrough().takes("openai") is False
    ask = Ask(messages=[Message("user", [Text("hi")])], max_tokens=100)
    copy = ask.with_max_tokens(7)
    assert set(vars(copy)) == set(vars(ask)) and copy.max_tokens == 7 and copy.messages is ask.messages
