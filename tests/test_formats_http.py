"""Raw HTTP against every format's routes: bad inputs, error shapes (whole and mid-stream), listings, and keys."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from tests.fakes import Reply
from tests.helpers.data import write
from tests.helpers.compat import ADMIN, assert_bench, keyed_panel, panel  # noqa: F401 (fixtures)
from tests.helpers.sse import sse_frames

PROMPT = "name a prime"
GEMINI = "/v1beta/models/{model}:generateContent"


# One entry per client format: its route, a good body for a model, and the error shape it answers in.
def chat(model, **kw):
    return {"model": model, "messages": [{"role": "user", "content": PROMPT}], **kw}


def responses(model, **kw):
    return {"model": model, "input": PROMPT, **kw}


def completions(model, **kw):
    return {"model": model, "prompt": PROMPT, **kw}


def messages(model, **kw):
    return {"model": model, "max_tokens": 100, "messages": [{"role": "user", "content": PROMPT}], **kw}


def gemini(model, **kw):
    return {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}], **kw}


def generate(model, **kw):
    return {"model": model, "prompt": PROMPT, **kw}


FORMATS = {
    # name: (path, body maker, shape, the field that carries the conversation, a tool list in the format's shape)
    "chat": ("/v1/chat/completions", chat, "openai", "messages",
             [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]),
    "responses": ("/v1/responses", responses, "openai", "input",
                  [{"type": "function", "name": "f", "parameters": {"type": "object"}}]),
    "completions": ("/v1/completions", completions, "openai", "prompt", None),
    "anthropic": ("/v1/messages", messages, "anthropic", "messages",
                  [{"name": "f", "input_schema": {"type": "object"}}]),
    "gemini": (GEMINI, gemini, "gemini", "contents", [{"functionDeclarations": [{"name": "f"}]}]),
    "ollama_chat": ("/api/chat", chat, "ollama", "messages",
                    [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]),
    "ollama_generate": ("/api/generate", generate, "ollama", "prompt", None),
}
STREAMING = {"chat", "responses", "completions", "anthropic", "ollama_chat", "ollama_generate"}


def path_for(fmt: str, model: str = "bench/core", stream: bool = False) -> str:
    path = FORMATS[fmt][0]
    if fmt == "gemini":
        return path.format(model=model).replace(":generateContent", ":streamGenerateContent?alt=sse" if stream
                                                else ":generateContent")
    return path


def body_for(fmt: str, model: str = "bench/core", stream: bool = False, **kw) -> dict:
    body = FORMATS[fmt][1](model, **kw)
    if fmt in STREAMING:
        body["stream"] = stream
    return body


def call(base: str, method: str, path: str, body=None, headers: dict | None = None, raw: bytes | None = None):
    """(status, headers, body bytes); never raises on an HTTP error status."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def message_of(shape: str, body, status: int) -> str:
    """The error's message, after checking the body is in `shape`'s own error form."""
    if shape == "openai":
        err = body["error"]
        assert set(err) >= {"message", "type", "code"}, body
        return err["message"]
    if shape == "anthropic":
        assert body["type"] == "error" and body["error"]["type"].endswith("_error"), body
        return body["error"]["message"]
    if shape == "gemini":
        err = body["error"]
        assert err["code"] == status and err["status"].isupper(), body
        return err["message"]
    assert set(body) == {"error"} and isinstance(body["error"], str), body
    return body["error"]


def expect_error(panel_url: str, fmt: str, status: int, *, body=None, raw: bytes | None = None,
                 path: str | None = None, headers: dict | None = None) -> str:
    got, hdrs, data = call(panel_url, "POST", path or path_for(fmt), body, headers, raw)
    assert got == status, (fmt, got, data)
    assert hdrs["Content-Type"].startswith("application/json")
    return message_of(FORMATS[fmt][2], json.loads(data), status)


# ---- bad inputs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_and_empty_bodies(panel, fmt):
    assert "Malformed JSON" in expect_error(panel.url, fmt, 400, raw=b'{"model": "bench/core",')
    assert "empty" in expect_error(panel.url, fmt, 400, raw=b"")
    assert "JSON object" in expect_error(panel.url, fmt, 400, raw=b'["a list"]')


NOT_OLLAMA = [f for f in FORMATS if not f.startswith("ollama")]


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "ollama_generate"])   # no prompt: a load, below
def test_missing_conversation_is_400_naming_the_field(panel, fmt):
    field = FORMATS[fmt][3]
    body = body_for(fmt)
    del body[field]
    assert field in expect_error(panel.url, fmt, 400, body=body)


EMPTY = {"chat": [[], [{"role": "user", "content": ""}]], "responses": ["", []],
         "completions": ["", [""]], "anthropic": [[], [{"role": "user", "content": ""}]],
         "gemini": [[], [{"role": "user", "parts": [{"text": ""}]}]]}


@pytest.mark.parametrize("fmt", NOT_OLLAMA)
def test_empty_conversation_is_400_and_asks_no_one(panel, fmt):
    field = FORMATS[fmt][3]
    for empty in EMPTY[fmt]:
        text = expect_error(panel.url, fmt, 400, body={**body_for(fmt), field: empty})
        assert field in text, (fmt, empty, text)
    assert not any(f.requests for f in panel.fakes.values())


@pytest.mark.parametrize("fmt", ["ollama_chat", "ollama_generate"])
def test_ollama_empty_conversation_only_loads_as_ollama_does(panel, fmt):
    field = FORMATS[fmt][3]
    bodies = [{"model": "bench/core", field: "" if field == "prompt" else []}]
    bodies += [{"model": "bench/core"}] if field == "prompt" else []
    for body in bodies:
        status, hdrs, data = call(panel.url, "POST", path_for(fmt), body)
        reply = json.loads(data)
        assert status == 200 and reply["done"] is True and reply["done_reason"] == "load", data
        assert ("response" if field == "prompt" else "message") in reply
    assert not any(f.requests for f in panel.fakes.values())
    assert "bench/nope" in expect_error(panel.url, fmt, 404, body={**bodies[0], "model": "bench/nope"})


@pytest.mark.parametrize("fmt", FORMATS)
def test_wrong_types_are_400_naming_the_field(panel, fmt):
    field = FORMATS[fmt][3]
    assert field in expect_error(panel.url, fmt, 400, body={**body_for(fmt), field: 42})
    if fmt != "gemini":      # Gemini names the model in the URL
        assert "model" in expect_error(panel.url, fmt, 400, body={**body_for(fmt), "model": 7})


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_collection_is_404_naming_the_collections(panel, fmt):
    text = expect_error(panel.url, fmt, 404, body=body_for(fmt, "bench/nope"), path=path_for(fmt, "bench/nope"))
    assert "nope" in text and "bench/core" in text and "bench/spare" in text


@pytest.mark.parametrize("fmt", [f for f in FORMATS if FORMATS[f][4]])
def test_tools_are_refused_pointing_to_route_mode(panel, fmt):
    for model in ("bench/core", "bench/core:merged"):
        body = body_for(fmt, model, tools=FORMATS[fmt][4])
        assert "bench/core:route" in expect_error(panel.url, fmt, 400, body=body, path=path_for(fmt, model))


def test_unknown_gemini_method_is_404_in_gemini_shape(panel):
    text = expect_error(panel.url, "gemini", 404, body=gemini("x"),
                        path="/v1beta/models/bench/core:embedContent")
    assert "embedContent" in text


# ---- mid-stream errors ---------------------------------------------------------------------------

def stream_body(panel_url: str, fmt: str, model: str = "bench/core") -> tuple[int, str, bytes]:
    status, hdrs, data = call(panel_url, "POST", path_for(fmt, model, True), body_for(fmt, model, True))
    return status, hdrs["Content-Type"], data


def test_every_seat_failing_mid_stream_ends_each_stream_with_its_own_error(panel):
    panel.fail_all(400)        # a refusal, not a 5xx: asked again and again, the seats never rest on their failures
    for fmt in ("chat", "completions"):
        status, _, data = stream_body(panel.url, fmt)
        frames = [d for _, d in sse_frames(data)]
        assert status == 200 and frames[0]["object"].endswith("chunk" if fmt == "chat" else "completion")
        assert "Every seat failed" in message_of("openai", frames[-2], 502) and frames[-1] == "[DONE]"
    status, _, data = stream_body(panel.url, "responses")
    frames = sse_frames(data)
    assert [e for e, _ in frames[:2]] == ["response.created", "response.in_progress"]
    assert frames[-1][0] == "response.failed" and frames[-1][1]["response"]["status"] == "failed"
    assert "Every seat failed" in frames[-1][1]["response"]["error"]["message"]
    status, _, data = stream_body(panel.url, "anthropic")
    frames = sse_frames(data)
    assert frames[0][0] == "message_start" and frames[-1][0] == "error"
    assert "Every seat failed" in message_of("anthropic", frames[-1][1], 502)
    status, ctype, data = stream_body(panel.url, "gemini")
    assert ctype.startswith("text/event-stream")
    last = sse_frames(data)[-1][1]
    assert "Every seat failed" in message_of("gemini", last, 502)
    for fmt in ("ollama_chat", "ollama_generate"):
        status, ctype, data = stream_body(panel.url, fmt)
        lines = [json.loads(x) for x in data.splitlines() if x.strip()]
        assert ctype.startswith("application/x-ndjson") and lines[0]["done"] is False
        assert "Every seat failed" in message_of("ollama", lines[-1], 502)


KEEPALIVE = {"chat": b": keep-alive", "responses": b": keep-alive", "completions": b": keep-alive",
             "anthropic": b"event: ping", "gemini": b'"parts":[{"text":""}]',
             "ollama_chat": b'"content":""},"done":false', "ollama_generate": b'"response":"","done":false'}


def spaced(data: bytes) -> bool:
    """A Gemini array stream's keep-alives: whitespace between its records (still valid JSON)."""
    return data.replace(b",\r\n", b"").count(b"\n") >= 2


def stream_holding(panel, path: str, body: dict, ready) -> tuple[int, bytes]:
    """A stream read as it comes, seat 1 held out until ready(what has arrived so far)."""
    gate = panel.hold_first_seat()
    req = urllib.request.Request(panel.url + path, method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    data = b""
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            while chunk := resp.read1(65536):
                data += chunk
                if ready(data):
                    gate.set()
            return resp.status, data
    finally:
        gate.set()


def test_streams_send_keep_alives_while_a_seat_thinks(panel):
    for fmt, marker in KEEPALIVE.items():
        status, data = stream_holding(panel, path_for(fmt, "bench/core", True), body_for(fmt, "bench/core", True),
                                      lambda d: b"## Seat 2" in d and d.count(marker) >= 2)
        assert status == 200 and data.count(marker) >= 2, (fmt, data[:400])
        assert data.index(b"## Seat 1") > data.index(b"## Seat 2"), fmt
    _, data = stream_holding(panel, "/v1beta/models/bench/core:streamGenerateContent", gemini("x"), spaced)
    assert spaced(data)
    assert_bench(json.loads(data)[-1]["bench"])


def test_gemini_array_stream_error_keeps_the_array_valid(panel):
    panel.fail_all()
    _, _, data = call(panel.url, "POST", "/v1beta/models/bench/core:streamGenerateContent", gemini("x"))
    records = json.loads(data)
    assert "Every seat failed" in message_of("gemini", records[-1], 502)


def test_every_seat_failing_whole_is_502_in_each_shape(panel):
    panel.fail_all(400)        # as above: a 5xx three times running would rest every seat
    for fmt in FORMATS:
        assert "Every seat failed" in expect_error(panel.url, fmt, 502, body=body_for(fmt))


# ---- the format's other routes -------------------------------------------------------------------

def test_responses_get_is_404_saying_nothing_is_stored(panel):
    status, _, data = call(panel.url, "GET", "/v1/responses/resp_abc")
    assert status == 404 and "stores no responses" in message_of("openai", json.loads(data), 404)
    assert "previous_response_id" in expect_error(panel.url, "responses", 400,
                                                  body=responses("bench/core", previous_response_id="resp_abc"))


def test_store_true_is_accepted_and_ignored(panel):
    status, _, data = call(panel.url, "POST", "/v1/responses", responses("bench/core", store=True))
    reply = json.loads(data)
    assert status == 200 and reply["store"] is False
    assert_bench(reply["bench"])


def test_messages_beta_query_and_headers_are_accepted(panel):
    status, _, data = call(panel.url, "POST", "/v1/messages?beta=true", messages("bench/core"),
                           {"anthropic-version": "2023-06-01", "anthropic-beta": "fine-grained-tool-streaming",
                            "x-api-key": "anything"})
    reply = json.loads(data)
    assert status == 200 and reply["type"] == "message" and "## Seat 4" in reply["content"][0]["text"]
    assert_bench(reply["bench"])


def test_count_tokens_estimates_and_checks_its_body(panel):
    status, _, data = call(panel.url, "POST", "/v1/messages/count_tokens?beta=true", messages("bench/core"))
    assert status == 200 and json.loads(data)["input_tokens"] > 0
    assert "messages" in expect_error(panel.url, "anthropic", 400, path="/v1/messages/count_tokens",
                                      body={"model": "bench/core"})
    assert "bench/nope" in expect_error(panel.url, "anthropic", 404, path="/v1/messages/count_tokens",
                                        body=messages("bench/nope"))


def test_ollama_tags_version_and_show(panel):
    status, _, data = call(panel.url, "GET", "/api/tags")
    models = json.loads(data)["models"]
    assert status == 200 and {"bench/core", "bench/core:merged", "bench/spare", "alpha"} <= {m["name"] for m in models}
    assert all(set(m["details"]) >= {"family", "format", "parameter_size"} for m in models)
    status, _, data = call(panel.url, "GET", "/api/version")
    assert status == 200 and json.loads(data)["version"]
    status, _, data = call(panel.url, "POST", "/api/show", {"model": "bench/core"})
    assert status == 200 and "completion" in json.loads(data)["capabilities"]
    assert "bench/nope" in expect_error(panel.url, "ollama_chat", 404, path="/api/show", body={"model": "bench/nope"})


def test_gemini_models_list_and_count_tokens(panel):
    status, _, data = call(panel.url, "GET", "/v1beta/models")
    names = {m["name"] for m in json.loads(data)["models"]}
    assert status == 200 and {"models/bench/core", "models/bench/core:merged", "models/alpha"} <= names
    status, _, data = call(panel.url, "POST", "/v1beta/models/bench/core:countTokens", gemini("x"))
    assert status == 200 and json.loads(data)["totalTokens"] > 0
    status, _, data = call(panel.url, "POST", "/v1beta/models/bench/nope:countTokens", gemini("x"))
    assert status == 404 and json.loads(data)["error"]["status"] == "NOT_FOUND"


def test_merged_works_on_every_route(panel):
    for fmt in FORMATS:
        for stream in (False, True):
            status, _, data = call(panel.url, "POST", path_for(fmt, "bench/core:merged", stream),
                                   body_for(fmt, "bench/core:merged", stream))
            assert status == 200, (fmt, stream, data)
            assert b"gpt-alpha says:" in data and b"## Seat" not in data, (fmt, stream)
            assert b'"merged"' in data        # the bench object's mode, whole or in the final event


def test_a_model_alias_is_asked_directly_on_every_route(panel):
    for fmt in FORMATS:
        status, _, data = call(panel.url, "POST", path_for(fmt, "alpha"), body_for(fmt, "alpha"))
        assert status == 200, (fmt, data)
        assert "## Seat 1 · alpha · member" in data.decode() and b"## Seat 2" not in data, fmt
        assert b'"mode":"direct"' in data, fmt


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
DATA_URL = "data:image/png;base64," + PNG
IMAGE_BODIES = {
    "chat": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": PROMPT}, {"type": "image_url", "image_url": {"url": DATA_URL}}]}]},
    "responses": {"input": [{"role": "user", "content": [
        {"type": "input_text", "text": PROMPT}, {"type": "input_image", "image_url": DATA_URL}]}]},
    "anthropic": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": PROMPT},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": PROMPT},
                                                       {"inlineData": {"mimeType": "image/png", "data": PNG}}]}]},
    "ollama_chat": {"messages": [{"role": "user", "content": PROMPT, "images": [PNG]}]},
    "ollama_generate": {"prompt": PROMPT, "images": [PNG]},
}


def set_facts(panel, **facts) -> None:
    """Give models facts (vision, context_window) by rewriting models.json, as onboarding would."""
    from tests.helpers.compat import EXPLORE, MEMBERS
    models = {alias: {"endpoint": ep, "served": served, "facts": facts.get(alias, {})}
              for alias, (ep, served) in {**MEMBERS, **EXPLORE}.items()}
    write(panel.home, "models.json", {"models": models})


@pytest.mark.parametrize("fmt", IMAGE_BODIES)
def test_images_reach_vision_seats_only(panel, fmt):
    set_facts(panel, claude={"vision": False}, alpha={"vision": True})
    status, _, data = call(panel.url, "POST", path_for(fmt), {**body_for(fmt), **IMAGE_BODIES[fmt]})
    reply = json.loads(data)
    seats = {s["model"]: s for s in reply["bench"]["seats"]}
    assert status == 200 and seats["claude"]["status"] == "skipped", seats
    assert "no vision" in seats["claude"]["error"] and "## Seat 2 · claude · member · skipped" in data.decode()
    assert all(seats[m]["status"] == "ok" for m in ("alpha", "gem", "scout"))
    assert not panel.fakes["an"].requests                  # the blind seat was never asked
    sent = [r.body for r in panel.fakes["oa"].requests]
    assert sent and all(PNG in json.dumps(b) for b in sent)   # every OpenAI seat got the image
    assert PNG in json.dumps(panel.fakes["gm"].requests[-1].body)


@pytest.mark.parametrize("fmt", IMAGE_BODIES)
def test_no_seat_able_to_see_the_image_is_400_asking_no_one(panel, fmt):
    set_facts(panel, **{alias: {"vision": False} for alias in ("alpha", "claude", "gem", "scout")})
    text = expect_error(panel.url, fmt, 400, body={**body_for(fmt), **IMAGE_BODIES[fmt]})
    assert "No seat can take this ask" in text and "no vision" in text
    assert not any(f.requests for f in panel.fakes.values())


def test_a_window_fact_that_is_no_number_cuts_nothing(panel):
    """A hand-edited fact `"context_window": true` is no window: the seat plays (read as 1, it refused every prompt)."""
    set_facts(panel, gem={"context_window": True, "max_output": True})
    status, _, data = call(panel.url, "POST", "/v1/messages", messages("bench/core"))
    seats = {s["model"]: s for s in json.loads(data)["bench"]["seats"]}
    assert status == 200 and seats["gem"]["status"] == "ok", seats["gem"]


def test_a_prompt_too_long_for_a_window_skips_that_seat(panel):
    set_facts(panel, gem={"context_window": 50})
    status, _, data = call(panel.url, "POST", "/v1/messages", messages("bench/core", messages=[
        {"role": "user", "content": "word " * 300}]))
    seats = {s["model"]: s for s in json.loads(data)["bench"]["seats"]}
    assert status == 200 and seats["gem"]["status"] == "skipped"
    assert "context window too small" in seats["gem"]["error"] and seats["alpha"]["status"] == "ok"
    assert not panel.fakes["gm"].requests


# ---- who may call --------------------------------------------------------------------------------

HEADER_FORMS = {"chat": "bearer", "responses": "bearer", "completions": "bearer", "anthropic": "x-api-key",
                "gemini": "x-goog-api-key", "ollama_chat": "bearer", "ollama_generate": "bearer"}


def auth(form: str, key: str) -> dict:
    return {"Authorization": f"Bearer {key}"} if form == "bearer" else {form: key}


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_takes_the_key_in_its_own_header_and_refuses_a_wrong_one(keyed_panel, fmt):
    p, key = keyed_panel
    headers = auth(HEADER_FORMS[fmt], key)
    status, _, data = call(p.url, "POST", path_for(fmt), body_for(fmt), headers)
    assert status == 200, data
    assert b"## Seat 4" in data
    text = expect_error(p.url, fmt, 401, body=body_for(fmt), headers=auth(HEADER_FORMS[fmt], "bw-wrong-key-123"))
    assert "not valid" in text and "bw-wrong" not in text
    assert "gateway key" in expect_error(p.url, fmt, 401, body=body_for(fmt))
    assert "spare" in expect_error(p.url, fmt, 403, body=body_for(fmt, "bench/spare"),
                                   path=path_for(fmt, "bench/spare"), headers=headers)
    assert "cannot ask models directly" in expect_error(p.url, fmt, 403, body=body_for(fmt, "alpha"),
                                                        path=path_for(fmt, "alpha"), headers=headers)


def test_other_key_forms_and_the_admin_token_everywhere(keyed_panel):
    p, key = keyed_panel
    status, _, _ = call(p.url, "POST", path_for("gemini") + "?key=" + key, gemini("x"))
    assert status == 200
    assert call(p.url, "POST", path_for("chat"), body_for("chat"), {"api-key": key})[0] == 200     # Azure-style
    assert expect_error(p.url, "gemini", 401, path=path_for("gemini") + "?key=wrong", body=gemini("x"))
    for fmt in FORMATS:
        status, _, _ = call(p.url, "POST", path_for(fmt), body_for(fmt), {"Authorization": "Bearer " + ADMIN})
        assert status == 200, fmt


def test_listings_show_only_what_the_key_reaches(keyed_panel):
    p, key = keyed_panel
    for path, pick in (("/v1/models", lambda d: [m["id"] for m in d["data"]]),
                       ("/api/tags", lambda d: [m["name"] for m in d["models"]]),
                       ("/v1beta/models", lambda d: [m["name"].removeprefix("models/") for m in d["models"]])):
        status, _, data = call(p.url, "GET", path, headers={"Authorization": f"Bearer {key}"})
        assert status == 200 and sorted(pick(json.loads(data))) == \
            ["bench/core", "bench/core:merged", "bench/core:route"], path
        assert call(p.url, "GET", path)[0] == 401


def test_a_key_rpm_limit_is_429_in_each_shape(keyed_panel):
    p, _ = keyed_panel
    status, _, data = call(p.url, "POST", "/bench/keys", {"name": "slow", "collections": ["core"], "rpm": 1},
                           {"Authorization": "Bearer " + ADMIN})
    key = json.loads(data)["key"]
    assert call(p.url, "GET", "/api/tags", headers={"Authorization": f"Bearer {key}"})[0] == 200
    for fmt in FORMATS:
        status, hdrs, data = call(p.url, "POST", path_for(fmt), body_for(fmt), auth(HEADER_FORMS[fmt], key))
        assert status == 429 and int(hdrs["Retry-After"]) >= 1
        assert "1 request a minute" in message_of(FORMATS[fmt][2], json.loads(data), 429)


def test_a_seat_cut_at_its_cap_says_so_in_every_format(panel):
    """finish_reason per seat: an answer that hit its output cap is labelled "cut at N tokens" in every format's
    seat heading, whole and streamed, and says `length` in the bench object. A streamed seat whose text went out
    live (the first to write) had its heading sent before its end was known: its note follows its text instead."""
    panel.fakes["an"].script("claude-x", Reply(finish="length"))
    dot = rb"(?: |\\u00b7|\xc2\xb7)+"
    label = re.compile(rb"claude" + dot + rb"member" + dot + rb"cut at [\d,]+ tokens")
    after = re.compile(rb"claude" + dot + rb"member(?:(?!## Seat).)*?> cut at [\d,]+ tokens", re.S)
    for fmt in FORMATS:
        for stream in (False, True) if fmt in STREAMING else (False,):
            status, _, data = call(panel.url, "POST", path_for(fmt, stream=stream), body_for(fmt, stream=stream))
            assert status == 200 and (label.search(data) or stream and after.search(data)), (fmt, stream, data[:2000])
            assert re.search(rb'"finish_reason": ?"length"', data), (fmt, stream)
