"""OpenAI chat completions and legacy completions: documented requests in, replies and streams out."""
import json

import pytest

from benchwarmers.canonical import (Answer, ErrorEvent, Finish, Image, KeepAlive, TextDelta, ToolCall,
                                    ToolCallDelta, ToolResult, Usage, UsageEvent)
from benchwarmers.errors import BadRequest, UpstreamFailed
from benchwarmers.formats import openai_chat, openai_completions
from benchwarmers.formats.base import ReplyInfo, RequestInfo, sse

REQ = RequestInfo(path="/v1/chat/completions")


def frames(raw: bytes) -> list:
    """SSE frames as (event, data) with data JSON-decoded ([DONE] kept as a string); comments skipped."""
    out = []
    for block in raw.decode().split("\n\n"):
        lines = [x for x in block.splitlines() if x and not x.startswith(":")]
        if not lines:
            continue
        event = next((x[7:] for x in lines if x.startswith("event: ")), None)
        data = "\n".join(x[6:] for x in lines if x.startswith("data: "))
        out.append((event, data if data == "[DONE]" else json.loads(data)))
    return out


# ---- parse -----------------------------------------------------------------------------------

def test_parse_documented_basic_request():
    body = {"model": "bench/core", "messages": [
        {"role": "developer", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello!"}]}
    ask, reply, passthrough = openai_chat.parse(body, REQ)
    assert ask.system == "You are a helpful assistant."
    assert [(m.role, m.text()) for m in ask.messages] == [("user", "Hello!")]
    assert (ask.target.name, ask.target.mode, reply.format) == ("core", "panel", "openai_chat")
    assert passthrough.body is body and reply.stream is False


def test_parse_vision_parts_with_http_and_data_urls():
    body = {"model": "bench/core:merged", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "What's in this image?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/boardwalk.jpg", "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}]}]}
    ask = openai_chat.parse(body, REQ).ask
    parts = ask.messages[0].parts
    assert parts[0].text == "What's in this image?"
    assert isinstance(parts[1], Image) and parts[1].url == "https://example.com/boardwalk.jpg"
    assert (parts[2].media_type, parts[2].data) == ("image/jpeg", "/9j/4AAQ")
    assert ask.target.mode == "merged" and ask.has_images()


def test_parse_tool_loop_and_options():
    body = {"model": "bench/core:route", "stream": True, "stop": "END", "max_completion_tokens": 100,
            "temperature": 0.2, "top_p": 0.9, "stream_options": {"include_usage": True},
            "bench": {"with": ["llama-free"]},
            "tools": [{"type": "function", "function": {
                "name": "get_current_weather", "description": "Get the current weather in a given location",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                               "required": ["location"]}}}],
            "tool_choice": {"type": "function", "function": {"name": "get_current_weather"}},
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                {"role": "user", "content": "Weather in Boston?"},
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_abc123", "type": "function",
                    "function": {"name": "get_current_weather", "arguments": "{\"location\": \"Boston\"}"}}]},
                {"role": "tool", "tool_call_id": "call_abc123", "content": "72F and sunny"},
                {"role": "system", "content": "Answer in French."}]}
    ask, reply, _ = openai_chat.parse(body, REQ)
    assert ask.system == "Be brief."
    assert [m.role for m in ask.messages] == ["user", "assistant", "tool", "system"]
    call = ask.messages[1].parts[0]
    assert (call.id, call.name, call.args()) == ("call_abc123", "get_current_weather", {"location": "Boston"})
    result = ask.messages[2].parts[0]
    assert isinstance(result, ToolResult) and (result.id, result.content) == ("call_abc123", "72F and sunny")
    assert ask.tools[0].name == "get_current_weather" and ask.tools[0].parameters["required"] == ["location"]
    assert ask.tool_choice == {"name": "get_current_weather"}
    assert (ask.max_tokens, ask.temperature, ask.top_p, ask.stop) == (100, 0.2, 0.9, ["END"])
    assert reply.stream and ask.with_models == ["llama-free"] and ask.target.mode == "route"


def test_parse_legacy_functions():
    body = {"model": "m", "functions": [{"name": "f", "parameters": {"type": "object", "properties": {}}}],
            "function_call": {"name": "f"}, "max_tokens": 5, "stop": ["a", "b"],
            "messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
                         {"role": "function", "name": "f", "content": "done"}]}
    ask = openai_chat.parse(body, REQ).ask
    assert [t.name for t in ask.tools] == ["f"] and ask.tool_choice == {"name": "f"}
    assert ask.messages[1].parts[0].name == "f" and ask.messages[2].parts[0].content == "done"
    assert ask.max_tokens == 5 and ask.stop == ["a", "b"] and ask.target.mode == "direct"


@pytest.mark.parametrize("body, words", [
    ({"messages": [{"role": "user", "content": "hi"}]}, "`model` is required"),
    ({"model": "m", "messages": "hi"}, "`messages` must be a list"),
    ({"model": "m", "messages": []}, "empty"),
    ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "robot"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, "`temperature`"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "at least 1"),
    ({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png,abc"}}]}]}, "base64"),
    ({"model": "m", "messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
    ({"model": "m", "messages": [{"role": "user", "content": "x"}], "bench": {"with": [1]}}, "bench.with[0]"),
])
def test_parse_rejects_bad_requests_with_a_hint(body, words):
    with pytest.raises(BadRequest) as info:
        openai_chat.parse(body, REQ)
    assert words in info.value.message and info.value.hint


def test_unsupported_parts_are_dropped_visibly():
    body = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "listen"}, {"type": "input_audio", "input_audio": {"data": "x", "format": "wav"}}]}]}
    ask, _, passthrough = openai_chat.parse(body, REQ)
    assert passthrough.dropped == ("input_audio content part",) and ask.messages[0].text() == "listen"


# ---- render ----------------------------------------------------------------------------------

def test_render_text_answer():
    ctx = ReplyInfo.new("bench/core")
    reply = openai_chat.render(Answer(text="Hi there", usage=Usage(9, 3, 4)), ctx)
    assert reply["id"] == "chatcmpl-" + ctx.id and reply["object"] == "chat.completion"
    assert reply["model"] == "bench/core" and reply["created"] == ctx.created
    choice = reply["choices"][0]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "Hi there", "refusal": None}
    assert reply["usage"] == {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12,
                              "prompt_tokens_details": {"cached_tokens": 4}}
    assert "bench" not in reply


def test_render_tool_calls_and_extra():
    answer = Answer(tool_calls=[ToolCall("call_1", "get_weather", '{"city":"Paris"}')], finish_reason="tool_calls")
    reply = openai_chat.render(answer, ReplyInfo.new("bench/core:route", {"seats": []}))
    message = reply["choices"][0]["message"]
    assert message["content"] is None
    assert message["tool_calls"] == [{"id": "call_1", "type": "function",
                                      "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]
    assert reply["choices"][0]["finish_reason"] == "tool_calls" and reply["bench"] == {"seats": []}


# ---- stream ----------------------------------------------------------------------------------

def test_stream_opens_before_the_first_event():
    def never():
        raise AssertionError("pulled too early")
        yield
    first = next(openai_chat.stream(never(), ReplyInfo.new("m")))
    (_, data), = frames(first)
    assert data["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert data["object"] == "chat.completion.chunk" and data["model"] == "m" and data["created"]


@pytest.mark.parametrize("model", ["m", "bench/café \"quoted\" {}", "x\u0000y"])
def test_a_streams_delta_frames_are_the_bytes_of_its_chunks(model):
    ctx = ReplyInfo.new(model)
    frame = openai_chat.delta_frames(ctx)
    for delta in ({"role": "assistant", "content": ""}, {"content": "é\n{}\"\u2028"}, {"reasoning_content": "r"},
                  {"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":1}"}}]}):
        assert frame(delta) == sse(openai_chat._chunk(ctx, delta))


def test_stream_text_with_usage_and_extra():
    ctx = ReplyInfo.new("bench/core", native={"stream_options": {"include_usage": True}})
    events = [TextDelta("## seat 1\n"), KeepAlive(), TextDelta("hello"), UsageEvent(Usage(5, 2)),
              Finish("stop", Usage(5, 3), {"panel": "p"})]
    raw = b"".join(openai_chat.stream(iter(events), ctx))
    assert b": keep-alive\n\n" in raw
    got = frames(raw)
    assert got[-1] == (None, "[DONE]")
    chunks = [d for _, d in got[:-1]]
    assert all(c["id"] == "chatcmpl-" + ctx.id and c["object"] == "chat.completion.chunk" for c in chunks)
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1]) == "## seat 1\nhello"
    closing, usage = chunks[-2], chunks[-1]
    assert closing["choices"][0]["finish_reason"] == "stop" and closing["bench"] == {"panel": "p"}
    assert usage["choices"] == [] and usage["usage"]["prompt_tokens"] == 5 and usage["usage"]["total_tokens"] == 8


def test_stream_without_include_usage_has_no_usage_chunk():
    raw = b"".join(openai_chat.stream(iter([TextDelta("x"), Finish()]), ReplyInfo.new("m")))
    assert all("usage" not in d for _, d in frames(raw)[:-1])


def test_stream_tool_call_fragments():
    events = [ToolCallDelta(0, "call_1", "get_weather", '{"ci'), ToolCallDelta(0, arguments='ty": "Paris"}'),
              ToolCallDelta(1, "call_2", "get_time", ""), Finish("tool_calls")]
    chunks = [d for _, d in frames(b"".join(openai_chat.stream(iter(events), ReplyInfo.new("m"))))[:-1]]
    deltas = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-1]]
    assert deltas[0] == {"index": 0, "id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"ci'}}
    assert deltas[1] == {"index": 0, "function": {"arguments": 'ty": "Paris"}'}}
    assert deltas[2]["index"] == 1 and deltas[2]["id"] == "call_2"
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_stream_error_mid_stream():
    events = [TextDelta("partial"), ErrorEvent(UpstreamFailed("server", "upstream said 500")), TextDelta("never")]
    got = frames(b"".join(openai_chat.stream(iter(events), ReplyInfo.new("m"))))
    assert got[-1] == (None, "[DONE]")
    error = got[-2][1]["error"]
    assert error["message"] == "upstream said 500" and error["code"] == "upstream_server"
    assert error["type"] == "server_error"
    assert all("never" not in json.dumps(d) for _, d in got)


def test_models_list():
    listing = openai_chat.models_list(["bench/core", "bench/core:merged"])
    assert listing["object"] == "list"
    assert listing["data"][1] == {"id": "bench/core:merged", "object": "model", "created": 0,
                                  "owned_by": "benchwarmers"}


# ---- legacy completions ----------------------------------------------------------------------

def test_completions_parse_prompt_forms():
    ask, reply, _ = openai_completions.parse({"model": "bench/core", "prompt": "Say this is a test", "max_tokens": 7,
                                              "temperature": 0, "stop": "\n"}, RequestInfo(path="/v1/completions"))
    assert ask.messages[0].text() == "Say this is a test"
    assert (ask.max_tokens, ask.temperature, ask.stop, reply.format) == (7, 0.0, ["\n"], "openai_completions")
    joined = openai_completions.parse({"model": "m", "prompt": ["a", "b"]}, REQ).ask
    assert joined.messages[0].text() == "a\nb"
    for bad in ([1, 2, 3], [[1, 2]], None, 5):
        with pytest.raises(BadRequest):
            openai_completions.parse({"model": "m", "prompt": bad}, REQ)


def test_completions_render_and_stream():
    ctx = ReplyInfo.new("bench/core", {"k": 1}, native={"stream_options": {"include_usage": True}})
    reply = openai_completions.render(Answer(text="This is a test.", usage=Usage(5, 7), finish_reason="length"), ctx)
    assert reply["object"] == "text_completion" and reply["id"] == "cmpl-" + ctx.id
    assert reply["choices"] == [{"text": "This is a test.", "index": 0, "logprobs": None, "finish_reason": "length"}]
    assert reply["usage"]["total_tokens"] == 12 and reply["bench"] == {"k": 1}
    got = frames(b"".join(openai_completions.stream(iter([TextDelta("This "), TextDelta("is"), Finish()]), ctx)))
    assert got[-1] == (None, "[DONE]")
    texts = [d["choices"][0]["text"] for _, d in got[:-2]]
    assert "".join(texts) == "This is" and got[-3][1]["choices"][0]["finish_reason"] == "stop"
    assert got[-2][1]["choices"] == [] and got[-2][1]["usage"]["prompt_tokens"] == 0
    failed = frames(b"".join(openai_completions.stream(iter([ErrorEvent(BadRequest("no"))]), ctx)))
    assert failed[-2][1]["error"]["type"] == "invalid_request_error"
