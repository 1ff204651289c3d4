"""The fakes are faithful: each protocol's official SDK reads them, whole and streamed, with tool calls and errors."""
from __future__ import annotations

import pytest

from tests.fakes import FakeAnthropic, FakeGemini, FakeOllama, FakeOpenAI, Reply

ARGS = {"city": "Paris", "days": [1, 2]}


def test_openai_sdk():
    openai = pytest.importorskip("openai")
    with FakeOpenAI() as fake:
        fake.expect_key("sk-test")
        client = openai.OpenAI(base_url=fake.url, api_key="sk-test", max_retries=0)
        msgs = [{"role": "user", "content": "hi"}]
        whole = client.chat.completions.create(model="m", messages=msgs)
        assert whole.choices[0].message.content == "m says: hi" and whole.usage.prompt_tokens == 1
        chunks = list(client.chat.completions.create(model="m", messages=msgs, stream=True,
                                                     stream_options={"include_usage": True}))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "m says: hi"
        assert chunks[-1].usage.completion_tokens == 3
        fake.script("t", Reply.tool("weather", ARGS))
        call = client.chat.completions.create(model="t", messages=msgs).choices[0].message.tool_calls[0]
        assert call.function.name == "weather" and call.function.arguments == '{"city": "Paris", "days": [1, 2]}'
        with client.chat.completions.stream(model="t", messages=msgs) as stream:
            final = stream.get_final_completion()
        assert final.choices[0].message.tool_calls[0].function.arguments == '{"city": "Paris", "days": [1, 2]}'
        assert [m.id for m in client.models.list()] == ["fake-model"]
        fake.script("r", Reply.error(429))
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="r", messages=msgs)
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=fake.url, api_key="wrong", max_retries=0).models.list()


def test_anthropic_sdk():
    anthropic = pytest.importorskip("anthropic")
    with FakeAnthropic() as fake:
        fake.expect_key("sk-ant")
        client = anthropic.Anthropic(base_url=fake.root, api_key="sk-ant", max_retries=0)
        msgs = [{"role": "user", "content": "hi"}]
        whole = client.messages.create(model="c", max_tokens=50, messages=msgs)
        assert whole.content[0].text == "c says: hi" and whole.stop_reason == "end_turn"
        fake.script("t", Reply(text="Let me check.", reasoning="think", signature="sig",
                               tool_calls=[("weather", ARGS)], usage={"cache_read": 7}))
        with client.messages.stream(model="t", max_tokens=50, messages=msgs) as stream:
            final = stream.get_final_message()
        assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
        assert final.content[1].text == "Let me check." and final.content[2].input == ARGS
        assert final.content[0].signature == "sig" and final.usage.cache_read_input_tokens == 7
        assert final.stop_reason == "tool_use"
        assert [m.id for m in client.models.list()] == ["fake-model"]
        fake.script("o", Reply.error(529))
        with pytest.raises(anthropic.APIStatusError) as info:
            client.messages.create(model="o", max_tokens=5, messages=msgs)
        assert info.value.status_code == 529
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=fake.root, api_key="bad", max_retries=0).messages.create(
                model="c", max_tokens=5, messages=msgs)


def test_google_genai_sdk():
    genai = pytest.importorskip("google.genai")
    from google.genai import types
    with FakeGemini() as fake:
        fake.expect_key("AIza")
        client = genai.Client(api_key="AIza", http_options=types.HttpOptions(base_url=fake.root,
                                                                             api_version="v1beta"))
        whole = client.models.generate_content(model="g", contents="hi")
        assert whole.text == "g says: hi" and whole.usage_metadata.prompt_token_count == 1
        streamed = "".join(c.text or "" for c in client.models.generate_content_stream(model="g", contents="hi"))
        assert streamed == "g says: hi"
        assert fake.last.query.get("alt") == "sse" and fake.last.headers["x-goog-api-key"] == "AIza"
        fake.script("t", Reply.tool("weather", ARGS))
        call = client.models.generate_content(model="t", contents="hi").function_calls[0]
        assert call.name == "weather" and call.args == ARGS
        fake.script("r", Reply.error(429))
        with pytest.raises(genai.errors.ClientError) as info:
            client.models.generate_content(model="r", contents="hi")
        assert info.value.code == 429


def test_ollama_sdk():
    ollama = pytest.importorskip("ollama")
    with FakeOllama() as fake:
        client = ollama.Client(host=fake.root)
        msgs = [{"role": "user", "content": "hi"}]
        whole = client.chat(model="l", messages=msgs, stream=False)
        assert whole.message.content == "l says: hi" and whole.done and whole.eval_count == 3
        streamed = list(client.chat(model="l", messages=msgs, stream=True))
        assert "".join(c.message.content for c in streamed) == "l says: hi" and streamed[-1].done
        fake.script("t", Reply.tool("weather", ARGS))
        calls = client.chat(model="t", messages=msgs, stream=False).message.tool_calls
        assert calls[0].function.name == "weather" and dict(calls[0].function.arguments) == ARGS
        assert [m.model for m in client.list().models] == ["fake-model"]
        assert client.generate(model="l", prompt="yo", stream=False).response == "l says: yo"
        fake.script("x", Reply.error(404))
        with pytest.raises(ollama.ResponseError) as info:
            client.chat(model="x", messages=msgs, stream=False)
        assert info.value.status_code == 404 and "not found" in info.value.error
