"""The official anthropic SDK against the running service: messages.create, messages.stream, count_tokens."""
from __future__ import annotations

import json

import pytest

from tests.helpers.compat import (assert_bench, assert_every_seat, assert_merged,  # noqa: F401 (fixtures)
                                  keyed_panel, panel, until_seen)

anthropic = pytest.importorskip("anthropic")
PROMPT = "name a prime"
USER = [{"role": "user", "content": PROMPT}]


@pytest.fixture
def client(panel):
    return anthropic.Anthropic(base_url=panel.url, api_key="x", max_retries=0, timeout=30)


def test_create_whole_holds_every_seat_and_bench(client):
    raw = client.messages.with_raw_response.create(model="bench/core", max_tokens=256, messages=USER,
                                                   system="Be brief.")
    message = raw.parse()
    assert message.model == "bench/core" and message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert_every_seat(message.content[0].text, PROMPT)
    assert_bench(json.loads(raw.http_response.content)["bench"])
    assert_bench(message.model_extra["bench"])
    assert message.usage.input_tokens > 0


def test_create_streamed_events_and_bench_in_message_delta(client):
    events = list(client.messages.create(model="bench/core", max_tokens=256, messages=USER, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds[1] == "content_block_start" and kinds[-3] == "content_block_stop"
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert_every_seat(text, PROMPT, streamed=True)
    assert events[-2].delta.stop_reason == "end_turn"
    assert_bench(events[-2].model_extra["bench"])


def test_stream_helper_accumulates_the_message(client):
    with client.messages.stream(model="bench/core", max_tokens=256, messages=USER) as stream:
        deltas = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(deltas) == final.content[0].text
    assert_every_seat(final.content[0].text, PROMPT, streamed=True)
    assert final.stop_reason == "end_turn" and final.usage.output_tokens > 0


def test_merged_whole_and_streamed(client):
    raw = client.messages.with_raw_response.create(model="bench/core:merged", max_tokens=256, messages=USER)
    assert_merged(raw.parse().content[0].text)
    assert_bench(json.loads(raw.http_response.content)["bench"], "merged")
    events = list(client.messages.create(model="bench/core:merged", max_tokens=256, messages=USER, stream=True))
    assert_merged("".join(e.delta.text for e in events if e.type == "content_block_delta"))
    assert_bench(events[-2].model_extra["bench"], "merged")


def test_beta_messages_with_beta_header(client):
    """The beta client posts to /v1/messages?beta=true with an anthropic-beta header."""
    message = client.beta.messages.create(model="bench/core", max_tokens=256, messages=USER,
                                          betas=["interleaved-thinking-2025-05-14"])
    assert_every_seat(message.content[0].text, PROMPT)


def test_count_tokens_is_an_estimate_that_grows_with_the_prompt(client):
    short = client.messages.count_tokens(model="bench/core", messages=USER)
    long = client.messages.count_tokens(model="bench/core", messages=[{"role": "user", "content": PROMPT * 40}],
                                         system="Be brief.")
    assert 0 < short.input_tokens < long.input_tokens


def test_errors_reach_the_sdk_as_its_own_exceptions(client):
    with pytest.raises(anthropic.NotFoundError) as err:
        client.messages.create(model="bench/nope", max_tokens=10, messages=USER)
    assert err.value.body["type"] == "error" and "bench/core" in err.value.body["error"]["message"]
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.create(model="bench/core", max_tokens=10, messages=USER, tools=[
            {"name": "f", "input_schema": {"type": "object", "properties": {}}}])
    assert "bench/core:route" in err.value.body["error"]["message"]


def test_stream_brings_each_seat_as_it_finishes_through_pings(client, panel):
    gate = panel.hold_first_seat()   # seat 1 is out until seat 2 has arrived; ping events go out meanwhile
    with client.messages.stream(model="bench/core", max_tokens=256, messages=USER) as stream:
        for _ in until_seen(gate, stream.text_stream, str):
            pass
        final = stream.get_final_message()
    text = final.content[0].text
    assert_every_seat(text, PROMPT, streamed=True)
    assert text.index("## Seat 1") > text.index("## Seat 2")


def test_every_seat_failing_mid_stream_raises_in_the_sdk(client, panel):
    panel.fail_all()
    with pytest.raises(anthropic.APIStatusError) as err:
        with client.messages.stream(model="bench/core", max_tokens=256, messages=USER) as stream:
            list(stream.text_stream)
    assert "Every seat failed" in str(err.value)


def test_gateway_key_as_x_api_key_and_a_wrong_key(keyed_panel):
    p, key = keyed_panel
    good = anthropic.Anthropic(base_url=p.url, api_key=key, max_retries=0)     # sent as x-api-key
    assert_every_seat(good.messages.create(model="bench/core", max_tokens=256, messages=USER).content[0].text,
                      PROMPT)
    bad = anthropic.Anthropic(base_url=p.url, api_key="bw-not-a-key", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as err:
        bad.messages.create(model="bench/core", max_tokens=256, messages=USER)
    assert err.value.body["error"]["type"] == "authentication_error"


def test_models_list_in_the_anthropic_shape(panel):
    import anthropic as sdk
    client = sdk.Anthropic(base_url=panel.url, api_key="x", max_retries=0)
    ids = [m.id for m in client.models.list()]
    assert "bench/core" in ids and "bench/core:route" in ids
