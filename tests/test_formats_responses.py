"""OpenAI Responses: input items in; response objects and the typed event stream out."""
import json

import pytest

from benchwarmers.canonical import (Answer, ErrorEvent, Finish, KeepAlive, Reasoning, ReasoningDelta, TextDelta,
                                    ToolCall, ToolCallDelta, Usage, UsageEvent)
from benchwarmers.errors import BadRequest, Timeout
from benchwarmers.formats import openai_responses as responses
from benchwarmers.formats.base import ReplyInfo, RequestInfo

REQ = RequestInfo(path="/v1/responses")


def events_of(raw: bytes) -> list[dict]:
    """Each SSE frame's data, checking its `event:` name equals the JSON type."""
    out = []
    for block in raw.decode().split("\n\n"):
        lines = [x for x in block.splitlines() if x and not x.startswith(":")]
        if lines:
            assert lines[0].startswith("event: ") and lines[1].startswith("data: ")
            data = json.loads(lines[1][6:])
            assert data["type"] == lines[0][7:]
            out.append(data)
    return out


def test_parse_string_input_and_instructions():
    body = {"model": "bench/core", "instructions": "Talk like a pirate.", "input": "Are semicolons optional?",
            "max_output_tokens": 50, "temperature": 0.5}
    ask, reply, _ = responses.parse(body, REQ)
    assert ask.system == "Talk like a pirate."
    assert [(m.role, m.text()) for m in ask.messages] == [("user", "Are semicolons optional?")]
    assert (ask.max_tokens, ask.temperature, reply.format) == (50, 0.5, "openai_responses")


def test_parse_items_with_images_tools_and_calls():
    body = {"model": "bench/core:route", "stream": True, "tool_choice": {"type": "function", "name": "get_weather"},
            "tools": [{"type": "function", "name": "get_weather", "description": "Weather for a city",
                       "strict": True, "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
                      {"type": "web_search"}],
            "input": [
                {"role": "developer", "content": "You are terse."},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "what is in this image?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A cat."}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                 "arguments": "{\"city\": \"Paris\"}"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather",
                 "arguments": "{\"city\": \"Rome\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
                {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text",
                                                                                    "text": "25C"}]},
                {"role": "system", "content": "Now be kind."}]}
    ask, reply, passthrough = responses.parse(body, REQ)
    assert ask.system == "You are terse."
    assert [m.role for m in ask.messages] == ["user", "assistant", "tool", "tool", "system"]
    assert ask.messages[0].parts[1].data == "iVBORw0KGgo="
    assistant = ask.messages[1]
    assert assistant.text() == "A cat." and [c.id for c in assistant.parts[1:]] == ["call_1", "call_2"]
    assert [m.parts[0].content for m in ask.messages[2:4]] == ["18C", "25C"]
    assert [t.name for t in ask.tools] == ["get_weather"] and passthrough.dropped == ("web_search tool",)
    assert ask.tool_choice == {"name": "get_weather"} and reply.stream


@pytest.mark.parametrize("body, words", [
    ({"input": "hi"}, "`model`"),
    ({"model": "m"}, "`input` is required"),
    ({"model": "m", "input": "hi", "previous_response_id": "resp_1"}, "previous_response_id"),
    ({"model": "m", "input": [{"type": "function_call", "name": "f"}]}, "call_id"),
    ({"model": "m", "input": [{"role": "tool", "content": "x"}]}, "role"),
    ({"model": "m", "input": "x", "tools": [{"name": "f"}]}, "tools[0].type"),
])
def test_parse_rejects(body, words):
    with pytest.raises(BadRequest) as info:
        responses.parse(body, REQ)
    assert words in info.value.message and info.value.hint


def test_render_text_tools_reasoning_and_extra():
    ctx = ReplyInfo.new("bench/core", {"seats": [1]}, native={"instructions": "be nice", "max_output_tokens": 9})
    answer = Answer(text="Hi", tool_calls=[ToolCall("call_9", "f", '{"a":1}')], reasoning=[Reasoning("hmm", "enc")],
                    usage=Usage(7, 3, 1), finish_reason="tool_calls")
    reply = responses.render(answer, ctx)
    assert (reply["id"], reply["object"], reply["status"], reply["model"]) == ("resp_" + ctx.id, "response",
                                                                               "completed", "bench/core")
    assert reply["instructions"] == "be nice" and reply["max_output_tokens"] == 9 and reply["store"] is False
    kinds = [o["type"] for o in reply["output"]]
    assert kinds == ["reasoning", "message", "function_call"]
    assert reply["output"][0]["encrypted_content"] == "enc"
    assert reply["output"][1]["content"][0] == {"type": "output_text", "text": "Hi", "annotations": [],
                                                "logprobs": []}
    call = reply["output"][2]
    assert (call["call_id"], call["name"], call["arguments"], call["status"]) == ("call_9", "f", '{"a":1}',
                                                                                  "completed")
    assert reply["usage"]["input_tokens"] == 7 and reply["usage"]["total_tokens"] == 10
    assert reply["usage"]["input_tokens_details"]["cached_tokens"] == 1 and reply["bench"] == {"seats": [1]}


def test_render_length_is_incomplete():
    reply = responses.render(Answer(text="cut", finish_reason="length"), ReplyInfo.new("m"))
    assert reply["status"] == "incomplete" and reply["incomplete_details"] == {"reason": "max_output_tokens"}


def test_stream_opens_before_the_first_event():
    def never():
        raise AssertionError("pulled too early")
        yield
    gen = responses.stream(never(), ReplyInfo.new("m"))
    opening = events_of(next(gen) + next(gen))
    assert [e["type"] for e in opening] == ["response.created", "response.in_progress"]
    assert opening[0]["response"]["status"] == "in_progress" and opening[0]["sequence_number"] == 0


def test_stream_text_sequence():
    ctx = ReplyInfo.new("bench/core")
    raw = b"".join(responses.stream(iter([TextDelta("Hel"), KeepAlive(), TextDelta("lo"), UsageEvent(Usage(4, 2)),
                                          Finish(extra={"panel": "x"})]), ctx))
    assert b": keep-alive" in raw
    got = events_of(raw)
    assert [e["type"] for e in got] == [
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.completed"]
    assert [e["sequence_number"] for e in got] == list(range(len(got)))
    item_id = got[2]["item"]["id"]
    assert all(e["item_id"] == item_id and e["output_index"] == 0 for e in got[3:8])
    assert got[6]["text"] == "Hello" and got[8]["item"]["content"][0]["text"] == "Hello"
    done = got[-1]["response"]
    assert done["status"] == "completed" and done["output"][0]["status"] == "completed"
    assert done["usage"] == {"input_tokens": 4, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                             "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
                             "total_tokens": 6}
    assert done["bench"] == {"panel": "x"} and done["id"] == "resp_" + ctx.id
    assert b"[DONE]" not in raw


def test_stream_reasoning_then_tool_calls():
    events = [ReasoningDelta("think"), ReasoningDelta(signature="enc"),
              ToolCallDelta(0, "call_1", "exec_command", '{"cmd":'), ToolCallDelta(0, arguments=' "ls"}'),
              ToolCallDelta(1, "call_2", "exec_command", '{"cmd": "pwd"}'), Finish("tool_calls")]
    got = events_of(b"".join(responses.stream(iter(events), ReplyInfo.new("m"))))
    assert [e["type"] for e in got[2:]] == [
        "response.output_item.added", "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.delta", "response.output_item.added",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done", "response.function_call_arguments.done", "response.output_item.done",
        "response.completed"]
    added = got[8]["item"]
    assert (added["type"], added["call_id"], added["name"], added["arguments"]) == ("function_call", "call_1",
                                                                                   "exec_command", "")
    assert got[13]["arguments"] == '{"cmd": "ls"}' and got[13]["output_index"] == 1
    output = got[-1]["response"]["output"]
    assert [o["type"] for o in output] == ["reasoning", "function_call", "function_call"]
    assert output[0]["encrypted_content"] == "enc" and output[2]["arguments"] == '{"cmd": "pwd"}'


def test_stream_error_is_response_failed():
    got = events_of(b"".join(responses.stream(iter([TextDelta("a"), ErrorEvent(Timeout("seat timed out"))]),
                                              ReplyInfo.new("m"))))
    assert got[-1]["type"] == "response.failed"
    failed = got[-1]["response"]
    assert failed["status"] == "failed" and failed["error"] == {"code": "timeout", "message": "seat timed out"}
    assert got[-1]["sequence_number"] == len(got) - 1


def test_stream_length_finish_is_incomplete():
    got = events_of(b"".join(responses.stream(iter([TextDelta("a"), Finish("length")]), ReplyInfo.new("m"))))
    assert got[-1]["type"] == "response.incomplete"
    assert got[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
