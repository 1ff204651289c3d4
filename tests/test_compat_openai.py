"""The official openai SDK against the running service: chat, responses and completions, whole and streamed."""
from __future__ import annotations

import pytest

from tests.helpers.compat import (assert_bench, assert_every_seat, assert_merged,  # noqa: F401 (fixtures)
                                  keyed_panel, panel, until_seen)

openai = pytest.importorskip("openai")
PROMPT = "name a prime"


@pytest.fixture
def client(panel):
    return openai.OpenAI(base_url=panel.url + "/v1", api_key="x", max_retries=0, timeout=30)


def test_chat_whole_holds_every_seat_and_bench(client):
    reply = client.chat.completions.create(model="bench/core", messages=[{"role": "user", "content": PROMPT}])
    assert reply.model == "bench/core" and reply.choices[0].finish_reason == "stop"
    assert_every_seat(reply.choices[0].message.content, PROMPT)
    assert_bench(reply.model_extra["bench"])
    assert reply.usage.prompt_tokens > 0


def test_chat_streamed_holds_every_seat_and_bench_in_last_chunk(client):
    chunks = list(client.chat.completions.create(model="bench/core", stream=True,
                                                 messages=[{"role": "user", "content": PROMPT}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert_every_seat(text, PROMPT, streamed=True)
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert_bench(chunks[-1].model_extra["bench"])


def test_chat_stream_helper_and_usage_chunk(client):
    with client.chat.completions.stream(model="bench/core", messages=[{"role": "user", "content": PROMPT}],
                                        stream_options={"include_usage": True}) as stream:
        final = stream.get_final_completion()
    assert_every_seat(final.choices[0].message.content, PROMPT, streamed=True)
    assert final.usage.completion_tokens > 0
    raw = client.chat.completions.with_raw_response.create(model="bench/core",
                                                           messages=[{"role": "user", "content": PROMPT}])
    assert raw.headers["x-bench-panel"] == raw.parse().model_extra["bench"]["panel"]


def test_chat_merged_whole_and_streamed(client):
    reply = client.chat.completions.create(model="bench/core:merged", messages=[{"role": "user", "content": PROMPT}])
    assert_merged(reply.choices[0].message.content)
    assert_bench(reply.model_extra["bench"], "merged")
    chunks = list(client.chat.completions.create(model="bench/core:merged", stream=True,
                                                 messages=[{"role": "user", "content": PROMPT}]))
    assert_merged("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
    assert_bench(chunks[-1].model_extra["bench"], "merged")


def test_responses_whole_with_string_input_and_instructions(client, panel):
    reply = client.responses.create(model="bench/core", input=PROMPT, instructions="Be brief.", store=False)
    assert reply.status == "completed" and reply.model == "bench/core"
    assert_every_seat(reply.output_text, PROMPT)
    assert_bench(reply.model_extra["bench"])
    sent = [r.body for r in panel.fakes["oa"].requests if r.path.endswith("/chat/completions")]
    assert sent and all(b["messages"][0] == {"role": "system", "content": "Be brief."} for b in sent)


def test_responses_whole_with_items_input(client):
    reply = client.responses.create(model="bench/core", store=True, input=[
        {"role": "user", "content": [{"type": "input_text", "text": "first"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "input_text", "text": PROMPT}]}])
    assert_every_seat(reply.output_text, PROMPT)
    assert reply.store is False          # accepted and ignored: nothing is stored


def test_responses_streamed_event_sequence_and_bench(client):
    events = list(client.responses.create(model="bench/core", input=PROMPT, stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert_every_seat(text, PROMPT, streamed=True)
    assert events[-1].response.output_text == text
    assert_bench(events[-1].response.model_extra["bench"])


def test_responses_stream_helper_and_merged(client):
    with client.responses.stream(model="bench/core:merged", input=PROMPT) as stream:
        final = stream.get_final_response()
    assert_merged(final.output_text)
    assert_bench(final.model_extra["bench"], "merged")
    whole = client.responses.create(model="bench/core:merged", input=PROMPT)
    assert_merged(whole.output_text)


def test_completions_whole_string_and_list_prompt(client):
    reply = client.completions.create(model="bench/core", prompt=PROMPT)
    assert reply.object == "text_completion" and reply.choices[0].finish_reason == "stop"
    assert_every_seat(reply.choices[0].text, PROMPT)
    assert_bench(reply.model_extra["bench"])
    listed = client.completions.create(model="bench/core", prompt=["first line", PROMPT])
    assert_every_seat(listed.choices[0].text, "first line\n" + PROMPT)     # a list is joined by newlines


def test_completions_streamed_and_merged(client):
    chunks = list(client.completions.create(model="bench/core", prompt=PROMPT, stream=True))
    assert_every_seat("".join(c.choices[0].text for c in chunks if c.choices), PROMPT, streamed=True)
    assert_bench(chunks[-1].model_extra["bench"])
    merged = list(client.completions.create(model="bench/core:merged", prompt=PROMPT, stream=True))
    assert_merged("".join(c.choices[0].text for c in merged if c.choices))
    assert_bench(merged[-1].model_extra["bench"], "merged")
    whole = client.completions.create(model="bench/core:merged", prompt=PROMPT)
    assert_merged(whole.choices[0].text)


def test_models_list_names_collections(client):
    ids = [m.id for m in client.models.list()]
    assert {"bench/core", "bench/core:merged", "bench/core:route", "bench/spare"} <= set(ids)


def test_errors_reach_the_sdk_as_its_own_exceptions(client, panel):
    with pytest.raises(openai.NotFoundError) as err:
        client.chat.completions.create(model="bench/nope", messages=[{"role": "user", "content": "x"}])
    assert "bench/core" in err.value.message
    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(model="bench/core", input=PROMPT, tools=[
            {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}])
    assert "bench/core:route" in err.value.message
    with pytest.raises(openai.NotFoundError) as err:
        client.responses.retrieve("resp_123")
    assert "stores no responses" in err.value.message


def test_streams_bring_each_seat_as_it_finishes_through_keep_alives(client, panel):
    gate = panel.hold_first_seat()   # seat 1 is out until the others have arrived; keep-alive comments meanwhile
    chunks = list(until_seen(gate, client.chat.completions.create(model="bench/core", stream=True,
                                                                  messages=[{"role": "user", "content": PROMPT}]),
                             lambda c: c.choices[0].delta.content if c.choices else "", seats=(2, 3, 4)))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.index("## Seat 1") > max(text.index(f"## Seat {n}") for n in (2, 3, 4))
    assert_bench(chunks[-1].model_extra["bench"])
    events = list(client.responses.create(model="bench/core", input=PROMPT, stream=True))
    assert_every_seat(events[-1].response.output_text, PROMPT, streamed=True)
    chunks = list(client.completions.create(model="bench/core:merged", prompt=PROMPT, stream=True))
    assert_merged("".join(c.choices[0].text for c in chunks if c.choices))


def test_every_seat_failing_mid_stream_raises_in_the_sdk(client, panel):
    panel.fail_all()
    for make in (lambda: client.chat.completions.create(model="bench/core", stream=True,
                                                        messages=[{"role": "user", "content": PROMPT}]),
                 lambda: client.completions.create(model="bench/core", prompt=PROMPT, stream=True)):
        with pytest.raises(openai.APIError) as err:
            list(make())
        assert "Every seat failed" in err.value.message
    events = list(client.responses.create(model="bench/core", input=PROMPT, stream=True))
    assert events[-1].type == "response.failed" and "Every seat failed" in events[-1].response.error.message


def test_gateway_key_as_bearer_and_a_wrong_key(keyed_panel):
    p, key = keyed_panel
    good = openai.OpenAI(base_url=p.url + "/v1", api_key=key, max_retries=0)
    assert_every_seat(good.responses.create(model="bench/core", input=PROMPT).output_text, PROMPT)
    bad = openai.OpenAI(base_url=p.url + "/v1", api_key="bw-not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.chat.completions.create(model="bench/core", messages=[{"role": "user", "content": PROMPT}])
    with pytest.raises(openai.PermissionDeniedError):
        good.completions.create(model="bench/spare", prompt=PROMPT)


def test_models_retrieve_through_the_sdk(panel):
    from openai import NotFoundError, OpenAI
    client = OpenAI(base_url=panel.url + "/v1", api_key="x")
    assert client.models.retrieve("bench/core:route").id == "bench/core:route"
    with pytest.raises(NotFoundError):
        client.models.retrieve("bench/nothing-here")
