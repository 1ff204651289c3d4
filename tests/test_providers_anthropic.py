"""The Anthropic Messages adapter: what it sends (the fake checks the API's rules), and what it reads back."""
from __future__ import annotations

import pytest

from benchwarmers.canonical import Ask, Message, Reasoning, Text, ToolCall, ToolResult
from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers import Transport, make_provider
from tests.fakes import FakeAnthropic, Reply
from tests.fakes.samples import CAT_URL, PNG_B64, conversation, parallel_tools


@pytest.fixture
def fake():
    with FakeAnthropic() as f:
        f.expect_key("sk-ant-test")
        yield f


@pytest.fixture
def p(fake):
    return make_provider("anthropic", fake.url, "sk-ant-test", name="claude", transport=Transport())


def test_request_shape(p, fake):
    p.complete(conversation(), "claude-x")
    rec = fake.last
    assert rec.path == "/v1/messages"
    assert rec.headers["x-api-key"] == "sk-ant-test" and rec.headers["anthropic-version"] == "2023-06-01"
    body = rec.body
    assert body["model"] == "claude-x" and body["stream"] is True and body["max_tokens"] == 100
    assert body["system"] == "You are terse.\n\nAnswer in French."     # the mid-conversation system, folded in
    assert (body["temperature"], body["top_p"], body["stop_sequences"]) == (0.2, 0.9, ["END"])
    assert body["tools"] == [{"name": "weather", "description": "Weather by city",
                              "input_schema": conversation().tools[0].parameters}]
    assert body["tool_choice"] == {"type": "auto"}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


def test_messages_carry_images_tools_and_results(p, fake):
    p.complete(conversation(), "claude-x")
    user, assistant, last = fake.last.body["messages"]
    assert user["content"] == [
        {"type": "text", "text": "Look at these"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
        {"type": "image", "source": {"type": "url", "url": CAT_URL}}]
    assert assistant["content"] == [{"type": "text", "text": "Checking the weather."},
                                    {"type": "tool_use", "id": "call_1", "name": "weather",
                                     "input": {"city": "Paris"}}]
    # the tool result and the next user text share one user turn, the result first
    assert last["content"] == [{"type": "tool_result", "tool_use_id": "call_1", "content": '{"temp": 21}'},
                               {"type": "text", "text": "And tomorrow?"}]


def test_parallel_results_in_one_turn(p, fake):
    p.complete(parallel_tools(), "claude-x")
    msgs = fake.last.body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert [b["type"] for b in msgs[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert msgs[2]["content"][1] == {"type": "tool_result", "tool_use_id": "c2", "content": "service down",
                                     "is_error": True}


def test_default_max_tokens(p, fake):
    p.complete(Ask(messages=[Message("user", [Text("hi")])]), "claude-x")
    assert fake.last.body["max_tokens"] == 4096 and "system" not in fake.last.body


@pytest.mark.parametrize("choice, sent", [("required", {"type": "any"}), ("none", {"type": "none"}),
                                          ({"name": "weather"}, {"type": "tool", "name": "weather"})])
def test_tool_choice(p, fake, choice, sent):
    p.complete(conversation(tool_choice=choice), "claude-x")
    assert fake.last.body["tool_choice"] == sent


def test_empty_text_blocks_are_not_sent(p, fake):
    ask = Ask(messages=[Message("user", [Text(""), Text("real question")]),
                        Message("assistant", [Text(""), ToolCall("t1", "weather", "{}")]),
                        Message("tool", [ToolResult("t1", "sunny")])])
    p.complete(ask, "claude-x")                                        # the fake refuses empty text blocks
    assert fake.last.body["messages"][1]["content"] == [{"type": "tool_use", "id": "t1", "name": "weather",
                                                         "input": {}}]


def test_usage_with_cache(p, fake):
    fake.script("claude-x", Reply(text="ok", usage={"input": 12, "output": 30, "cache_read": 2000, "cache_write": 500}))
    usage = p.complete(conversation(), "claude-x").usage
    # the canonical input counts every input token: Anthropic's 12 fresh plus the cached 2000 read and 500 written
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == \
        (2512, 30, 2000, 500)


def test_thinking_round_trip(p, fake):
    fake.script("claude-x", Reply(text="Yes.", reasoning="Let me think.", signature="EqQBCkYIBxgCKkA"))
    answer = p.complete(conversation(), "claude-x")
    assert answer.reasoning == [Reasoning("Let me think.", "EqQBCkYIBxgCKkA")]
    history = Ask(messages=[Message("user", [Text("q")]),
                            Message("assistant", [Text("Yes."), *answer.reasoning]),
                            Message("user", [Text("why?")])])
    p.complete(history, "claude-x")
    assert fake.last.body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCkYIBxgCKkA"},
        {"type": "text", "text": "Yes."}]


def test_unsigned_or_foreign_reasoning_is_not_sent(p, fake):
    history = Ask(messages=[Message("user", [Text("q")]),
                            Message("assistant", [Reasoning("hm"), Reasoning("", "gemini-sig"), Text("A")]),
                            Message("user", [Text("again")])])
    p.complete(history, "claude-x")
    assert fake.last.body["messages"][1]["content"] == [{"type": "text", "text": "A"}]


def test_overloaded_mid_stream(p, fake):
    fake.script("claude-x", Reply(text="partial answer here", stream_error="Overloaded"))
    with pytest.raises(UpstreamFailed) as info:
        p.complete(conversation(), "claude-x")
    assert info.value.kind == "server" and "Overloaded" in info.value.message


def test_base_url_with_v1_and_models(fake):
    p = make_provider("anthropic", fake.url + "/v1/", "sk-ant-test", transport=Transport())
    assert p.base == fake.url
    fake.set_models([{"id": "claude-x", "display_name": "Claude X"}, "claude-y"])
    assert p.list_models() == [{"id": "claude-x", "name": "Claude X"}, {"id": "claude-y", "name": "claude-y"}]
    assert fake.last.path == "/v1/models" and fake.last.headers["anthropic-version"] == "2023-06-01"
    assert make_provider("anthropic", None, None).base == "https://api.anthropic.com"
