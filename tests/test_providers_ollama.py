"""The Ollama adapter: /api/chat NDJSON, base-URL forms, images as base64 lists, tools as objects."""
from __future__ import annotations

import pytest

from benchwarmers.canonical import LENGTH, Ask, Message, Text
from benchwarmers.providers import Transport, make_provider
from tests.fakes import FakeOllama, Reply
from tests.fakes.samples import CAT_URL, PNG_B64, conversation, parallel_tools


@pytest.fixture
def fake():
    with FakeOllama() as f:
        yield f


@pytest.fixture
def p(fake):
    return make_provider("ollama", fake.url, None, name="local", transport=Transport())


def test_request_shape(p, fake):
    p.complete(conversation(), "llama3:8b")
    rec = fake.last
    assert rec.path == "/api/chat" and "authorization" not in rec.headers
    body = rec.body
    assert body["model"] == "llama3:8b" and body["stream"] is True
    assert body["options"] == {"num_predict": 100, "temperature": 0.2, "top_p": 0.9, "stop": ["END"]}
    assert body["tools"] == [{"type": "function", "function": {
        "name": "weather", "description": "Weather by city", "parameters": conversation().tools[0].parameters}}]
    system, user, assistant, tool, mid, last = body["messages"]
    assert system == {"role": "system", "content": "You are terse."}
    assert user == {"role": "user", "content": f"Look at these\n[image: {CAT_URL}]", "images": [PNG_B64]}
    assert assistant == {"role": "assistant", "content": "Checking the weather.",
                         "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Paris"}}}]}
    assert tool == {"role": "tool", "content": '{"temp": 21}', "tool_name": "weather"}
    assert mid == {"role": "system", "content": "Answer in French."}
    assert last == {"role": "user", "content": "And tomorrow?"}


def test_parallel_results(p, fake):
    p.complete(parallel_tools(), "llama3")
    msgs = fake.last.body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool", "user"]
    assert msgs[1]["content"] == "" and len(msgs[1]["tool_calls"]) == 2
    assert msgs[3] == {"role": "tool", "content": "Error: service down", "tool_name": "weather"}


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/api", "/api/"])
def test_base_url_forms(fake, suffix):
    p = make_provider("ollama", fake.url + suffix, None, transport=Transport())
    assert p.complete(Ask(messages=[Message("user", [Text("x")])]), "m").text == "m says: x"
    assert fake.last.path == "/api/chat"


def test_key_sent_as_bearer_when_given(fake):
    fake.expect_key("ollama-cloud-key")
    p = make_provider("ollama", fake.url, "ollama-cloud-key", transport=Transport())
    p.complete(Ask(messages=[Message("user", [Text("x")])]), "m")
    assert fake.last.headers["authorization"] == "Bearer ollama-cloud-key"


def test_usage_length_and_thinking(p, fake):
    fake.script("m", Reply(text="abc", reasoning="thinking hard", finish="length", usage={"input": 26, "output": 3}))
    answer = p.complete(Ask(messages=[Message("user", [Text("x")])]), "m")
    assert answer.finish_reason == LENGTH and answer.text == "abc" and answer.reasoning[0].text == "thinking hard"
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (26, 3)


def test_models_from_tags(p, fake):
    fake.set_models(["llama3:8b", {"id": "qwen3:4b", "details": {"family": "qwen3", "parameter_size": "4B"}}])
    assert p.list_models() == [
        {"id": "llama3:8b", "family": "llama", "parameter_size": "8.0B", "quantization_level": "Q4_K_M"},
        {"id": "qwen3:4b", "family": "qwen3", "parameter_size": "4B"}]
    assert fake.last.path == "/api/tags"
    assert make_provider("ollama", "", None).base == "http://localhost:11434"
