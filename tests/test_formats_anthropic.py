"""Anthropic Messages: documented requests in; messages and the block-by-block SSE stream out."""
import json

import pytest

from benchwarmers.canonical import (Answer, ErrorEvent, Finish, Image, KeepAlive, Reasoning, ReasoningDelta,
                                    TextDelta, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent)
from benchwarmers.errors import BadRequest, Unavailable
from benchwarmers.formats import anthropic
from benchwarmers.formats.base import ReplyInfo, RequestInfo

REQ = RequestInfo(path="/v1/messages")


def events_of(raw: bytes) -> list[dict]:
    out = []
    for block in raw.decode().split("\n\n"):
        lines = [x for x in block.splitlines() if x]
        if lines:
            assert lines[0].startswith("event: ") and lines[1].startswith("data: ")
            data = json.loads(lines[1][6:])
            assert data["type"] == lines[0][7:]       # the SSE event name equals the JSON type
            out.append(data)
    return out


def test_parse_documented_request():
    body = {"model": "bench/core", "max_tokens": 1024, "system": "You are a seasoned data scientist.",
            "messages": [{"role": "user", "content": "Hello, world"}], "stop_sequences": ["\n\nHuman:"],
            "temperature": 0.7, "top_p": 0.95}
    ask, reply, passthrough = anthropic.parse(body, REQ)
    assert ask.system == "You are a seasoned data scientist."
    assert [(m.role, m.text()) for m in ask.messages] == [("user", "Hello, world")]
    assert (ask.max_tokens, ask.stop, ask.temperature, ask.top_p) == (1024, ["\n\nHuman:"], 0.7, 0.95)
    assert reply.format == "anthropic" and passthrough.body is body and not reply.stream


def test_parse_blocks_tools_thinking_and_mid_conversation_system():
    body = {"model": "bench/core:route", "max_tokens": 32000, "stream": True, "bench": {"with": ["m1"]},
            "system": [{"type": "text", "text": "You are Claude Code."},
                       {"type": "text", "text": "Be careful.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "get_weather", "description": "Get the current weather",
                       "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}},
                      {"type": "web_search_20250305", "name": "web_search"}],
            "tool_choice": {"type": "any"},
            "messages": [
                {"role": "user", "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
                    {"type": "text", "text": "Weather in SF?"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Use the tool.", "signature": "EqQB"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"location": "SF"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": True,
                     "content": [{"type": "text", "text": "service down"}]},
                    {"type": "text", "text": "Try again?"}]},
                {"role": "system", "content": "Stay in the repo."}]}
    ask, reply, passthrough = anthropic.parse(body, REQ)
    assert ask.system == "You are Claude Code.\n\nBe careful."
    assert [m.role for m in ask.messages] == ["user", "assistant", "tool", "user", "system"]
    first = ask.messages[0].parts
    assert isinstance(first[0], Image) and (first[0].media_type, first[0].data) == ("image/jpeg", "/9j/4AAQ")
    assert first[1].url == "https://example.com/cat.png" and first[2].text == "Weather in SF?"
    thinking, text, call = ask.messages[1].parts
    assert isinstance(thinking, Reasoning) and (thinking.text, thinking.signature) == ("Use the tool.", "EqQB")
    assert text.text == "Checking." and (call.id, call.name, call.args()) == ("toolu_01", "get_weather",
                                                                               {"location": "SF"})
    result = ask.messages[2].parts[0]
    assert isinstance(result, ToolResult) and (result.id, result.content, result.is_error) == ("toolu_01",
                                                                                            "service down", True)
    assert ask.messages[3].text() == "Try again?" and ask.messages[4].text() == "Stay in the repo."
    assert [t.name for t in ask.tools] == ["get_weather"] and passthrough.dropped == ("web_search_20250305 tool",)
    assert ask.tools[0].parameters["properties"] == {"location": {"type": "string"}}
    assert ask.tool_choice == "required" and reply.stream and ask.with_models == ["m1"]


@pytest.mark.parametrize("choice, want", [({"type": "auto"}, "auto"), ({"type": "none"}, "none"),
                                          ({"type": "tool", "name": "f"}, {"name": "f"})])
def test_tool_choice(choice, want):
    body = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tool_choice": choice}
    assert anthropic.parse(body, REQ).ask.tool_choice == want


@pytest.mark.parametrize("body, words", [
    ({"max_tokens": 1, "messages": []}, "`model`"),
    ({"model": "m", "messages": [{"role": "bot", "content": "x"}]}, "bot"),
    ({"model": "m", "messages": [{"role": "user", "content": [{"text": "no type"}]}]}, "type"),
    ({"model": "m", "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]}]},
     "source.type"),
    ({"model": "m", "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]},
     "tool_use_id"),
    ({"model": "m", "messages": [], "max_tokens": "many"}, "max_tokens"),
])
def test_parse_rejects(body, words):
    with pytest.raises(BadRequest) as info:
        anthropic.parse(body, REQ)
    assert words in info.value.message and info.value.hint


def test_count_tokens_estimates_locally():
    small = anthropic.count_tokens({"model": "m", "messages": [{"role": "user", "content": "Hello, world"}]})
    big = anthropic.count_tokens({"model": "m", "messages": [{"role": "user", "content": "Hello, world " * 100}]})
    assert 0 < small["input_tokens"] < big["input_tokens"]


def test_render_text_and_usage():
    ctx = ReplyInfo.new("bench/core")
    # canonical input counts the 3 cache reads and 4 cache writes; Anthropic's input_tokens leaves them out
    reply = anthropic.render(Answer(text="Hi!", usage=Usage(17, 2, 3, 4)), ctx)
    assert reply == {"id": "msg_" + ctx.id, "type": "message", "role": "assistant", "model": "bench/core",
                     "content": [{"type": "text", "text": "Hi!"}], "stop_reason": "end_turn",
                     "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2,
                                                      "cache_creation_input_tokens": 4,
                                                      "cache_read_input_tokens": 3}}


def test_render_tool_use_thinking_and_extra():
    answer = Answer(text="", tool_calls=[ToolCall("toolu_1", "Bash", '{"command": "ls"}')],
                    reasoning=[Reasoning("plan", "sig")], finish_reason="tool_calls")
    reply = anthropic.render(answer, ReplyInfo.new("bench/core:route", {"seat": 1}))
    assert reply["content"] == [{"type": "thinking", "thinking": "plan", "signature": "sig"},
                                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]
    assert reply["stop_reason"] == "tool_use" and reply["bench"] == {"seat": 1}
    assert anthropic.render(Answer(text="x", finish_reason="length"), ReplyInfo.new("m"))["stop_reason"] == \
        "max_tokens"


def test_stream_opens_with_message_start_before_pulling():
    def never():
        raise AssertionError("pulled too early")
        yield
    first, = events_of(next(anthropic.stream(never(), ReplyInfo.new("bench/core"))))
    message = first["message"]
    assert first["type"] == "message_start" and message["content"] == [] and message["role"] == "assistant"
    assert set(message["usage"]) == {"input_tokens", "output_tokens", "cache_creation_input_tokens",
                                     "cache_read_input_tokens"}


def test_stream_text_sequence():
    events = [TextDelta("Hel"), KeepAlive(), TextDelta("lo"), UsageEvent(Usage(17, 0, 5)),  # 17 in all: 12 fresh + 5 cache reads
              Finish("stop", Usage(0, 3), {"panel": "p"})]
    got = events_of(b"".join(anthropic.stream(iter(events), ReplyInfo.new("m"))))
    assert [e["type"] for e in got] == ["message_start", "content_block_start", "content_block_delta", "ping",
                                        "content_block_delta", "content_block_stop", "message_delta",
                                        "message_stop"]
    assert got[1] == {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    assert got[4]["delta"] == {"type": "text_delta", "text": "lo"} and got[5]["index"] == 0
    delta = got[6]
    assert delta["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert delta["usage"] == {"input_tokens": 12, "output_tokens": 3, "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 5}
    assert delta["bench"] == {"panel": "p"}


def test_stream_thinking_text_and_fragmented_tool_calls():
    events = [ReasoningDelta("Let me "), ReasoningDelta("see."), ReasoningDelta(signature="sig=="),
              TextDelta("Running it."), ToolCallDelta(0, "toolu_a", "Bash", '{"comm'),
              ToolCallDelta(0, arguments='and": "ls"}'), ToolCallDelta(1, None, "Read", '{}'), Finish("tool_calls")]
    got = events_of(b"".join(anthropic.stream(iter(events), ReplyInfo.new("m"))))
    starts = [e for e in got if e["type"] == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [(0, "thinking"), (1, "text"),
                                                                           (2, "tool_use"), (3, "tool_use")]
    assert starts[2]["content_block"] == {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {}}
    assert starts[3]["content_block"]["id"].startswith("toolu_")
    deltas = [(e["index"], e["delta"]) for e in got if e["type"] == "content_block_delta"]
    assert deltas[:3] == [(0, {"type": "thinking_delta", "thinking": "Let me "}),
                          (0, {"type": "thinking_delta", "thinking": "see."}),
                          (0, {"type": "signature_delta", "signature": "sig=="})]
    assert [d for i, d in deltas if i == 2] == [{"type": "input_json_delta", "partial_json": '{"comm'},
                                                {"type": "input_json_delta", "partial_json": 'and": "ls"}'}]
    stops = [e["index"] for e in got if e["type"] == "content_block_stop"]
    assert stops == [0, 1, 2, 3]
    assert got[-2]["delta"]["stop_reason"] == "tool_use" and got[-1] == {"type": "message_stop"}


def test_stream_error_mid_stream():
    events = [TextDelta("partial"), ErrorEvent(Unavailable("Overloaded")), TextDelta("never")]
    got = events_of(b"".join(anthropic.stream(iter(events), ReplyInfo.new("m"))))
    assert got[-1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert "message_stop" not in [e["type"] for e in got]
