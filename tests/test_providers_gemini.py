"""The Gemini adapter: URL and key placement, contents/roles, tools as objects, signatures, URL images as notes."""
from __future__ import annotations

import pytest

from benchwarmers.canonical import Ask, Image, Message, Reasoning, Text, ToolCall, ToolResult
from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers import Transport, make_provider
from tests.fakes import FakeGemini, Reply
from tests.fakes.samples import CAT_URL, PNG_B64, conversation, parallel_tools


@pytest.fixture
def fake():
    with FakeGemini() as f:
        f.expect_key("AIza-test")
        yield f


@pytest.fixture
def p(fake):
    return make_provider("gemini", fake.url, "AIza-test", name="gem", transport=Transport())


def test_request_shape(p, fake):
    p.complete(conversation(), "gemini-x")
    rec = fake.last
    assert rec.path == "/v1beta/models/gemini-x:streamGenerateContent" and rec.query == {"alt": "sse"}
    assert rec.headers["x-goog-api-key"] == "AIza-test"                # in a header, never in the URL
    body = rec.body
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse.\n\nAnswer in French."}]}
    assert body["generationConfig"] == {"maxOutputTokens": 100, "temperature": 0.2, "topP": 0.9,
                                        "stopSequences": ["END"]}
    assert body["tools"] == [{"functionDeclarations": [{
        "name": "weather", "description": "Weather by city",
        "parametersJsonSchema": conversation().tools[0].parameters}]}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]


def test_contents_carry_images_calls_and_results(p, fake):
    p.complete(conversation(), "gemini-x")
    user, model, last = fake.last.body["contents"]
    assert user["parts"] == [{"text": "Look at these"},
                             {"inlineData": {"mimeType": "image/png", "data": PNG_B64}},
                             {"text": f"[image: {CAT_URL}]"}]             # never fetched: a visible note
    assert model["parts"] == [{"text": "Checking the weather."},
                              {"functionCall": {"name": "weather", "args": {"city": "Paris"}},
                               "thoughtSignature": "skip_thought_signature_validator"}]   # unsigned history
    assert last["parts"] == [{"functionResponse": {"name": "weather", "response": {"temp": 21}}},
                             {"text": "And tomorrow?"}]


def test_parallel_results_named_by_their_calls(p, fake):
    p.complete(parallel_tools(), "gemini-x")
    results = fake.last.body["contents"][2]["parts"]
    assert results[0] == {"functionResponse": {"name": "weather", "response": {"output": "21C"}}}
    assert results[1] == {"functionResponse": {"name": "weather", "response": {"error": "service down"}}}
    assert results[2] == {"text": "Thanks"}


@pytest.mark.parametrize("choice, sent", [
    ("required", {"functionCallingConfig": {"mode": "ANY"}}),
    ("none", {"functionCallingConfig": {"mode": "NONE"}}),
    ({"name": "weather"}, {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}})])
def test_tool_choice(p, fake, choice, sent):
    p.complete(conversation(tool_choice=choice), "gemini-x")
    assert fake.last.body["toolConfig"] == sent


def test_data_url_image_goes_inline(p, fake):
    p.complete(Ask(messages=[Message("user", [Image(url=f"data:image/jpeg;base64,{PNG_B64}")])]), "g")
    assert fake.last.body["contents"][0]["parts"] == [{"inlineData": {"mimeType": "image/jpeg", "data": PNG_B64}}]


def test_calls_get_ids_and_signatures_round_trip(p, fake):
    fake.script("g", Reply(tool_calls=[("weather", {"city": "Paris"}), ("weather", {"city": "Rome"})],
                           signature="sig-abc"))
    answer = p.complete(Ask(messages=[Message("user", [Text("weather?")])]), "g")
    assert [c.args()["city"] for c in answer.tool_calls] == ["Paris", "Rome"]
    assert all(c.id.startswith("call_") for c in answer.tool_calls)
    assert answer.reasoning == [Reasoning("", "sig-abc")]
    assert answer.finish_reason == "tool_calls"
    history = Ask(messages=[
        Message("user", [Text("weather?")]),
        Message("assistant", [*answer.reasoning, *answer.tool_calls]),
        Message("tool", [ToolResult(answer.tool_calls[0].id, "21C"), ToolResult(answer.tool_calls[1].id, "25C")])])
    p.complete(history, "g")
    parts = fake.last.body["contents"][1]["parts"]
    assert parts[0]["thoughtSignature"] == "sig-abc" and "thoughtSignature" not in parts[1]
    assert [r["functionResponse"]["name"] for r in fake.last.body["contents"][2]["parts"]] == ["weather"] * 2


def test_signature_on_the_tool_call_itself(p, fake):
    call = ToolCall("c1", "weather", '{"city": "Paris"}')
    call.signature = "sig-on-call"
    p.complete(Ask(messages=[Message("user", [Text("q")]), Message("assistant", [call]),
                             Message("tool", [ToolResult("c1", "21C")])]), "g")
    assert fake.last.body["contents"][1]["parts"][0]["thoughtSignature"] == "sig-on-call"


def test_thinking_with_text_is_not_taken_for_a_signature(p, fake):
    p.complete(Ask(messages=[Message("user", [Text("q")]),
                             Message("assistant", [Reasoning("claude thinking", "anthropic-sig"), Text("A")]),
                             Message("user", [Text("q2")])]), "g")
    assert fake.last.body["contents"][1]["parts"] == [{"text": "A"}]


def test_usage_thoughts_and_cache(p, fake):
    fake.script("g", Reply(text="ok", reasoning="hmm", usage={"input": 50, "output": 8, "cache_read": 32}))
    answer = p.complete(Ask(messages=[Message("user", [Text("q")])]), "g")
    assert answer.reasoning[0].text == "hmm" and answer.text == "ok"
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.cache_read_tokens) == (50, 8, 32)


def test_bad_key_is_auth_even_as_400(fake):
    fake.expect_key("right")
    with pytest.raises(UpstreamFailed) as info:
        make_provider("gemini", fake.url, "wrong", transport=Transport()).complete(conversation(), "g")
    assert info.value.kind == "auth" and info.value.upstream_status == 400
    with pytest.raises(UpstreamFailed) as info:
        make_provider("gemini", fake.url, None, transport=Transport()).complete(conversation(), "g")
    assert info.value.kind == "auth" and info.value.upstream_status == 403


def test_model_names_and_models_list(p, fake):
    p.complete(Ask(messages=[Message("user", [Text("q")])]), "models/gemini-2.5-flash")
    assert fake.last.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    fake.set_models(["gemini-2.5-flash", {"id": "embedding-001", "supportedGenerationMethods": ["embedContent"]},
                     {"id": "gemini-pro", "inputTokenLimit": 32768, "outputTokenLimit": 8192}])
    assert p.list_models() == [
        {"id": "gemini-2.5-flash", "name": "gemini-2.5-flash", "context_window": 1048576, "max_output": 65536},
        {"id": "gemini-pro", "name": "gemini-pro", "context_window": 32768, "max_output": 8192}]
    assert fake.last.query["pageSize"] == "1000" and "key" not in fake.last.query
    assert make_provider("gemini", "", None).base == "https://generativelanguage.googleapis.com/v1beta"

