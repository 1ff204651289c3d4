"""The panel streamed and read by the official openai SDK: completion order, merged answers, disconnects."""
from __future__ import annotations

import http.client
import json
import threading
from urllib.parse import urlsplit

import pytest

from tests.fakes import Reply
from tests.helpers.panel import (OTHERS, api, bench, body, fake, headings, requests_for,  # noqa: F401
                                 setup_bench, stream_bench, stream_chunks, stream_raw, stream_text, wait_for)
from tests.helpers.http import Http


def sdk(url: str):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=30)


def open_stream(url: str, payload: dict):
    """A raw streaming request: (connection, response) with the headers read and the body not yet."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("POST", "/v1/chat/completions", json.dumps({**payload, "stream": True}),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    return conn, resp


def read_until(resp, predicate) -> str:
    """Read the raw chunked body line by line (chunk sizes are skipped) until the content seen so far
    satisfies `predicate(content, line)`; returns that content."""
    content, line = "", b""
    while not predicate(content, line):
        line = resp.fp.readline()
        assert line, "the stream ended first"
        if line.startswith(b"data: {"):
            chunk = json.loads(line[6:])
            if chunk.get("choices"):
                content += chunk["choices"][0]["delta"].get("content") or ""
    return content


# ---- order and progress --------------------------------------------------------------------------

def test_stream_order_is_completion_order(bench, fake):
    """a answers at once; c (failing), the explore seat and b each answer once the one before has arrived."""
    after = {"a": threading.Event(), "c": threading.Event(), "explore": threading.Event()}
    fake.script("m-c", Reply.error(500, "c broke", hold=after["a"]))
    for alias in OTHERS:
        fake.script(f"m-{alias}", Reply(hold=after["c"]))
    fake.script("m-b", Reply(text="slow b", hold=after["explore"]))

    def release(chunks: list) -> None:                      # each seat's arrival lets the next one answer
        for _, model, kind, _ in headings(stream_text(chunks)):
            if model != "b":
                after["explore" if kind == "explore" else model].set()

    try:
        chunks = stream_chunks(bench.url, body(), on_chunks=release)
    finally:
        for gate in after.values():
            gate.set()
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1] == "[DONE]"
    order = [h[1] for h in headings(stream_text(chunks))]
    meta = stream_bench(chunks)
    explore = next(s["model"] for s in meta["seats"] if s["kind"] == "explore")
    assert order == ["a", "c", explore, "b"], order
    assert all(isinstance(s["seconds"], float) and s["seconds"] >= 0 for s in meta["seats"])
    statuses = {s["model"]: s["status"] for s in meta["seats"]}
    assert statuses == {"a": "ok", "b": "ok", "c": "failed", explore: "ok"}
    finish = [c for c in chunks if isinstance(c, dict) and "bench" in c][0]
    assert finish["choices"][0]["finish_reason"] == "stop"


def test_finished_seats_arrive_while_a_slow_seat_is_still_out(bench, fake):
    fake.script("m-b", Reply(stall=True, stall_after=1))     # b answers only when its connection is cut
    conn, resp = open_stream(bench.url, body())
    try:
        panel = resp.headers["x-bench-panel"]
        text = read_until(resp, lambda t, _: len(headings(t)) == 3)
        assert "b" not in [h[1] for h in headings(text)]
        calls = Http(bench.url)("GET", f"/bench/calls?panel={panel}")[2]["calls"]
        assert sorted(c["model"] for c in calls if c["model"] in "abc") == ["a", "c"]   # b is still out
        fake.drop_connections()
        rest = read_until(resp, lambda _, line: line.startswith(b"data: [DONE]"))
        assert headings(rest) == [(2, "b", "member", "failed")]
    finally:
        conn.close()


def test_keepalives_while_waiting(home, fake, make_service):
    setup_bench(home, fake, settings={"keepalive_seconds": 0.1})
    kept_alive = threading.Event()                          # b answers once a keep-alive has gone out
    fake.script("m-b", Reply(hold=kept_alive))
    try:
        raw = stream_raw(make_service().url, body(stream=True),
                         on_data=lambda data: b": keep-alive" in data and kept_alive.set())
    finally:
        kept_alive.set()
    assert b": keep-alive" in raw
    assert raw.index(b": keep-alive") < raw.index("## Seat 2 · b".encode())


def test_every_seat_failing_mid_stream_is_an_error_event(bench, fake):
    fake.script("*", Reply.error(500, "all down"))
    chunks = stream_chunks(bench.url, body())
    errors = [c for c in chunks if isinstance(c, dict) and "error" in c]
    assert len(errors) == 1 and errors[0]["error"]["code"] == "all_seats_failed"
    assert "all down" in errors[0]["error"]["message"] and chunks[-1] == "[DONE]"
    assert not any(isinstance(c, dict) and "bench" in c for c in chunks)


def test_a_client_leaving_mid_stream_still_gets_every_seat_recorded(bench, fake):
    """Every seat is recorded; those still out when the client left are hung up (nobody waits for them)."""
    gate = threading.Event()
    fake.script("*", Reply(hold=gate))
    conn, resp = open_stream(bench.url, body(content="leaving early"))
    panel = resp.headers["x-bench-panel"]
    resp.fp.readline()                       # the chunk size
    assert b'"role":"assistant"' in resp.fp.readline()
    conn.sock.close()
    conn.close()
    http = Http(bench.url)

    def recorded():
        calls = http("GET", "/bench/calls?collection=core")[2]["calls"]
        return [c for c in calls if c["panel"] == panel] if len(calls) >= 4 else None
    calls = wait_for(lambda: (found := recorded()) and all(c["status"] == "cancelled" for c in found) and found)
    gate.set()
    assert sorted(c["kind"] for c in calls) == ["explore", "member", "member", "member"]
    assert all(c["error"] == "the client went away before this seat answered" and c["answer"] is None
               for c in calls)


# ---- the official SDK ------------------------------------------------------------------------------

def test_sdk_reads_content_and_bench_whole(bench, fake):
    fake.script("m-c", Reply.error(500))
    client = sdk(bench.url)
    resp = client.chat.completions.create(model="bench/core", messages=[{"role": "user", "content": "hello"}],
                                          extra_body={"bench": {"with": ["x"]}})
    text = resp.choices[0].message.content
    meta = resp.model_extra["bench"]
    assert [s["model"] for s in meta["seats"]][:4] == ["a", "b", "c", "x"]
    assert [h[1] for h in headings(text)] == [s["model"] for s in meta["seats"]]
    assert "m-a says: hello" in text and meta["seats"][2]["status"] == "failed"
    assert resp.usage.completion_tokens > 0 and resp.model == "bench/core"


def test_sdk_reads_content_and_bench_streamed(bench, fake):
    client = sdk(bench.url)
    text, metas, finishes = "", [], []
    for chunk in client.chat.completions.create(model="bench/core", stream=True,
                                                messages=[{"role": "user", "content": "hello"}],
                                                stream_options={"include_usage": True}):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finishes.append(chunk.choices[0].finish_reason)
        if (chunk.model_extra or {}).get("bench"):
            metas.append(chunk.model_extra["bench"])
        if chunk.usage:
            assert chunk.usage.completion_tokens > 0
    assert len(metas) == 1 and len(metas[0]["seats"]) == 4
    assert sorted(h[1] for h in headings(text)) == sorted(s["model"] for s in metas[0]["seats"])
    assert finishes[-1] == "stop" and "m-b says: hello" in text


def test_sdk_merged_whole(bench, fake):
    fake.script("m-merge", "MERGED: the seats agree on hello.")
    fake.script("m-b", "b has a different view")
    resp = sdk(bench.url).chat.completions.create(model="bench/core:merged", messages=[
        {"role": "system", "content": "Be kind."}, {"role": "user", "content": "hello"}])
    assert resp.choices[0].message.content == "MERGED: the seats agree on hello."
    meta = resp.model_extra["bench"]
    assert meta["mode"] == "merged" and len(meta["seats"]) == 4
    assert meta["merge"]["model"] == "merger" and meta["merge"]["status"] == "ok" and meta["merge"]["call"]
    [merge_req] = requests_for(fake, "m-merge")
    sent = json.dumps(merge_req.body["messages"])
    assert "b has a different view" in sent and "m-a says: hello" in sent and "Be kind." in sent
    seat_usage = sum(s["usage"]["output_tokens"] for s in meta["seats"])
    assert resp.usage.completion_tokens == seat_usage + meta["merge"]["usage"]["output_tokens"]


def test_sdk_merged_streamed(bench, fake):
    fake.script("m-merge", Reply(text="one merged answer in pieces", chunk_chars=5))
    text, metas = "", []
    for chunk in sdk(bench.url).chat.completions.create(model="bench/core:merged", stream=True,
                                                        messages=[{"role": "user", "content": "hello"}]):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if (chunk.model_extra or {}).get("bench"):
            metas.append(chunk.model_extra["bench"])
    assert text == "one merged answer in pieces"
    assert len(metas) == 1 and metas[0]["merge"]["model"] == "merger" and len(metas[0]["seats"]) == 4
    assert all(s["status"] == "ok" for s in metas[0]["seats"])


def test_a_failed_merge_falls_back_to_every_seat(api, fake):
    fake.script("m-merge", Reply.error(500, "merger is down"))
    status, _, data = api("POST", "/v1/chat/completions", body("bench/core:merged"))
    assert status == 200, data
    text = data["choices"][0]["message"]["content"]
    assert "merge failed" in text and "merger is down" in text
    assert len(headings(text)) == 4
    assert data["bench"]["merge"]["status"] == "failed"


def test_without_a_merge_model_the_best_recorded_model_outside_the_panel_merges(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b", "c"], "explore": 0}})
    http = Http(make_service().url)
    for _ in range(3):           # y, never a seat of core, has the best record
        call = http("POST", "/v1/chat/completions", body("y"))[2]["bench"]["seats"][0]["call"]
        assert http("POST", "/bench/verdict", {"call": call, "useful": True})[0] == 200
    fake.script("m-y", "y writes the merge")
    for served in ("m-a", "m-b", "m-c"):
        fake.script(served, f"An answer of seat {served[-1]}.")
    status, _, data = http("POST", "/v1/chat/completions", body("bench/core:merged"))
    assert status == 200, data
    assert data["bench"]["merge"]["model"] == "y"
    assert data["choices"][0]["message"]["content"] == "y writes the merge"
    merge_prompt = json.dumps(requests_for(fake, "m-y")[-1].body)
    assert '<answer seat=\\"1\\">' in merge_prompt and "m-a" not in merge_prompt and "model=" not in merge_prompt


def test_when_every_model_is_a_seat_the_member_with_the_best_record_merges(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b", "c", "x", "y", "z"], "explore": 0}})
    http = Http(make_service().url)
    for _ in range(3):
        seats = http("POST", "/v1/chat/completions", body())[2]["bench"]["seats"]
        b_call = next(s["call"] for s in seats if s["model"] == "b")
        assert http("POST", "/bench/verdict", {"call": b_call, "useful": True})[0] == 200
    fake.script("m-b", ["b answers as a seat", "b writes the merge"])
    status, _, data = http("POST", "/v1/chat/completions", body("bench/core:merged"))
    assert status == 200, data
    assert data["bench"]["merge"]["model"] == "b"
    assert data["choices"][0]["message"]["content"] == "b writes the merge"


def test_a_stalled_seat_times_out_in_a_stream_too(home, fake, make_service):
    setup_bench(home, fake, settings={"seat_timeout": 1})
    fake.script("m-c", Reply(stall=True, stall_after=1))
    chunks = stream_chunks(make_service().url, body())
    found = headings(stream_text(chunks))
    assert found[-1] == (3, "c", "member", "timeout") and len(found) == 4
    assert {s["model"]: s["status"] for s in stream_bench(chunks)["seats"]}["c"] == "timeout"
    assert chunks[-1] == "[DONE]"
