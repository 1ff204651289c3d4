"""The official ollama SDK against the running service: chat, generate, list and show, streamed and not."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.helpers.compat import (assert_bench, assert_every_seat, assert_merged,  # noqa: F401 (fixtures)
                                  keyed_panel, panel, until_seen)

ollama = pytest.importorskip("ollama")
PROMPT = "name a prime"
USER = [{"role": "user", "content": PROMPT}]


@pytest.fixture
def client(panel):
    return ollama.Client(host=panel.url, timeout=30)


def post_lines(url: str, body: dict) -> tuple[str, list[dict]]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.headers["Content-Type"], [json.loads(x) for x in resp.read().splitlines() if x.strip()]


def test_chat_whole_holds_every_seat(client):
    reply = client.chat(model="bench/core", messages=[{"role": "system", "content": "Be brief."}, *USER],
                        stream=False)
    assert reply.done and reply.done_reason == "stop" and reply.model == "bench/core"
    assert_every_seat(reply.message.content, PROMPT)
    assert reply.prompt_eval_count > 0


def test_chat_streamed_holds_every_seat(client):
    parts = list(client.chat(model="bench/core", messages=USER, stream=True))
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert_every_seat("".join(p.message.content or "" for p in parts), PROMPT, streamed=True)


def test_generate_whole_and_streamed(client):
    reply = client.generate(model="bench/core", prompt=PROMPT, system="Be brief.", stream=False)
    assert reply.done
    assert_every_seat(reply.response, PROMPT)
    parts = list(client.generate(model="bench/core", prompt=PROMPT, stream=True))
    assert parts[-1].done
    assert_every_seat("".join(p.response for p in parts), PROMPT, streamed=True)


def test_merged_chat_and_generate(client):
    assert_merged(client.chat(model="bench/core:merged", messages=USER, stream=False).message.content)
    parts = list(client.chat(model="bench/core:merged", messages=USER, stream=True))
    assert_merged("".join(p.message.content or "" for p in parts))
    parts = list(client.generate(model="bench/core:merged", prompt=PROMPT, stream=True))
    assert_merged("".join(p.response for p in parts))


def test_bench_data_on_the_wire(panel):
    """Streaming is the default, as in Ollama: NDJSON with `bench` in the last (done) object."""
    ctype, lines = post_lines(panel.url + "/api/chat", {"model": "bench/core", "messages": USER})
    assert ctype.startswith("application/x-ndjson") and len(lines) > 2
    assert "bench" not in lines[0] and lines[-1]["done"] is True
    assert_bench(lines[-1]["bench"])
    ctype, lines = post_lines(panel.url + "/api/generate", {"model": "bench/core", "prompt": PROMPT,
                                                            "stream": False})
    assert ctype.startswith("application/json") and len(lines) == 1
    assert_bench(lines[0]["bench"])
    _, lines = post_lines(panel.url + "/api/chat", {"model": "bench/core:merged", "messages": USER})
    assert_bench(lines[-1]["bench"], "merged")


def test_list_show_and_version(client, panel):
    models = client.list().models
    names = [m.model for m in models]
    assert {"bench/core", "bench/core:merged", "bench/spare"} <= set(names)
    assert all(m.details and m.details.family for m in models)
    shown = client.show("bench/core")
    assert "completion" in shown.capabilities and shown.details.family
    with urllib.request.urlopen(panel.url + "/api/version", timeout=10) as resp:
        assert json.loads(resp.read())["version"]


def test_errors_reach_the_sdk_as_its_own_exceptions(client):
    with pytest.raises(ollama.ResponseError) as err:
        client.chat(model="bench/nope", messages=USER, stream=False)
    assert err.value.status_code == 404 and "bench/core" in err.value.error
    with pytest.raises(ollama.ResponseError) as err:
        client.chat(model="bench/core", messages=USER, stream=False, tools=[
            {"type": "function", "function": {"name": "f", "description": "d",
                                              "parameters": {"type": "object", "properties": {}}}}])
    assert err.value.status_code == 400 and "bench/core:route" in err.value.error
    with pytest.raises(ollama.ResponseError) as err:
        client.show("bench/nope")
    assert err.value.status_code == 404


def test_stream_brings_each_seat_as_it_finishes_through_keep_alives(client, panel):
    gate = panel.hold_first_seat()   # seat 1 is out until seat 2 has arrived; not-done empty objects meanwhile
    parts = list(until_seen(gate, client.chat(model="bench/core", messages=USER, stream=True),
                            lambda p: p.message.content))
    text = "".join(p.message.content or "" for p in parts)
    assert_every_seat(text, PROMPT, streamed=True)
    assert text.index("## Seat 1") > text.index("## Seat 2") and parts[-1].done
    assert_merged("".join(p.response for p in client.generate(model="bench/core:merged", prompt=PROMPT,
                                                               stream=True)))


def test_every_seat_failing_mid_stream_raises_in_the_sdk(client, panel):
    panel.fail_all()
    with pytest.raises(ollama.ResponseError) as err:
        list(client.chat(model="bench/core", messages=USER, stream=True))
    assert "Every seat failed" in err.value.error


def test_load_request_answers_without_asking_anyone(client, panel):
    reply = client.generate(model="bench/core")
    assert reply.done and reply.done_reason == "load" and reply.response == ""
    assert not any(f.requests for f in panel.fakes.values())


def test_gateway_key_as_bearer_and_a_wrong_key(keyed_panel):
    p, key = keyed_panel
    good = ollama.Client(host=p.url, headers={"Authorization": f"Bearer {key}"})
    assert_every_seat(good.chat(model="bench/core", messages=USER, stream=False).message.content, PROMPT)
    assert {m.model for m in good.list().models} == {"bench/core", "bench/core:merged", "bench/core:route"}
    bad = ollama.Client(host=p.url, headers={"Authorization": "Bearer bw-not-a-key"})
    with pytest.raises(ollama.ResponseError) as err:
        bad.chat(model="bench/core", messages=USER, stream=False)
    assert err.value.status_code == 401
