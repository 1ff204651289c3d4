"""Route mode tool loops through the official SDKs: anthropic, openai (chat and Responses) and ollama clients, each
against scripted tool-calling fakes of every protocol, whole and streamed, three turns on one pinned member."""
from __future__ import annotations

import json
import time

import pytest

from tests.helpers.http import Http
from tests.fakes import Reply
from tests.helpers.route import fakes, route_collection  # noqa: F401 (fakes is a fixture)

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
ollama = pytest.importorskip("ollama")
httpx = pytest.importorskip("httpx")

APIS = ["openai", "anthropic", "gemini", "ollama"]
MODEL = "bench/core:route"
SYSTEM = "You are a careful agent. Use the tools."
PROMPT = "Read my notes, then tell me the weather and the time in Zürich."
# nested arguments with unicode, quotes, backslashes, null and booleans: what breaks a careless translation
ARGS1 = {"path": 'notes/naïve "draft" — 草稿.md',
         "options": {"depth": 2, "tags": ['a"b', "c\\d", "ünï"], "limits": {"max": 1.5, "none": None, "on": True}},
         "emoji": "🚀"}
CALLS2 = [("get_weather", {"city": "Zürich", "units": {"temp": "°C"}}), ("get_time", {"tz": "Europe/Zurich"})]
RESULT1 = 'no such file: "notes/naïve — 草稿.md"'
RESULTS2 = {"get_weather": '{"temp": 21.5, "sky": "☀ sunny"}', "get_time": '14:03 "CET"'}
FINAL = 'Done — it is 21.5 °C and "sunny" ☀ at 14:03.'
SCHEMAS = {
    "read_file": {"type": "object", "properties": {"path": {"type": "string"}, "options": {"type": "object"},
                                                   "emoji": {"type": "string"}}, "required": ["path"]},
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}, "units": {"type": "object"}}},
    "get_time": {"type": "object", "properties": {"tz": {"type": "string"}}},
}
IDS = {"openai": ["call_r1", "call_w2", "call_t3"], "anthropic": ["toolu_r1", "toolu_w2", "toolu_t3"]}


def script(fake, api: str, served: str) -> None:
    """Turn 1 calls read_file, turn 2 calls two tools in parallel, turn 3 answers in text. Gemini and Ollama
    calls carry no ids (those APIs pair results by name)."""
    ids = IDS.get(api, [None, None, None])
    first = [{"id": ids[0], "name": "read_file", "arguments": ARGS1}]
    second = [{"id": ids[i + 1], "name": name, "arguments": args} for i, (name, args) in enumerate(CALLS2)]
    fake.script(served, [Reply(tool_calls=first), Reply(tool_calls=second), Reply(text=FINAL)])


# ---- the four clients -------------------------------------------------------------------------
# Each keeps its conversation; turn(stream) -> (calls [(id, name, args)], text, stop); answer(results) adds the
# tool results [(id, name, content, is_error)] the way that client's users write them.

class AnthropicClient:
    flags_errors = True

    def __init__(self, url: str, http_client):
        self.sdk = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=30,
                                       http_client=http_client)
        self.messages: list = [{"role": "user", "content": PROMPT}]

    def turn(self, stream: bool):
        kw = dict(model=MODEL, max_tokens=1024, system=SYSTEM, messages=self.messages,
                  tools=[{"name": n, "description": n, "input_schema": s} for n, s in SCHEMAS.items()])
        if stream:
            with self.sdk.messages.stream(**kw) as s:
                msg = s.get_final_message()
        else:
            msg = self.sdk.messages.create(**kw)
        blocks = [{"type": "text", "text": b.text} if b.type == "text" else
                  {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input} for b in msg.content]
        self.messages.append({"role": "assistant", "content": blocks})
        calls = [(b.id, b.name, b.input) for b in msg.content if b.type == "tool_use"]
        text = "".join(b.text for b in msg.content if b.type == "text")
        return calls, text, {"tool_use": "tool", "end_turn": "stop"}.get(msg.stop_reason, msg.stop_reason)

    def answer(self, results):
        self.messages.append({"role": "user", "content": [
            dict({"type": "tool_result", "tool_use_id": i, "content": c}, **({"is_error": True} if e else {}))
            for i, _, c, e in results]})


class ChatClient:
    flags_errors = False

    def __init__(self, url: str, http_client):
        self.sdk = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=30,
                                 http_client=http_client)
        self.messages: list = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]

    def turn(self, stream: bool):
        kw = dict(model=MODEL, messages=self.messages, tools=[
            {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
            for n, s in SCHEMAS.items()])
        if stream:       # the SDK's own accumulation of the deltas
            with self.sdk.chat.completions.stream(**kw) as s:
                done = s.get_final_completion()
        else:
            done = self.sdk.chat.completions.create(**kw)
        choice = done.choices[0]
        calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls or []]
        msg: dict = {"role": "assistant", "content": choice.message.content}
        if calls:
            msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                "name": c.function.name, "arguments": c.function.arguments}} for c in choice.message.tool_calls]
        self.messages.append(msg)
        return calls, choice.message.content or "", {"tool_calls": "tool"}.get(choice.finish_reason,
                                                                                choice.finish_reason)

    def answer(self, results):
        self.messages += [{"role": "tool", "tool_call_id": i, "content": c} for i, _, c, _ in results]


class ResponsesClient:
    flags_errors = False

    def __init__(self, url: str, http_client):
        self.sdk = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=30,
                                 http_client=http_client)
        self.input: list = [{"role": "developer", "content": SYSTEM}, {"role": "user", "content": PROMPT}]

    def turn(self, stream: bool):
        kw = dict(model=MODEL, input=self.input, store=False, tools=[
            {"type": "function", "name": n, "description": n, "parameters": s, "strict": False}
            for n, s in SCHEMAS.items()])
        if stream:       # the SDK's event stream, folded into the final response
            with self.sdk.responses.stream(**kw) as s:
                kinds = [e.type for e in s]
                resp = s.get_final_response()
            assert kinds[0] == "response.created" and kinds[-1] == "response.completed", kinds
        else:
            resp = self.sdk.responses.create(**kw)
        calls = []
        for item in resp.output:
            if item.type == "function_call":
                calls.append((item.call_id, item.name, json.loads(item.arguments)))
                self.input.append({"type": "function_call", "id": item.id, "call_id": item.call_id,
                                   "name": item.name, "arguments": item.arguments})
            elif item.type == "message" and resp.output_text:
                self.input.append({"role": "assistant", "content": resp.output_text})
        return calls, resp.output_text, "tool" if calls else ("stop" if resp.status == "completed" else resp.status)

    def answer(self, results):
        self.input += [{"type": "function_call_output", "call_id": i, "output": c} for i, _, c, _ in results]


class OllamaClient:
    flags_errors = False

    def __init__(self, url: str, http_client_hooks: dict):
        self.sdk = ollama.Client(host=url, timeout=30, event_hooks=http_client_hooks)
        self.messages: list = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]

    def turn(self, stream: bool):
        kw = dict(model=MODEL, messages=self.messages, tools=[
            {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
            for n, s in SCHEMAS.items()])
        text, calls, reason = "", [], None
        for part in (self.sdk.chat(stream=True, **kw) if stream else [self.sdk.chat(stream=False, **kw)]):
            text += part.message.content or ""
            calls += [(c.function.name, c.function.name, dict(c.function.arguments))
                      for c in part.message.tool_calls or []]
            reason = part.done_reason if part.done else reason
        msg: dict = {"role": "assistant", "content": text}
        if calls:
            msg["tool_calls"] = [{"function": {"name": n, "arguments": a}} for _, n, a in calls]
        self.messages.append(msg)
        return calls, text, "tool" if calls else reason

    def answer(self, results):
        self.messages += [{"role": "tool", "tool_name": n, "content": c} for _, n, c, _ in results]


CLIENTS = {"anthropic": AnthropicClient, "chat": ChatClient, "responses": ResponsesClient, "ollama": OllamaClient}


def make_client(kind: str, url: str, seen: list):
    def hook(response):
        seen.append((response.headers.get("x-bench-model"), response.headers.get("x-bench-call")))
    if kind == "ollama":
        return OllamaClient(url, {"response": [hook]})
    return CLIENTS[kind](url, openai.DefaultHttpxClient(event_hooks={"response": [hook]}))


# ---- what the member received, in its own protocol ---------------------------------------------

def member_view(api: str, body: dict) -> tuple[list, list]:
    """(tool calls echoed back [(id or name, name, args)], tool results [(id or name, content as sent)])."""
    if api == "openai":
        calls = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                 for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        return calls, [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    if api == "anthropic":
        blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
        return ([(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"],
                [(b["tool_use_id"], (b["content"], bool(b.get("is_error")))) for b in blocks
                 if b["type"] == "tool_result"])
    if api == "gemini":
        parts = [p for c in body["contents"] for p in c["parts"]]
        return ([(p["functionCall"]["name"],) * 2 + (p["functionCall"]["args"],) for p in parts
                 if "functionCall" in p],
                [(p["functionResponse"]["name"], p["functionResponse"]["response"]) for p in parts
                 if "functionResponse" in p])
    calls = [(c["function"]["name"],) * 2 + (c["function"]["arguments"],) for m in body["messages"]
             if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    return calls, [(m["tool_name"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


def paired(api: str, body: dict) -> tuple[list, list]:
    """(every call echoed [(name, args)], every result with the call it answers [(name, args, content)]): by id
    where the protocol has ids, by name where it has none."""
    calls, results = member_view(api, body)
    by_key = {k: (name, args) for k, name, args in calls}
    assert len(by_key) == len(calls), "call ids (or names) must be unique in a conversation"
    return [(n, a) for _, n, a in calls], [by_key[k] + (content,) for k, content in results]


def as_sent(api: str, content: str, is_error: bool):
    """A tool result as the member's protocol carries it (an error flag only Anthropic and Gemini can hold)."""
    if api == "anthropic":
        return content, is_error
    if api == "gemini":
        if is_error:
            return {"error": content}
        value = json.loads(content) if content.startswith("{") else None
        return value if isinstance(value, dict) else {"output": content}
    return f"Error: {content}" if is_error else content


# ---- the test ---------------------------------------------------------------------------------

def verdict_against(http: Http, call: str) -> None:
    """Judge a turn not useful, so the record alone would now prefer the other member: only the pin keeps it.
    A streamed turn is recorded as its stream closes, a moment after the client has read the end."""
    deadline = time.monotonic() + 30
    while True:
        status, _, body = http("POST", "/bench/verdict", {"call": call, "useful": False})
        if status == 200:
            return
        assert time.monotonic() < deadline, f"verdict not accepted: {status} {body}"
        time.sleep(0.05)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("client_kind", list(CLIENTS))
def test_three_turn_tool_loop_on_one_member(service, home, fakes, client_kind, api, stream):
    fake = fakes[api]
    route_collection(home, {api: fake}, [("a", api), ("b", api)])
    for served in ("a-s", "b-s"):
        script(fake, api, served)
    seen: list = []
    client = make_client(client_kind, service.url, seen)
    http = Http(service.url)
    errors = client.flags_errors

    calls1, text, stop = client.turn(stream)
    chosen, call1 = seen[-1]
    assert chosen in ("a", "b") and call1 and (text, stop) == ("", "tool")
    assert [(n, a) for _, n, a in calls1] == [("read_file", ARGS1)]
    if api in IDS and client_kind != "ollama":
        assert calls1[0][0] == IDS[api][0], "a protocol's own call id must reach the client unchanged"
    verdict_against(http, call1)
    client.answer([(calls1[0][0], "read_file", RESULT1, errors)])

    calls2, text, stop = client.turn(stream)
    assert seen[-1][0] == chosen and (text, stop) == ("", "tool")
    assert [(n, a) for _, n, a in calls2] == CALLS2, "parallel calls, in order, arguments intact"
    assert len({i for i, _, _ in calls1 + calls2}) == 3
    echoed, results = paired(api, fake.last.body)
    assert echoed == [("read_file", ARGS1)]
    assert results == [("read_file", ARGS1, as_sent(api, RESULT1, errors))]
    if api in IDS and client_kind != "ollama":
        assert [k for k, _ in member_view(api, fake.last.body)[1]] == [IDS[api][0]]
    verdict_against(http, seen[-1][1])
    client.answer([(i, n, RESULTS2[n], False) for i, n, _ in calls2])

    calls3, text, stop = client.turn(stream)
    assert seen[-1][0] == chosen and (calls3, text, stop) == ([], FINAL, "stop")
    echoed, results = paired(api, fake.last.body)
    assert echoed == [("read_file", ARGS1)] + CALLS2
    assert results[1:] == [(n, a, as_sent(api, RESULTS2[n], False)) for n, a in CALLS2]
    if api in IDS and client_kind != "ollama":
        assert [k for k, _ in member_view(api, fake.last.body)[1]] == IDS[api]

    served = chosen + "-s"
    got = [(r.body or {}).get("model") or r.path for r in fake.requests if r.method == "POST"]
    assert len(got) == 3 and all(served in g for g in got), got
    assert [m for m, _ in seen] == [chosen] * 3
