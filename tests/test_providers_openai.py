"""The OpenAI chat-completions adapter: what it sends, and what it makes of what comes back."""
from __future__ import annotations

import pytest

from benchwarmers.canonical import Ask, Image, Message, Text
from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers import Transport, make_provider
from tests.fakes import FakeOpenAI, Reply
from tests.fakes.samples import CAT_URL, PNG_B64, conversation, parallel_tools


@pytest.fixture
def fake():
    with FakeOpenAI() as f:
        yield f


@pytest.fixture
def p(fake):
    return make_provider("openai", fake.url, "sk-test", name="oa", transport=Transport())


def test_request_shape(p, fake):
    p.complete(conversation(), "gpt-x")
    rec = fake.last
    assert rec.method == "POST" and rec.path == "/v1/chat/completions"
    assert rec.headers["authorization"] == "Bearer sk-test"
    body = rec.body
    assert body["model"] == "gpt-x" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["stop"]) == (100, 0.2, 0.9, ["END"])
    assert body["tools"] == [{"type": "function", "function": {
        "name": "weather", "description": "Weather by city", "parameters": conversation().tools[0].parameters}}]
    assert body["tool_choice"] == "auto"
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "system", "user"]   # system stays where it was


def test_messages_carry_images_tools_and_results(p, fake):
    p.complete(conversation(), "gpt-x")
    system, user, assistant, tool, mid, last = fake.last.body["messages"]
    assert system == {"role": "system", "content": "You are terse."}
    assert user["content"] == [
        {"type": "text", "text": "Look at these"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
        {"type": "image_url", "image_url": {"url": CAT_URL}}]
    assert assistant == {"role": "assistant", "content": "Checking the weather.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]}
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'}
    assert mid == {"role": "system", "content": "Answer in French."}
    assert last == {"role": "user", "content": "And tomorrow?"}


def test_parallel_tool_results_and_errors(p, fake):
    p.complete(parallel_tools(), "gpt-x")
    msgs = fake.last.body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool", "user"]
    assert msgs[1]["content"] is None and [c["id"] for c in msgs[1]["tool_calls"]] == ["c1", "c2"]
    assert msgs[3] == {"role": "tool", "tool_call_id": "c2", "content": "Error: service down"}


@pytest.mark.parametrize("choice, sent", [("required", "required"), ("none", "none"),
                                          ({"name": "weather"}, {"type": "function", "function": {"name": "weather"}})])
def test_tool_choice(p, fake, choice, sent):
    p.complete(conversation(tool_choice=choice), "gpt-x")
    assert fake.last.body["tool_choice"] == sent


def test_plain_ask_sends_only_what_it_has(p, fake):
    p.complete(Ask(messages=[Message("user", [Text("hi")])]), "gpt-x")
    body = fake.last.body
    assert set(body) == {"model", "messages", "stream", "stream_options"}
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_cached_tokens_are_cache_reads(p, fake):
    fake.script("gpt-x", Reply(text="ok", usage={"input": 1200, "output": 3, "cache_read": 1024}))
    usage = p.complete(conversation(), "gpt-x").usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (1200, 3, 1024)


def test_server_that_ignores_stream_true(p, fake):
    fake.script("gpt-x", Reply(text="whole answer", ignore_stream=True, tool_calls=[("weather", {"city": "Oslo"})],
                               usage={"input": 9, "output": 2}))
    answer = p.complete(conversation(), "gpt-x")
    assert answer.text == "whole answer" and answer.tool_calls[0].args() == {"city": "Oslo"}
    assert answer.usage.input_tokens == 9 and answer.finish_reason == "tool_calls"


def test_server_that_refuses_stream_options(p, fake):
    fake.script("gpt-x", [Reply.error(400, message="Unrecognized request argument supplied: stream_options")])
    assert p.complete(conversation(), "gpt-x").text.startswith("gpt-x says:")
    assert "stream_options" in fake.requests[0].body and "stream_options" not in fake.requests[1].body
    assert p.supports["stream_usage"] is False
    p.complete(conversation(), "gpt-x")
    assert "stream_options" not in fake.last.body                      # remembered for this endpoint


def test_models_list_facts_openrouter_style(p, fake):
    fake.set_models([
        {"id": "meta/llama:free", "context_length": 131072, "top_provider": {"max_completion_tokens": 8192},
         "architecture": {"input_modalities": ["text", "image"]}, "supported_parameters": ["tools", "temperature"]},
        {"id": "plain"},
        {"id": "vllm-model", "max_model_len": 32768, "supported_parameters": ["temperature"],
         "architecture": {"input_modalities": ["text"]}},
    ])
    assert p.list_models() == [
        {"id": "meta/llama:free", "context_window": 131072, "max_output": 8192, "vision": True, "tools": True},
        {"id": "plain"},
        {"id": "vllm-model", "context_window": 32768, "vision": False, "tools": False}]
    assert fake.last.path == "/v1/models" and fake.last.headers["authorization"] == "Bearer sk-test"


def test_base_url_forms(fake):
    for base in (fake.url, fake.url + "/"):
        make_provider("openai", base, None, transport=Transport()).complete(Ask(messages=[
            Message("user", [Text("x")])]), "m")
        assert fake.last.path == "/v1/chat/completions"
    assert make_provider("openai", "", None).base == "https://api.openai.com/v1"


def test_data_url_image_passes_through(p, fake):
    url = f"data:image/png;base64,{PNG_B64}"
    p.complete(Ask(messages=[Message("user", [Image(url=url)])]), "m")
    assert fake.last.body["messages"][0]["content"] == [{"type": "image_url", "image_url": {"url": url}}]


def test_reasoning_model_parameters_adapted_and_remembered(p, fake):
    fake.script("o-x", [
        Reply.error(400, message="Unsupported parameter: 'max_tokens' is not supported with this model. "
                                 "Use 'max_completion_tokens' instead."),
        Reply.error(400, message="Unsupported value: 'temperature' does not support 0.2 with this model. "
                                 "Only the default (1) value is supported.")])
    assert p.complete(conversation(), "o-x").text.startswith("o-x says:")
    sent = [r.body for r in fake.requests]
    assert "max_tokens" in sent[0] and sent[1]["max_completion_tokens"] == 100 and "max_tokens" not in sent[1]
    assert "temperature" not in sent[2] and "top_p" not in sent[2] and sent[2]["max_completion_tokens"] == 100
    p.complete(conversation(), "o-x")
    assert len(fake.requests) == 4 and fake.last.body["max_completion_tokens"] == 100   # no more refusals


def test_an_unrelated_400_is_not_retried(p, fake):
    fake.script("m", Reply.error(400, message="messages: too many images"))
    with pytest.raises(UpstreamFailed) as info:
        p.complete(conversation(), "m")
    assert info.value.kind == "bad_request" and len(fake.requests) == 1


@pytest.mark.parametrize("message, kind", [
    ("model 'gpt-9' does not exist", "not_found"), ("The model `x` does not exist", "not_found"),
    ("No endpoints found for meta/llama-9", "bad_request"), ("No endpoints found for model meta/llama", "not_found"),
    ("model x: image input is not supported", "bad_request"), ("Invalid key 'foo' in request body", "bad_request"),
    ("Incorrect API key provided: sk-****", "auth"), ("API key not valid. Please pass a valid API key.", "auth"),
    ("Tool 'search' not found", "bad_request")])
def test_what_a_400_means(p, fake, message, kind):
    fake.script("m", Reply.error(400, message=message))
    with pytest.raises(UpstreamFailed) as info:
        p.complete(Ask(messages=[Message("user", [Text("x")])]), "m")
    assert info.value.kind == kind
