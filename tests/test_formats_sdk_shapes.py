"""The official SDKs' own types and accumulators accept what each format renders and streams (offline)."""
import json

import pytest

from benchwarmers.canonical import (Answer, ErrorEvent, Finish, KeepAlive, Reasoning, ReasoningDelta, TextDelta,
                                    ToolCall, ToolCallDelta, Usage, UsageEvent)
from benchwarmers.errors import RateLimited
from benchwarmers.formats import anthropic, gemini, ollama, openai_chat, openai_completions, openai_responses
from benchwarmers.formats.base import ReplyInfo, RequestInfo

EVENTS = [ReasoningDelta("think"), ReasoningDelta(signature="sig"), TextDelta("Hel"), KeepAlive(), TextDelta("lo"),
          ToolCallDelta(0, "call_1", "get_weather", '{"city"'), ToolCallDelta(0, None, None, ': "Paris"}'),
          ToolCallDelta(1, "call_2", "get_time", "{}"), UsageEvent(Usage(10, 5, 2, 1)),
          Finish("tool_calls", extra={"panel": "p1"})]
ANSWER = Answer(text="Hello", tool_calls=[ToolCall("call_1", "get_weather", '{"city": "Paris"}')],
                reasoning=[Reasoning("think", "sig")], usage=Usage(10, 5, 2, 1), finish_reason="tool_calls",
                seconds=1.5, ttft=0.5)


def sse_data(raw: bytes) -> list[dict]:
    out = []
    for frame in raw.decode().split("\n\n"):
        for line in frame.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


def test_openai_chat_chunks_and_completion_validate():
    types = pytest.importorskip("openai.types.chat")
    ctx = ReplyInfo.new("bench/core", {"panel": "p1"}, native={"stream_options": {"include_usage": True}})
    chunks = sse_data(b"".join(openai_chat.stream(iter(EVENTS), ctx)))
    for chunk in chunks:
        types.ChatCompletionChunk.model_validate(chunk)
    done = types.ChatCompletion.model_validate(openai_chat.render(ANSWER, ctx))
    assert done.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert done.usage.total_tokens == 15


def test_openai_completions_validate():
    types = pytest.importorskip("openai.types")
    ctx = ReplyInfo.new("bench/core")
    chunks = sse_data(b"".join(openai_completions.stream(iter(EVENTS), ctx)))
    # the SDK builds chunks without validation; only the last carries a finish_reason its type accepts
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])
    assert types.Completion.model_validate(chunks[-1]).choices[0].finish_reason == "stop"
    assert "".join(c["choices"][0]["text"] for c in chunks) == "Hello"
    assert types.Completion.model_validate(openai_completions.render(ANSWER, ctx)).choices[0].text == "Hello"


def test_openai_responses_events_validate_and_accumulate():
    pytest.importorskip("openai")
    from pydantic import TypeAdapter
    from openai.types.responses import Response, ResponseStreamEvent
    adapter = TypeAdapter(ResponseStreamEvent)
    ctx = ReplyInfo.new("bench/core", native={"tools": [], "tool_choice": "auto"})
    events = [adapter.validate_python(e) for e in sse_data(b"".join(openai_responses.stream(iter(EVENTS), ctx)))]
    final = events[-1]
    assert final.type == "response.completed"
    assert [o.type for o in final.response.output] == ["reasoning", "message", "function_call", "function_call"]
    assert final.response.output[2].arguments == '{"city": "Paris"}'
    assert final.response.usage.total_tokens == 15
    whole = Response.model_validate(openai_responses.render(ANSWER, ctx))
    assert whole.output_text == "Hello"


def test_anthropic_events_accumulate_in_the_sdk():
    pytest.importorskip("anthropic")
    from pydantic import TypeAdapter
    from anthropic.types import Message, RawMessageStreamEvent
    from anthropic.lib.streaming._messages import accumulate_event
    adapter = TypeAdapter(RawMessageStreamEvent)
    snapshot, bufs = None, {}
    for data in sse_data(b"".join(anthropic.stream(iter(EVENTS), ReplyInfo.new("bench/core")))):
        if data["type"] == "ping":
            continue
        snapshot = accumulate_event(event=adapter.validate_python(data), current_snapshot=snapshot,
                                    json_bufs=bufs)
    assert [b.type for b in snapshot.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert snapshot.content[0].signature == "sig"
    assert snapshot.content[1].text == "Hello"
    assert snapshot.content[2].input == {"city": "Paris"}
    assert snapshot.stop_reason == "tool_use"
    # Anthropic's input_tokens leaves out the 2 cache reads and 1 cache write that the canonical 10 includes
    assert (snapshot.usage.input_tokens, snapshot.usage.output_tokens) == (7, 5)
    assert snapshot.usage.cache_read_input_tokens == 2
    whole = Message.model_validate(anthropic.render(ANSWER, ReplyInfo.new("bench/core")))
    assert whole.content[2].input == {"city": "Paris"}


def test_anthropic_error_event_validates():
    pytest.importorskip("anthropic")
    from anthropic.types import ErrorResponse
    frames = sse_data(b"".join(anthropic.stream(iter([ErrorEvent(RateLimited("slow down"))]),
                                                ReplyInfo.new("m"))))
    assert ErrorResponse.model_validate(frames[-1]).error.type == "rate_limit_error"


def test_gemini_records_validate():
    genai_types = pytest.importorskip("google.genai.types")
    ctx = ReplyInfo.new("bench/core", request=RequestInfo(path="/v1beta/models/bench/core:streamGenerateContent",
                                                          query={"alt": "sse"}))
    # the SDK drops unknown fields (our `bench`) before validating: _from_response does that
    records = [genai_types.GenerateContentResponse._from_response(response=r, kwargs={})
               for r in sse_data(b"".join(gemini.stream(iter(EVENTS), ctx)))]
    assert "".join(r.text or "" for r in records) == "Hello"
    calls = records[-1].function_calls
    assert [c.name for c in calls] == ["get_weather", "get_time"] and calls[0].args == {"city": "Paris"}
    assert records[-1].usage_metadata.total_token_count == 15
    whole = genai_types.GenerateContentResponse._from_response(response=gemini.render(ANSWER, ctx), kwargs={})
    assert whole.candidates[0].finish_reason == genai_types.FinishReason.STOP


def test_ollama_records_validate():
    ollama_mod = pytest.importorskip("ollama")
    ctx = ReplyInfo.new("bench/core", request=RequestInfo(path="/api/chat"))
    lines = [json.loads(x) for x in b"".join(ollama.stream(iter(EVENTS), ctx)).splitlines()]
    parsed = [ollama_mod.ChatResponse.model_validate(x) for x in lines]
    assert "".join(p.message.content or "" for p in parsed) == "Hello"
    calls = [c for p in parsed for c in (p.message.tool_calls or [])]
    assert calls[0].function.arguments == {"city": "Paris"}
    assert parsed[-1].done and parsed[-1].eval_count == 5
    gen = ReplyInfo.new("bench/core", request=RequestInfo(path="/api/generate"))
    assert ollama_mod.GenerateResponse.model_validate(ollama.render(ANSWER, gen)).response == "Hello"
    tags = ollama_mod.ListResponse.model_validate(ollama.tags([{"name": "bench/core"}]))
    assert tags.models[0].model == "bench/core"
    assert ollama_mod.ShowResponse.model_validate(ollama.show("bench/core", {"tools": True})).capabilities


def test_openai_responses_stream_helper_accumulates():
    pytest.importorskip("openai")
    from pydantic import TypeAdapter
    from openai import omit
    from openai.types.responses import ResponseStreamEvent
    from openai.lib.streaming.responses._responses import ResponseStreamState
    adapter = TypeAdapter(ResponseStreamEvent)
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    text_deltas = []
    for data in sse_data(b"".join(openai_responses.stream(iter(EVENTS), ReplyInfo.new("bench/core")))):
        for event in state.handle_event(adapter.validate_python(data)):
            if event.type == "response.output_text.delta":
                text_deltas.append(event.snapshot)
    assert text_deltas[-1] == "Hello"
    final = state._completed_response
    calls = [o for o in final.output if o.type == "function_call"]
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", '{"city": "Paris"}'), ("get_time", "{}")]
