"""MCP over HTTP (/mcp): the official SDK's Streamable HTTP client against the live service, and the transport's
rules on the wire (sessions, Origin, protocol versions, keys and their collections)."""
from __future__ import annotations

import asyncio
import json

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.helpers.data import configure, write
from tests.helpers.http import Http

TOKEN = "admin-token-for-mcp-0123456789"
BETA_SAYS = "Beta thinks line 3 divides by zero."
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def fake(home):
    """Collections `core` (alpha, beta) and `side` (gamma) on one fake OpenAI upstream."""
    with FakeOpenAI() as upstream:
        upstream.script("beta-1", BETA_SAYS)
        configure(home, {"fake": (upstream, "openai")},
                  {"alpha": ("fake", "alpha-1"), "beta": ("fake", "beta-1"), "gamma": ("fake", "gamma-1")},
                  {"core": {"members": ["alpha", "beta"], "explore": 0}, "side": {"members": ["gamma"], "explore": 0}})
        yield upstream


def run_sdk(url: str, body, headers: dict | None = None):
    """The SDK's Streamable HTTP client on url/mcp: initialize, then `body(session, init)`."""
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(url + "/mcp", http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    return await body(session, init)
    return asyncio.run(asyncio.wait_for(main(), 60))


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_sdk_initializes_lists_asks_with_progress_judges_and_lists_pending(fake, service):
    heard = []

    async def body(session, init):
        tools = {t.name for t in (await session.list_tools()).tools}

        async def progress(done, total, message):
            heard.append((done, total, message))
        asked = await session.call_tool("ask", {"collection": "core", "prompt": "Is line 3 right?"},
                                        progress_callback=progress)
        before = await session.call_tool("pending_verdicts", {})
        beta = next(s for s in asked.structured_content["seats"] if s["model"] == "beta")
        judged = await session.call_tool("verdict", {"call": beta["call"], "useful": True, "real": ["line 3"]})
        after = await session.call_tool("pending_verdicts", {"limit": 5})
        return init, tools, asked, before, judged, after

    init, tools, asked, before, judged, after = run_sdk(service.url, body)
    assert init.protocol_version == "2025-11-25" and init.server_info.name == "benchwarmers"
    assert tools == {"list_collections", "ask", "verdict", "pending_verdicts"}
    assert not asked.is_error, text_of(asked)
    seats = {s["model"]: s for s in asked.structured_content["seats"]}
    assert set(seats) == {"alpha", "beta"} and seats["beta"]["answer"] == BETA_SAYS
    assert len(heard) == 2 and [h[0] for h in heard] == [1, 2] and {h[1] for h in heard} == {2}
    assert {h[2].split(" · ")[1] for h in heard} == {"alpha", "beta"}      # one per seat, as each finished
    assert before.structured_content["total"] == 2
    assert {p["call"] for p in before.structured_content["pending"]} == {s["call"] for s in seats.values()}
    assert not judged.is_error and judged.structured_content["useful"] is True
    assert [p["call"] for p in after.structured_content["pending"]] == [seats["alpha"]["call"]]
    assert seats["alpha"]["call"] in text_of(after)


# -- the transport's rules, on the wire ------------------------------------------------------------

def open_session(http: Http, headers: dict | None = None) -> str:
    status, hdrs, reply = http("POST", "/mcp", INIT, {**ACCEPT, **(headers or {})})
    assert status == 200 and reply["result"]["protocolVersion"] == "2025-11-25", reply
    sid = {k.lower(): v for k, v in hdrs.items()}["mcp-session-id"]
    assert len(sid) >= 32 and all("!" <= ch <= "~" for ch in sid)
    return sid


def rpc(msg_id, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params is not None else {})}


def test_sessions_on_the_wire(fake, http):
    sid = open_session(http)
    with_id = {**ACCEPT, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    status, _, body = http("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, with_id)
    assert status == 202 and body == ""
    status, hdrs, listed = http("POST", "/mcp", rpc(2, "tools/list"), with_id)
    assert status == 200 and hdrs["Content-Type"] == "application/json"
    assert len(listed["result"]["tools"]) == 4
    status, _, missing = http("POST", "/mcp", rpc(3, "tools/list"), ACCEPT)
    assert status == 400 and "Mcp-Session-Id" in missing["error"]["message"] and missing["id"] is None
    status, _, unknown = http("POST", "/mcp", rpc(4, "ping"), {**ACCEPT, "Mcp-Session-Id": "no-such-session"})
    assert status == 404 and unknown["jsonrpc"] == "2.0"
    status, _, bad = http("POST", "/mcp", rpc(5, "ping"), {**with_id, "MCP-Protocol-Version": "1999-01-01"})
    assert status == 400 and "1999-01-01" in bad["error"]["message"]
    status, _, parse = http("POST", "/mcp", raw=b'{"jsonrpc": ', headers=with_id)
    assert status == 400 and parse["error"]["code"] == -32700
    status, _, invalid = http("POST", "/mcp", {"jsonrpc": "1.0", "method": 7}, with_id)
    assert status == 400 and invalid["error"]["code"] == -32600
    status, hdrs, _ = http("GET", "/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": sid})
    assert status == 405 and hdrs["Allow"] == "DELETE, POST"
    assert http("DELETE", "/mcp", headers={"Mcp-Session-Id": sid})[0] == 204
    assert http("POST", "/mcp", rpc(6, "ping"), with_id)[0] == 404            # ended: initialize again
    assert http("DELETE", "/mcp", headers={"Mcp-Session-Id": sid})[0] == 404
    assert http("DELETE", "/mcp")[0] == 400


def test_a_tool_call_with_a_progress_token_streams_events(fake, http):
    sid = open_session(http)
    status, hdrs, stream = http("POST", "/mcp", rpc(7, "tools/call", {
        "name": "ask", "arguments": {"collection": "core", "prompt": "Is line 3 right?"},
        "_meta": {"progressToken": "p-1"}}), {**ACCEPT, "Mcp-Session-Id": sid})
    assert status == 200 and hdrs["Content-Type"] == "text/event-stream"
    events = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    progress, answer = events[:-1], events[-1]
    assert [e["method"] for e in progress] == ["notifications/progress"] * 2
    assert [e["params"]["progress"] for e in progress] == [1, 2]
    assert all(e["params"]["progressToken"] == "p-1" and e["params"]["total"] == 2 for e in progress)
    assert answer["id"] == 7 and answer["result"]["isError"] is False
    # without a token the same call is one JSON answer
    status, hdrs, whole = http("POST", "/mcp", rpc(8, "tools/call", {
        "name": "ask", "arguments": {"collection": "core", "prompt": "Again?"}}), {**ACCEPT, "Mcp-Session-Id": sid})
    assert status == 200 and hdrs["Content-Type"] == "application/json" and whole["result"]["isError"] is False


def test_a_2025_03_26_batch_is_answered_in_order(fake, http):
    status, hdrs, _ = http("POST", "/mcp", {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}},
                           ACCEPT)
    sid = {k.lower(): v for k, v in hdrs.items()}["mcp-session-id"]
    batch = [rpc(2, "ping"), {"jsonrpc": "2.0", "method": "notifications/initialized"}, rpc(3, "tools/list")]
    status, _, replies = http("POST", "/mcp", batch, {**ACCEPT, "Mcp-Session-Id": sid})
    assert status == 200 and [r["id"] for r in replies] == [2, 3]
    assert http("POST", "/mcp", [INIT, rpc(4, "ping")], ACCEPT)[0] == 400       # initialize goes alone
    assert http("POST", "/mcp", [], {**ACCEPT, "Mcp-Session-Id": sid})[0] == 400


def test_foreign_origin_and_host_are_refused(fake, http):
    for method, body in (("POST", INIT), ("GET", None), ("DELETE", None)):
        status, _, refused = http(method, "/mcp", body, {**ACCEPT, "Origin": "http://evil.example"})
        assert status == 403, method
        assert refused["jsonrpc"] == "2.0" and refused["id"] is None and "evil.example" in refused["error"]["message"]
    assert http("POST", "/mcp", INIT, {**ACCEPT, "Origin": "null"})[0] == 403
    assert http("POST", "/mcp", INIT, {**ACCEPT, "Host": "evil.example"})[0] == 403
    own = http.base.split("//", 1)[1]
    assert http("POST", "/mcp", INIT, {**ACCEPT, "Origin": f"http://{own}"})[0] == 200


def test_sdk_refused_from_a_foreign_origin(fake, service):
    async def body(session, init):
        return init
    with pytest.raises(BaseException) as caught:     # the SDK raises our JSON-RPC error, inside task groups
        run_sdk(service.url, body, headers={"Origin": "http://evil.example"})
    assert "'http://evil.example' are refused" in repr(caught.value)


def test_sessions_expire_and_belong_to_who_made_them():
    from benchwarmers.mcp.sessions import Sessions
    from benchwarmers.mcp.tools import Reach, Tools
    now = [100.0]
    sessions = Sessions(clock=lambda: now[0])
    sid, session = sessions.open("key:a:1", Tools(Reach()), 60)
    assert sessions.find(sid, "key:a:1", 60) is session
    assert sessions.find(sid, "key:b:1", 60) is None and sessions.find(sid, "anyone", 60) is None
    now[0] += 59
    assert sessions.find(sid, "key:a:1", 60) is session          # each request keeps it alive
    now[0] += 61
    assert sessions.find(sid, "key:a:1", 60) is None and len(sessions) == 0


# -- keys and their collections --------------------------------------------------------------------

def make_key(http: Http, name: str, collections: list) -> str:
    status, _, made = http("POST", "/bench/keys", {"name": name, "collections": collections},
                           {"Authorization": f"Bearer {TOKEN}"})
    assert status == 201, made
    return made["key"]


def test_a_key_scoped_to_one_collection_cannot_see_or_judge_anothers_calls(fake, make_service):
    service = make_service(admin_token=TOKEN)
    http = Http(service.url)
    core_key, side_key = make_key(http, "core-app", ["core"]), make_key(http, "side-app", ["side"])

    async def as_core(session, init):
        listed = await session.call_tool("list_collections", {})
        other = await session.call_tool("ask", {"collection": "side", "prompt": "Not mine."})
        asked = await session.call_tool("ask", {"collection": "core", "prompt": "Is line 3 right?"})
        return listed, other, asked
    listed, other, asked = run_sdk(service.url, as_core, {"Authorization": f"Bearer {core_key}"})
    assert [c["name"] for c in listed.structured_content["collections"]] == ["core"]
    assert other.is_error and "does not reach the collection 'side'" in text_of(other)
    calls = [s["call"] for s in asked.structured_content["seats"]]

    async def as_side(session, init):
        judged = await session.call_tool("verdict", {"call": calls[0], "useful": False})
        pending = await session.call_tool("pending_verdicts", {})
        listed = await session.call_tool("list_collections", {})
        return judged, pending, listed
    judged, pending, listed = run_sdk(service.url, as_side, {"Authorization": f"Bearer {side_key}"})
    assert judged.is_error and f"No call {calls[0]!r}" in text_of(judged)
    assert pending.structured_content == {"total": 0, "points": [], "pending": [], "points_total": 0}
    assert [c["name"] for c in listed.structured_content["collections"]] == ["side"]

    # the same through /bench/pending: a key sees its own asks only, the admin every one
    for key, expected in ((core_key, set(calls)), (side_key, set())):
        status, _, found = http("GET", "/bench/pending", headers={"Authorization": f"Bearer {key}"})
        assert status == 200 and {p["call"] for p in found["pending"]} == expected
        status, _, found = http("GET", f"/bench/pending?calls={','.join(calls)}",
                                headers={"Authorization": f"Bearer {key}"})
        assert {p["call"] for p in found["pending"]} == expected
    status, _, everyone = http("GET", "/bench/pending", headers={"Authorization": f"Bearer {TOKEN}"})
    assert everyone["total"] == 2 and everyone["asked_by"] == {"everyone": True}
    assert http("GET", "/bench/pending")[0] == 401


def test_a_session_answers_only_the_key_that_opened_it(fake, make_service):
    service = make_service(admin_token=TOKEN)
    http = Http(service.url)
    core_key, side_key = make_key(http, "core-app", ["core"]), make_key(http, "side-app", ["side"])
    sid = open_session(http, {"Authorization": f"Bearer {core_key}"})
    mine = {**ACCEPT, "Mcp-Session-Id": sid, "Authorization": f"Bearer {core_key}"}
    assert http("POST", "/mcp", rpc(2, "ping"), mine)[0] == 200
    assert http("POST", "/mcp", rpc(3, "ping"), {**mine, "Authorization": f"Bearer {side_key}"})[0] == 404
    assert http("POST", "/mcp", rpc(4, "ping"), {**mine, "Authorization": f"Bearer {TOKEN}"})[0] == 404
    assert http("DELETE", "/mcp", headers={**mine, "Authorization": f"Bearer {side_key}"})[0] == 404
    assert http("POST", "/mcp", INIT, ACCEPT)[0] == 401                       # keys are enforced: no key, no MCP
    assert http("POST", "/mcp", INIT, {**ACCEPT, "Authorization": "Bearer bw-not-a-key"})[0] == 401


def test_require_keys_holds_mcp_to_a_key_on_loopback_without_a_token(fake, home, make_app):
    write(home, "settings.json", {"require_keys": True})
    app = make_app()
    assert app("POST", "/mcp", INIT, ACCEPT)[0] == 401                        # no key, no MCP
    key = app("POST", "/bench/keys", {"name": "core-app", "collections": ["core"]})[2]["key"]
    auth = {**ACCEPT, "Authorization": f"Bearer {key}"}
    status, hdrs, _ = app("POST", "/mcp", INIT, auth)
    mine = {**auth, "Mcp-Session-Id": hdrs["Mcp-Session-Id"]}
    assert status == 200 and app("POST", "/mcp", rpc(2, "ping"), {**mine, "Authorization": ""})[0] == 401
    listed = app("POST", "/mcp", rpc(3, "tools/call", {"name": "list_collections", "arguments": {}}), mine)[2]
    assert [c["name"] for c in listed["result"]["structuredContent"]["collections"]] == ["core"]
    other = app("POST", "/mcp", rpc(4, "tools/call", {"name": "ask", "arguments": {
        "collection": "side", "prompt": "Not mine."}}), mine)[2]["result"]
    assert other["isError"] and "does not reach the collection 'side'" in other["content"][0]["text"]
    asked = app("POST", "/mcp", rpc(5, "tools/call", {"name": "ask", "arguments": {
        "collection": "core", "prompt": "Is line 3 right?"}}), mine)[2]["result"]
    assert not asked["isError"] and len(asked["structuredContent"]["seats"]) == 2
