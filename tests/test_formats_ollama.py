"""Ollama native API: /api/chat and /api/generate requests in; NDJSON records and listings out."""
import json

import pytest

from benchwarmers.canonical import (Answer, ErrorEvent, Finish, KeepAlive, ReasoningDelta, TextDelta, ToolCall,
                                    ToolCallDelta, ToolResult, Usage, UsageEvent)
from benchwarmers.errors import BadRequest, NotFound
from benchwarmers.formats import ollama
from benchwarmers.formats.base import ReplyInfo, RequestInfo

CHAT = RequestInfo(path="/api/chat")
GENERATE = RequestInfo(path="/api/generate")


def lines_of(raw: bytes) -> list[dict]:
    assert raw.endswith(b"\n")
    return [json.loads(x) for x in raw.decode().splitlines()]


def test_parse_documented_chat_request_streams_by_default():
    body = {"model": "bench/core", "messages": [{"role": "system", "content": "Be brief."},
                                                {"role": "user", "content": "why is the sky blue?"}],
            "options": {"num_predict": 64, "temperature": 0.1, "top_p": 0.5, "stop": ["\n\n"], "seed": 1}}
    ask, reply, _ = ollama.parse(body, CHAT)
    assert reply.stream is True and ask.system == "Be brief."
    assert [(m.role, m.text()) for m in ask.messages] == [("user", "why is the sky blue?")]
    assert (ask.max_tokens, ask.temperature, ask.top_p, ask.stop) == (64, 0.1, 0.5, ["\n\n"])
    assert reply.format == "ollama" and ask.target.name == "core"
    assert ollama.parse({**body, "stream": False}, CHAT).reply.stream is False


def test_parse_chat_images_and_tool_loop():
    body = {"model": "bench/core:route", "stream": False,
            "tools": [{"type": "function", "function": {
                "name": "get_current_weather", "description": "Get the current weather for a location",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                               "required": ["location"]}}}],
            "messages": [
                {"role": "user", "content": "what is in this image?", "images": ["iVBORw0KGgoAAAANSUhEUg"]},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "get_current_weather", "arguments": {"location": "Paris"}}}]},
                {"role": "tool", "content": "22 degrees", "tool_name": "get_current_weather"}]}
    ask = ollama.parse(body, CHAT).ask
    assert [m.role for m in ask.messages] == ["user", "assistant", "tool"]
    image = ask.messages[0].parts[1]
    assert (image.media_type, image.data) == ("image/png", "iVBORw0KGgoAAAANSUhEUg")
    call = ask.messages[1].parts[0]
    assert isinstance(call, ToolCall) and call.args() == {"location": "Paris"}
    result = ask.messages[2].parts[0]
    assert isinstance(result, ToolResult) and (result.id, result.content) == (call.id, "22 degrees")
    assert ask.tools[0].name == "get_current_weather" and ask.target.mode == "route"


def test_parse_generate_request():
    body = {"model": "bench/core", "prompt": "Why is the sky blue?", "system": "Answer like a poet.",
            "images": ["/9j/4AAQSkZJRg"], "stream": False, "options": {"num_predict": -1}}
    ask, reply, _ = ollama.parse(body, GENERATE)
    assert ask.system == "Answer like a poet." and ask.messages[0].text() == "Why is the sky blue?"
    assert ask.messages[0].parts[1].media_type == "image/jpeg" and ask.max_tokens is None and not reply.stream


@pytest.mark.parametrize("body, words", [
    ({"messages": []}, "`model`"),
    ({"model": "m"}, "`messages` is required"),
    ({"model": "m", "messages": [{"role": "bot", "content": "x"}]}, "bot"),
    ({"model": "m", "messages": [{"role": "user", "content": 5}]}, "content"),
    ({"model": "m", "messages": [], "options": {"temperature": "x"}}, "options.temperature"),
    ({"model": "m", "messages": [], "stream": "yes"}, "stream"),
])
def test_parse_rejects(body, words):
    with pytest.raises(BadRequest) as info:
        ollama.parse(body, CHAT)
    assert words in info.value.message and info.value.hint


def test_render_chat_and_generate():
    answer = Answer(text="Blue light scatters.", usage=Usage(26, 298), seconds=2.0, ttft=0.5)
    chat = ollama.render(answer, ReplyInfo.new("bench/core", {"seats": []}, request=CHAT))
    assert chat["model"] == "bench/core" and chat["created_at"].endswith("Z")
    assert chat["message"] == {"role": "assistant", "content": "Blue light scatters."}
    assert (chat["done"], chat["done_reason"], chat["prompt_eval_count"], chat["eval_count"]) == (True, "stop",
                                                                                                  26, 298)
    assert chat["total_duration"] == 2_000_000_000 and chat["prompt_eval_duration"] == 500_000_000
    assert chat["eval_duration"] == 1_500_000_000 and chat["load_duration"] == 0 and chat["bench"] == {"seats": []}
    generate = ollama.render(answer, ReplyInfo.new("bench/core", request=GENERATE))
    assert generate["response"] == "Blue light scatters." and "message" not in generate and "bench" not in generate


def test_render_tool_calls_as_objects():
    answer = Answer(tool_calls=[ToolCall("c1", "get_current_weather", '{"location": "Paris"}')],
                    finish_reason="tool_calls")
    reply = ollama.render(answer, ReplyInfo.new("m", request=CHAT))
    assert reply["message"]["tool_calls"] == [{"function": {"name": "get_current_weather",
                                                             "arguments": {"location": "Paris"}}}]
    assert reply["done_reason"] == "stop"


def test_stream_chat_records():
    def events():
        yield ReasoningDelta("hmm")
        yield TextDelta("The")
        yield KeepAlive()
        yield TextDelta(" sky")
        yield ToolCallDelta(0, None, "f", '{"a":')
        yield ToolCallDelta(0, arguments=" 1}")
        yield UsageEvent(Usage(10, 4))
        yield Finish("length", extra={"panel": "p"})
    records = lines_of(b"".join(ollama.stream(events(), ReplyInfo.new("bench/core", request=CHAT))))
    assert records[0]["message"] == {"role": "assistant", "content": ""} and records[0]["done"] is False
    assert records[1]["message"]["thinking"] == "hmm"
    assert "".join(r["message"]["content"] for r in records) == "The sky"
    assert records[-2]["message"]["tool_calls"] == [{"function": {"name": "f", "arguments": {"a": 1}}}]
    last = records[-1]
    assert last["done"] is True and last["done_reason"] == "length" and last["bench"] == {"panel": "p"}
    assert (last["prompt_eval_count"], last["eval_count"]) == (10, 4)
    for key in ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration"):
        assert isinstance(last[key], int) and last[key] >= 0
    assert all(r["done"] is False for r in records[:-1]) and all(r["model"] == "bench/core" for r in records)


def test_stream_generate_records_and_error():
    ctx = ReplyInfo.new("m", request=GENERATE)
    records = lines_of(b"".join(ollama.stream(iter([TextDelta("Hi"), Finish()]), ctx)))
    assert [r["response"] for r in records] == ["", "Hi", ""] and records[-1]["done"] is True
    failed = lines_of(b"".join(ollama.stream(iter([TextDelta("Hi"), ErrorEvent(NotFound("no such collection")),
                                                   TextDelta("never")]), ctx)))
    assert failed[-1] == {"error": "no such collection"} and len(failed) == 3


def test_listings():
    tags = ollama.tags([{"name": "bench/core"}, {"name": "bench/core:route", "size": 5}])
    first = tags["models"][0]
    assert (first["name"], first["model"], first["size"]) == ("bench/core", "bench/core", 0)
    assert len(first["digest"]) == 64 and set(first["details"]) >= {"format", "family", "parameter_size",
                                                                     "quantization_level"}
    assert tags["models"][1]["size"] == 5
    assert ollama.version()["version"].count(".") == 2
    shown = ollama.show("bench/core", {"context_window": 128000, "tools": True, "vision": False})
    assert shown["capabilities"] == ["completion", "tools"]
    assert shown["model_info"]["bench.context_length"] == 128000
