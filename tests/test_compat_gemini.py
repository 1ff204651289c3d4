"""The official google-genai SDK against the running service: generate_content and its stream, via a base URL."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.helpers.compat import (assert_bench, assert_every_seat, assert_merged, keyed_panel, panel,  # noqa: F401
                                  until_seen)
from tests.helpers.sse import sse_frames

genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors, types  # noqa: E402

PROMPT = "name a prime"


@pytest.fixture
def client(panel):
    return genai.Client(api_key="x", http_options=types.HttpOptions(base_url=panel.url, api_version="v1beta",
                                                                     timeout=30_000))


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json",
                                                                 **(headers or {})})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.headers["Content-Type"], resp.read()


def test_generate_content_holds_every_seat(client):
    reply = client.models.generate_content(model="bench/core", contents=PROMPT,
                                           config=types.GenerateContentConfig(system_instruction="Be brief."))
    assert_every_seat(reply.text, PROMPT)
    assert reply.candidates[0].finish_reason == types.FinishReason.STOP
    assert reply.usage_metadata.prompt_token_count > 0


def test_generate_content_stream_holds_every_seat(client):
    chunks = list(client.models.generate_content_stream(model="bench/core", contents=PROMPT))
    assert_every_seat("".join(c.text or "" for c in chunks), PROMPT, streamed=True)
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


def test_merged_whole_and_streamed(client):
    assert_merged(client.models.generate_content(model="bench/core:merged", contents=PROMPT).text)
    chunks = list(client.models.generate_content_stream(model="bench/core:merged", contents=PROMPT))
    assert_merged("".join(c.text or "" for c in chunks))


def test_bench_data_in_whole_reply_and_last_stream_record(panel):
    """The SDK drops unknown fields, so the `bench` object is read off the wire."""
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    base = panel.url + "/v1beta/models/bench/core"
    status, _, raw = post(base + ":generateContent", body, {"x-goog-api-key": "x"})
    assert status == 200
    assert_bench(json.loads(raw)["bench"])
    _, ctype, raw = post(base + ":streamGenerateContent?alt=sse", body)
    assert ctype.startswith("text/event-stream")
    records = [data for _, data in sse_frames(raw)]
    assert "bench" not in records[0]
    assert_bench(records[-1]["bench"])
    _, _, raw = post(panel.url + "/v1beta/models/bench/core:merged:streamGenerateContent?alt=sse", body)
    assert_bench(sse_frames(raw)[-1][1]["bench"], "merged")


def test_stream_without_alt_sse_is_one_json_array(panel):
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    _, ctype, raw = post(panel.url + "/v1beta/models/bench/core:streamGenerateContent", body)
    assert ctype.startswith("application/json")
    records = json.loads(raw)
    assert isinstance(records, list) and len(records) > 1
    text = "".join(p.get("text", "") for r in records for p in r["candidates"][0]["content"]["parts"])
    assert_every_seat(text, PROMPT, streamed=True)
    assert_bench(records[-1]["bench"])


def test_count_tokens_and_models_list(client):
    assert client.models.count_tokens(model="bench/core", contents=PROMPT * 10).total_tokens > 0
    names = [m.name for m in client.models.list()]
    assert "models/bench/core" in names and "models/bench/core:merged" in names


def test_errors_reach_the_sdk_as_its_own_exceptions(client):
    with pytest.raises(genai_errors.ClientError) as err:
        client.models.generate_content(model="bench/nope", contents=PROMPT)
    assert err.value.code == 404 and err.value.status == "NOT_FOUND" and "bench/core" in err.value.message
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(name="f", description="d")])
    with pytest.raises(genai_errors.ClientError) as err:
        client.models.generate_content(model="bench/core", contents=PROMPT,
                                       config=types.GenerateContentConfig(tools=[tool]))
    assert err.value.code == 400 and "bench/core:route" in err.value.message


def test_stream_brings_each_seat_as_it_finishes_through_keep_alives(client, panel):
    gate = panel.hold_first_seat()   # seat 1 is out until seat 2 has arrived; records with empty text meanwhile
    text = "".join(c.text or "" for c in until_seen(gate, client.models.generate_content_stream(
        model="bench/core", contents=PROMPT), lambda c: c.text))
    assert_every_seat(text, PROMPT, streamed=True)
    assert text.index("## Seat 1") > text.index("## Seat 2")
    assert_merged("".join(c.text or "" for c in client.models.generate_content_stream(
        model="bench/core:merged", contents=PROMPT)))


def test_every_seat_failing_mid_stream_raises_in_the_sdk(client, panel):
    panel.fail_all()
    with pytest.raises(genai_errors.APIError) as err:
        list(client.models.generate_content_stream(model="bench/core", contents=PROMPT))
    assert "Every seat failed" in str(err.value)


def test_gateway_key_as_x_goog_api_key_and_a_wrong_key(keyed_panel):
    p, key = keyed_panel
    options = types.HttpOptions(base_url=p.url, api_version="v1beta")
    good = genai.Client(api_key=key, http_options=options)
    assert_every_seat(good.models.generate_content(model="bench/core", contents=PROMPT).text, PROMPT)
    bad = genai.Client(api_key="bw-not-a-key", http_options=options)
    with pytest.raises(genai_errors.ClientError) as err:
        bad.models.generate_content(model="bench/core", contents=PROMPT)
    assert err.value.code == 401 and err.value.status == "UNAUTHENTICATED"
