"""Every format's panel reply carries the `## Where they disagree` block and `bench.points` as the official SDKs read
them (openai chat and Responses, anthropic, google-genai, ollama): streamed, when the referee answers within the
points wait after the last seat; whole, when the request asks for them (`bench.points`, or `:points`)."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.panel import fake, setup_bench  # noqa: F401  (the fake fixture)
from tests.helpers.sse import sse_frames

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
ollama = pytest.importorskip("ollama")
genai = pytest.importorskip("google.genai")
from google.genai import types  # noqa: E402

HEADING = "## Where they disagree"
ANSWERS = {"m-a": "The cache is stale. The lock is held.", "m-b": "The cache is fresh. The lock is held.",
           "m-c": "The lock is held."}
COLS = {"core": {"members": ["a", "b", "c"], "explore": 0, "merge_model": "merger", "referee": "merger",
                 "points": "contested"}}
USER = [{"role": "user", "content": "Why is it slow?"}]
WAIT = {"bench": {"points": "contested"}}       # a whole reply waits for its points when the request asks


@pytest.fixture
def url(home, fake, make_service):
    setup_bench(home, fake, COLS)
    for served, text in ANSWERS.items():
        fake.script(served, text)
    fake.script("m-merge", FakeReferee().reply())
    return make_service().url


def check_text(text: str, every: bool = False) -> None:
    """The block after every seat, naming the contested point and each side's own words (`every`: all points)."""
    assert HEADING in text, text
    assert max(text.index(f"## Seat {n}") for n in (1, 2, 3)) < text.index(HEADING)
    block = text[text.index(HEADING):]
    assert "The cache is stale." in block and "\u201cThe cache is fresh\u201d" in block
    assert ("The lock is held" in block) is every    # a point nobody contradicts is shown only with all of them


def check_bench(bench: dict) -> None:
    [point] = bench["points"]
    assert point["id"].startswith("pt_") and point["claim"] == "The cache is stale."
    assert (point["assert"], point["deny"], point["silent"]) == ([1], [2], [3])
    assert point["quotes"] == {"1": "The cache is stale", "2": "The cache is fresh"}
    assert bench["points_info"]["mode"] == "contested" and bench["points_info"]["found"] == 2


def post(url: str, body: dict) -> bytes:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.read()


def test_openai_chat_whole_and_streamed(url):
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model="bench/core", messages=USER, extra_body=WAIT)
    check_text(reply.choices[0].message.content)
    check_bench(reply.model_extra["bench"])
    text, metas = "", []
    for chunk in client.chat.completions.create(model="bench/core", messages=USER, stream=True):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if (chunk.model_extra or {}).get("bench"):
            metas.append(chunk.model_extra["bench"])
    check_text(text)
    assert text.index(HEADING) > text.rindex("## Seat ")        # streamed last
    check_bench(metas[-1])


def test_openai_responses_whole_and_streamed(url):
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    reply = client.responses.create(model="bench/core", input="Why is it slow?", extra_body=WAIT)
    check_text(reply.output_text)
    check_bench(reply.model_extra["bench"])
    events = list(client.responses.create(model="bench/core", input="Why is it slow?", stream=True))
    check_text("".join(e.delta for e in events if e.type == "response.output_text.delta"))
    check_bench(events[-1].response.model_extra["bench"])


def test_anthropic_whole_and_streamed(url):
    client = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=30)
    message = client.messages.create(model="bench/core", max_tokens=256, messages=USER, extra_body=WAIT)
    check_text(message.content[0].text)
    check_bench(message.model_extra["bench"])
    events = list(client.messages.create(model="bench/core", max_tokens=256, messages=USER, stream=True))
    check_text("".join(e.delta.text for e in events if e.type == "content_block_delta"))
    check_bench(events[-2].model_extra["bench"])


def test_gemini_whole_and_streamed(url):
    client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=url, api_version="v1beta",
                                                                     timeout=30_000, extra_body=WAIT))
    check_text(client.models.generate_content(model="bench/core", contents="Why is it slow?").text)
    chunks = list(client.models.generate_content_stream(model="bench/core", contents="Why is it slow?"))
    check_text("".join(c.text or "" for c in chunks))
    body = {"contents": [{"role": "user", "parts": [{"text": "Why is it slow?"}]}]}   # the SDK drops `bench`
    check_bench(json.loads(post(url + "/v1beta/models/bench/core:generateContent", dict(body, **WAIT)))["bench"])
    frames = sse_frames(post(url + "/v1beta/models/bench/core:streamGenerateContent?alt=sse", body))
    check_bench(frames[-1][1]["bench"])


def test_ollama_whole_and_streamed(url):
    client = ollama.Client(host=url, timeout=30)
    # the SDK sends no body of ours: a whole reply asks for its points by name (`:points`, every point)
    check_text(client.chat(model="bench/core:points", messages=USER, stream=False).message.content, every=True)
    parts = list(client.chat(model="bench/core", messages=USER, stream=True))
    check_text("".join(p.message.content or "" for p in parts))
    lines = [json.loads(x) for x in post(url + "/api/chat", {"model": "bench/core", "messages": USER}).splitlines()
             if x.strip()]
    check_bench(lines[-1]["bench"])
    check_text(client.generate(model="bench/core:points", prompt="Why is it slow?", stream=False).response,
               every=True)
