"""Route mode end to end: captured Claude Code and Codex turns, tool loops, pins, failover, stream errors, shadows."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.helpers.http import Http
from tests.helpers.panel import wait_for
from tests.fakes import Reply
from tests.helpers.route import captured, fakes, route_collection  # noqa: F401 (fakes is a fixture)
from tests.helpers.sse import sse_frames as sse

APIS = ["openai", "anthropic", "gemini", "ollama"]


def post(url: str, path: str, body: dict, headers: dict | None = None):
    """(status, headers, raw bytes) of a POST, also for error statuses."""
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers=hdrs, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def client_headers(row: dict) -> dict:
    keep = ("anthropic-version", "anthropic-beta", "x-claude-code-session-id", "session-id", "thread-id",
            "x-api-key", "authorization")
    return {k: v for k, v in row["headers"].items() if k in keep}


def tool_results_sent(api: str, body: dict) -> list[str]:
    """The tool-call ids (or names) whose results reached the member, in that protocol's own form."""
    if api == "openai":
        return [m["tool_call_id"] for m in body["messages"] if m.get("role") == "tool"]
    if api == "anthropic":
        return [b["tool_use_id"] for m in body["messages"] if isinstance(m.get("content"), list)
                for b in m["content"] if b.get("type") == "tool_result"]
    if api == "gemini":
        return [p["functionResponse"]["name"] for c in body["contents"] for p in c["parts"] if "functionResponse" in p]
    return [m.get("tool_name") or m.get("tool_call_id") or "tool" for m in body["messages"] if m.get("role") == "tool"]


@pytest.mark.parametrize("api", APIS)
def test_claude_code_turns_through_each_protocol(service, home, fakes, api):
    route_collection(home, {api: fakes[api]}, [("agent", api)])
    fakes[api].script("agent-s", [Reply.tool("Bash", {"command": "echo hi"}), Reply(text="hi")])
    turn1, turn2 = captured("claude_code_2.1.197.jsonl")
    for row in (turn1, turn2):
        row["body"]["model"] = "bench/core:route"
    status, headers, raw = post(service.url, turn1["path"], turn1["body"], client_headers(turn1))
    assert status == 200, raw
    assert headers["x-bench-model"] == "agent" and headers["x-bench-call"]
    events = sse(raw)
    names = [e for e, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    start = events[0][1]["message"]["usage"]
    assert {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} <= set(start)
    blocks = [d["content_block"] for e, d in events if e == "content_block_start"]
    assert any(b["type"] == "tool_use" and b["name"] == "Bash" for b in blocks)
    args = "".join(d["delta"]["partial_json"] for e, d in events
                   if e == "content_block_delta" and d["delta"]["type"] == "input_json_delta")
    assert json.loads(args) == {"command": "echo hi"}
    delta = next(d for e, d in events if e == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} <= set(
        delta["usage"])
    sent1 = fakes[api].last.body
    assert sent1 is not None and fakes[api].last.path.endswith(("completions", "messages", "chat")) or api == "gemini"
    status, headers, raw = post(service.url, turn2["path"], turn2["body"], client_headers(turn2))
    assert status == 200, raw
    assert headers["x-bench-model"] == "agent"
    text = "".join(d["delta"].get("text", "") for e, d in sse(raw) if e == "content_block_delta")
    assert text == "hi"
    assert tool_results_sent(api, fakes[api].last.body), "the tool result must reach the member"


@pytest.mark.parametrize("api", APIS)
def test_codex_turns_through_each_protocol(service, home, fakes, api):
    route_collection(home, {api: fakes[api]}, [("agent", api)])
    fakes[api].script("agent-s", [Reply.tool("shell", {"command": ["ls"]}), Reply(text="done")])
    turn1, turn2 = captured("codex_0.171.0.jsonl")
    for row in (turn1, turn2):
        row["body"]["model"] = "bench/core:route"
    status, headers, raw = post(service.url, "/v1/responses", turn1["body"], client_headers(turn1))
    assert status == 200, raw
    events = sse(raw)
    kinds = [d["type"] for _, d in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    seqs = [d["sequence_number"] for _, d in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    done = events[-1][1]["response"]
    calls = [o for o in done["output"] if o["type"] == "function_call"]
    assert calls and calls[0]["name"] == "shell" and json.loads(calls[0]["arguments"]) == {"command": ["ls"]}
    assert done["usage"]["input_tokens"] >= 0
    status, headers, raw = post(service.url, "/v1/responses", turn2["body"], client_headers(turn2))
    assert status == 200, raw
    done = sse(raw)[-1][1]["response"]
    text = "".join(c["text"] for o in done["output"] if o["type"] == "message" for c in o["content"])
    assert text == "done"
    assert tool_results_sent(api, fakes[api].last.body)


def test_claude_code_retry_without_stream(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("agent", "openai")])
    fakes["openai"].script("agent-s", Reply.tool("Bash", {"command": "pwd"}))
    turn1 = captured("claude_code_2.1.197.jsonl")[0]
    body = dict(turn1["body"], model="bench/core:route")
    body.pop("stream")
    status, headers, raw = post(service.url, turn1["path"], body, client_headers(turn1))
    assert status == 200, raw
    msg = json.loads(raw)
    assert msg["type"] == "message" and msg["stop_reason"] == "tool_use"
    use = next(b for b in msg["content"] if b["type"] == "tool_use")
    assert use["name"] == "Bash" and use["input"] == {"command": "pwd"}
    assert {"input_tokens", "output_tokens"} <= set(msg["usage"])


def test_mid_conversation_system_is_folded_not_sent_as_a_role(service, home, fakes):
    route_collection(home, {"anthropic": fakes["anthropic"]}, [("agent", "anthropic")])
    body = {"model": "bench/core:route", "max_tokens": 100, "system": "base rules",
            "messages": [{"role": "user", "content": "hi"}, {"role": "system", "content": "extra rule"}]}
    status, _, raw = post(service.url, "/v1/messages", body)
    assert status == 200, raw
    sent = fakes["anthropic"].last.body
    assert all(m["role"] in ("user", "assistant") for m in sent["messages"])
    assert "extra rule" in json.dumps(sent)


@pytest.mark.parametrize("code", ["500", "429"])
def test_failover_before_first_byte_moves_the_pin(service, home, fakes, code):
    fake = fakes["openai"]
    # on separate connections: a 429 rests the whole connection (models sharing a key share its limits)
    route_collection(home, {"openai": fake, "anthropic": fakes["anthropic"]},
                     [("first", "openai"), ("second", "anthropic")])
    # with no record yet the members are tried in collection order: the first fails before replying, and the
    # second takes over
    fake.script("first-s", Reply.error(int(code), **({"retry_after": 1} if code == "429" else {})))
    http = Http(service.url)
    body = {"model": "bench/core:route", "messages": [{"role": "user", "content": "go"}], "stream": True}
    hdrs = {"x-claude-code-session-id": "s-1"}
    status, headers, raw = post(service.url, "/v1/chat/completions", body, hdrs)
    assert status == 200, raw
    assert headers["x-bench-model"] == "second"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for _, c in sse(raw)
                   if isinstance(c, dict) and c.get("choices"))
    assert text == "second-s says: go"
    _, _, rec = http("GET", "/bench/calls/" + headers["x-bench-call"])
    moved = rec["extra"]["failover_from"]
    assert moved[0]["model"] == "first" and code in moved[0]["error"]
    _, _, failed = http("GET", "/bench/calls/" + moved[0]["call"])
    assert failed["status"] == "failed" and failed["model"] == "first"
    # the pin moved: the next turn of the same conversation goes straight to the member that answered
    body["messages"] += [{"role": "assistant", "content": text}, {"role": "user", "content": "more"}]
    status, headers, raw = post(service.url, "/v1/chat/completions", body, hdrs)
    assert headers["x-bench-model"] == "second"


def test_every_member_failing_is_an_error_in_the_format(service, home, fakes):
    route_collection(home, {"anthropic": fakes["anthropic"]}, [("only", "anthropic")])
    fakes["anthropic"].script("only-s", Reply.error(500))
    body = {"model": "bench/core:route", "max_tokens": 50, "messages": [{"role": "user", "content": "x"}]}
    status, _, raw = post(service.url, "/v1/messages", body)
    assert status == 502
    err = json.loads(raw)
    assert err["type"] == "error" and "only" in err["error"]["message"]


def test_failure_after_first_byte_is_a_stream_error_event(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("agent", "openai")])
    fakes["openai"].script("agent-s", Reply(text="one two three four five six", drop_after=3))
    body = {"model": "bench/core:route", "max_tokens": 50, "stream": True,
            "messages": [{"role": "user", "content": "x"}]}
    status, _, raw = post(service.url, "/v1/messages", body)
    assert status == 200
    events = sse(raw)
    assert events[0][0] == "message_start"
    assert events[-1][0] == "error" and events[-1][1]["type"] == "error"
    assert any(e == "content_block_delta" for e, _ in events)


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/api/chat"])
def test_a_streamed_turn_that_finished_is_recorded_ok_and_shadowed(service, home, fakes, path):
    route_collection(home, {"openai": fakes["openai"]}, [("a", "openai"), ("b", "openai")], shadow=1)
    body = {"model": "bench/core:route", "max_tokens": 50, "stream": True,
            "messages": [{"role": "user", "content": "streamed"}]}
    status, headers, raw = post(service.url, path, body)
    assert status == 200, raw
    http = Http(service.url)
    _, _, rec = http("GET", "/bench/calls/" + headers["x-bench-call"])
    assert (rec["status"], rec["error"]) == ("ok", None), rec
    assert rec["answer"] == f"{headers['x-bench-model']}-s says: streamed"
    assert isinstance(rec["ttft"], float) and 0 <= rec["ttft"] <= rec["seconds"]   # a streamed turn is timed
    shadows = wait_for(lambda: [c for c in http("GET", "/bench/calls?collection=core")[2]["calls"]
                                if c["kind"] == "shadow"])
    assert shadows[0]["extra"]["turn"] == headers["x-bench-call"]


def test_pin_survives_a_restart(make_service, home, fakes):
    fake = fakes["ollama"]
    route_collection(home, {"ollama": fake}, [("a", "ollama"), ("b", "ollama"), ("c", "ollama")])
    body = {"model": "bench/core:route", "messages": [{"role": "user", "content": "remember me"}], "stream": False}
    svc = make_service()
    status, headers, raw = post(svc.url, "/api/chat", body)
    assert status == 200, raw
    first = headers["x-bench-model"]
    svc.stop()
    svc2 = make_service()
    body["messages"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "again"}]
    status, headers, raw = post(svc2.url, "/api/chat", body)
    assert status == 200, raw
    assert headers["x-bench-model"] == first
    assert json.loads(raw)["message"]["content"] == f"{first}-s says: again"


def test_shadow_seats_are_recorded_and_invisible(service, home, fakes):
    fake = fakes["openai"]
    route_collection(home, {"openai": fake}, [("a", "openai"), ("b", "openai")], shadow=1)
    body = {"model": "bench/core:route", "messages": [{"role": "user", "content": "shadow test"}]}
    status, headers, raw = post(service.url, "/v1/chat/completions", body)
    assert status == 200
    reply = json.loads(raw)
    chosen = headers["x-bench-model"]
    assert reply["choices"][0]["message"]["content"] == f"{chosen}-s says: shadow test"
    http = Http(service.url)
    shadows = wait_for(lambda: [c for c in http("GET", "/bench/calls?collection=core")[2]["calls"]
                                if c["kind"] == "shadow"], timeout=30)
    assert len(shadows) == 1
    assert shadows[0]["model"] != chosen and shadows[0]["extra"]["turn"] == headers["x-bench-call"]
    assert shadows[0]["answer"].endswith("says: shadow test")


def test_tools_are_offered_and_recorded(service, home, fakes):
    route_collection(home, {"gemini": fakes["gemini"]}, [("g", "gemini")])
    fakes["gemini"].script("g-s", Reply.tool("lookup", {"q": "x"}))
    body = {"model": "bench/core:route", "messages": [{"role": "user", "content": "find x"}],
            "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
                "type": "object", "properties": {"q": {"type": "string"}}}}}]}
    status, headers, raw = post(service.url, "/v1/chat/completions", body)
    assert status == 200, raw
    msg = json.loads(raw)["choices"][0]
    assert msg["finish_reason"] == "tool_calls"
    call = msg["message"]["tool_calls"][0]
    assert call["function"]["name"] == "lookup" and json.loads(call["function"]["arguments"]) == {"q": "x"}
    sent = fakes["gemini"].last.body
    assert sent["tools"][0]["functionDeclarations"][0]["name"] == "lookup"
    _, _, rec = Http(service.url)("GET", "/bench/calls/" + headers["x-bench-call"])
    assert rec["extra"]["tools_offered"] == ["lookup"] and rec["extra"]["tools_called"] == ["lookup"]


def test_head_root_is_answered(service):
    req = urllib.request.Request(service.url + "/", method="HEAD")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200


def test_betas_and_fields_an_anthropic_member_refuses_are_dropped_not_a_400(service, home, fakes):
    fake = fakes["anthropic"]
    route_collection(home, {"anthropic": fake}, [("claude", "anthropic")])
    fake.script("claude-s", [
        Reply.error(400, "Unexpected value(s) `future-beta-2099-01-01` for the `anthropic-beta` header."),
        Reply.error(400, "context_management: Extra inputs are not permitted"),
        Reply(text="fine")])
    body = {"model": "bench/core:route", "max_tokens": 50, "context_management": {"edits": []},
            "messages": [{"role": "user", "content": "hi"}]}
    status, headers, raw = post(service.url, "/v1/messages", body, {"anthropic-beta": "future-beta-2099-01-01"})
    assert status == 200, raw
    assert json.loads(raw)["content"][0]["text"] == "fine"
    sent = fake.requests[-3:]
    assert sent[0].headers.get("anthropic-beta") == "future-beta-2099-01-01"
    assert "anthropic-beta" not in sent[1].headers and "context_management" in sent[1].body
    assert "context_management" not in sent[2].body


def test_the_choice_follows_verdicts_not_traffic_and_explains_itself(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("first", "openai"), ("second", "openai")])
    http = Http(service.url)

    def turn(session: str) -> tuple[str, dict]:
        body = {"model": "bench/core:route", "messages": [{"role": "user", "content": f"go {session}"}]}
        status, headers, raw = post(service.url, "/v1/chat/completions", body, {"x-claude-code-session-id": session})
        assert status == 200, raw
        return headers["x-bench-model"], http("GET", "/bench/calls/" + headers["x-bench-call"])[2]

    model, call = turn("s-0")          # no verdicts yet: collection order
    assert model == "first" and any("no judged answers yet" in why for why in call["extra"]["choice"])
    for i in range(1, 4):              # answers nobody judged rank by failures and speed alone (the record is current)
        model, unjudged = turn(f"s-{i}")
        assert any(why.startswith(f"{model}: no judged answers yet") for why in unjudged["extra"]["choice"])
    assert http("POST", "/bench/verdict", {"call": call["id"], "useful": False})[0] == 200
    model, call = turn("s-4")          # one poor verdict: the member never judged gets its turn
    assert model == "second"
    assert http("POST", "/bench/verdict", {"call": call["id"], "useful": True})[0] == 200
    model, call = turn("s-5")
    assert model == "second"
    assert any(why.startswith("second: useful 1/1 (upper bound") for why in call["extra"]["choice"])
    assert any(why.startswith("first: useful 0/1 (upper bound") for why in call["extra"]["choice"])
