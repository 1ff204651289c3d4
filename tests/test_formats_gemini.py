"""Gemini generateContent: documented requests in; responses, SSE records and JSON-array streams out."""
import json

import pytest

from benchwarmers.canonical import (Answer, ErrorEvent, Finish, KeepAlive, Reasoning, TextDelta, ToolCall,
                                    ToolCallDelta, ToolResult, Usage, UsageEvent)
from benchwarmers.errors import BadRequest, RateLimited
from benchwarmers.formats import gemini
from benchwarmers.formats.base import ReplyInfo, RequestInfo

REQ = RequestInfo(path="/v1beta/models/bench/core:generateContent", path_model="bench/core")
SSE_REQ = RequestInfo(path="/v1beta/models/bench/core:streamGenerateContent", query={"alt": "sse"},
                      path_model="bench/core", stream_route=True)


def sse_records(raw: bytes) -> list[dict]:
    blocks = [b for b in raw.decode().split("\n\n") if b.strip()]
    assert all(b.startswith("data: ") for b in blocks)
    return [json.loads(b[6:]) for b in blocks]


def test_parse_documented_text_request():
    body = {"system_instruction": {"parts": [{"text": "You are a cat. Your name is Neko."}]},
            "contents": [{"parts": [{"text": "Hello there"}]}],
            "generationConfig": {"stopSequences": ["Title"], "temperature": 1.0, "maxOutputTokens": 800,
                                 "topP": 0.8, "topK": 10}}
    ask, reply, _ = gemini.parse(body, REQ)
    assert ask.system == "You are a cat. Your name is Neko."
    assert [(m.role, m.text()) for m in ask.messages] == [("user", "Hello there")]
    assert (ask.max_tokens, ask.temperature, ask.top_p, ask.stop) == (800, 1.0, 0.8, ["Title"])
    assert (ask.target.name, ask.target.mode, reply.format, reply.stream) == ("core", "panel", "gemini", False)


def test_parse_function_calling_round_trip_and_images():
    body = {"contents": [
        {"role": "user", "parts": [{"text": "Lights and a photo"},
                                   {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
                                   {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/a.png"}}]},
        {"role": "model", "parts": [{"text": "ok", "thought": True, "thoughtSignature": "sigA"},
                                    {"functionCall": {"name": "set_light_values",
                                                      "args": {"brightness": 25, "color_temp": "warm"}}},
                                    {"functionCall": {"name": "set_light_values", "args": {"brightness": 50}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "set_light_values",
                                                         "response": {"brightness": 25}}},
                                   {"functionResponse": {"name": "set_light_values",
                                                         "response": {"brightness": 50}}}]}],
        "tools": [{"functionDeclarations": [{
            "name": "set_light_values", "description": "Sets the brightness and color temperature of a light.",
            "parameters": {"type": "OBJECT", "properties": {"brightness": {"type": "INTEGER"}},
                           "required": ["brightness"]}}]}, {"googleSearch": {}}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["set_light_values"]}}}
    ask, reply, passthrough = gemini.parse(body, SSE_REQ)
    assert reply.stream and [m.role for m in ask.messages] == ["user", "assistant", "tool"]
    text, inline, file = ask.messages[0].parts
    assert (inline.media_type, inline.data) == ("image/jpeg", "/9j/4AAQ") and file.url == "https://example.com/a.png"
    thought, c1, c2 = ask.messages[1].parts
    assert isinstance(thought, Reasoning) and thought.signature == "sigA"
    assert c1.args() == {"brightness": 25, "color_temp": "warm"} and c1.id != c2.id
    r1, r2 = ask.messages[2].parts
    assert isinstance(r1, ToolResult) and (r1.id, r2.id) == (c1.id, c2.id) and r1.name == "set_light_values"
    assert json.loads(r2.content) == {"brightness": 50}
    tool, = ask.tools
    assert tool.parameters == {"type": "object", "properties": {"brightness": {"type": "integer"}},
                               "required": ["brightness"]}
    assert ask.tool_choice == {"name": "set_light_values"} and passthrough.dropped == ("tool googleSearch",)


@pytest.mark.parametrize("body, ctx, words", [
    ({"contents": []}, RequestInfo(path="/v1beta/models"), "No model"),
    ({}, REQ, "`contents` is required"),
    ({"contents": [{"parts": [{"text": 5}]}]}, REQ, "text"),
    ({"contents": [{"parts": [{"functionCall": {"args": {}}}]}]}, REQ, "name"),
    ({"contents": [], "generationConfig": {"temperature": "warm"}}, REQ, "temperature"),
])
def test_parse_rejects(body, ctx, words):
    with pytest.raises(BadRequest) as info:
        gemini.parse(body, ctx)
    assert words in info.value.message and info.value.hint


def test_render_text_and_usage():
    ctx = ReplyInfo.new("bench/core")
    reply = gemini.render(Answer(text="Meow", usage=Usage(8, 2)), ctx)
    assert reply["candidates"] == [{"content": {"role": "model", "parts": [{"text": "Meow"}]}, "index": 0,
                                    "finishReason": "STOP"}]
    assert reply["usageMetadata"] == {"promptTokenCount": 8, "candidatesTokenCount": 2, "totalTokenCount": 10}
    assert reply["modelVersion"] == "bench/core" and "bench" not in reply


def test_render_function_calls_and_extra():
    answer = Answer(tool_calls=[ToolCall("call_1", "f", '{"x": 1}')], finish_reason="tool_calls")
    reply = gemini.render(answer, ReplyInfo.new("bench/core", {"seats": []}))
    assert reply["candidates"][0]["content"]["parts"] == [{"functionCall": {"id": "call_1", "name": "f",
                                                                            "args": {"x": 1}}}]
    assert reply["candidates"][0]["finishReason"] == "STOP" and reply["bench"] == {"seats": []}
    assert gemini.render(Answer(finish_reason="length"), ReplyInfo.new("m"))["candidates"][0]["finishReason"] == \
        "MAX_TOKENS"


def test_stream_sse_text_and_tool_calls():
    ctx = ReplyInfo.new("bench/core", request=SSE_REQ)
    events = [TextDelta("Hel"), KeepAlive(), TextDelta("lo"), ToolCallDelta(0, None, "f", '{"a"'),
              ToolCallDelta(0, arguments=": 2}"), UsageEvent(Usage(3, 4)), Finish("tool_calls", extra={"p": 1})]
    raw = b"".join(gemini.stream(iter(events), ctx))
    assert gemini.stream_content_type(ctx) == "text/event-stream"
    records = sse_records(raw)
    texts = [r["candidates"][0]["content"]["parts"][0].get("text") for r in records[:-1]]
    assert texts == ["Hel", "", "lo"]
    last = records[-1]
    assert last["candidates"][0]["content"] == {"role": "model", "parts": [{"functionCall": {"name": "f",
                                                                                              "args": {"a": 2}}}]}
    assert last["candidates"][0]["finishReason"] == "STOP" and last["bench"] == {"p": 1}
    assert last["usageMetadata"]["totalTokenCount"] == 7
    assert all("finishReason" not in r["candidates"][0] for r in records[:-1])


def test_stream_json_array_without_alt_sse():
    ctx = ReplyInfo.new("m", request=RequestInfo(path="/v1beta/models/m:streamGenerateContent", stream_route=True))
    gen = gemini.stream(iter([TextDelta("a"), KeepAlive(), TextDelta("b"), Finish()]), ctx)
    assert next(gen) == b"["
    raw = b"[" + b"".join(gen)
    records = json.loads(raw)
    assert gemini.stream_content_type(ctx) == "application/json"
    assert [r["candidates"][0]["content"]["parts"][0]["text"] for r in records] == ["a", "b", ""]
    assert records[-1]["candidates"][0]["finishReason"] == "STOP"


def test_stream_error_record():
    ctx = ReplyInfo.new("m", request=SSE_REQ)
    records = sse_records(b"".join(gemini.stream(iter([TextDelta("a"), ErrorEvent(RateLimited("quota")),
                                                        TextDelta("b")]), ctx)))
    assert records[-1] == {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    array_ctx = ReplyInfo.new("m", request=RequestInfo(path="/x", stream_route=True))
    records = json.loads(b"".join(gemini.stream(iter([ErrorEvent(RateLimited("quota"))]), array_ctx)))
    assert records == [{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}]


def test_models_list():
    listing = gemini.models_list(["bench/core"])
    assert listing["models"][0]["name"] == "models/bench/core"
    assert "generateContent" in listing["models"][0]["supportedGenerationMethods"]
