"""Batch policy: what one request may set going over MCP's HTTP transport (or one line over stdio). Each request of
a JSON-RPC batch counts against the key's requests a minute as a request of its own, a batch holds a bounded number
of messages on either transport, and one caller's initializes end only its own sessions, never another caller's."""
from __future__ import annotations

import pytest

from benchwarmers.mcp.protocol import MAX_BATCH
from benchwarmers.mcp.sessions import MAX_SESSIONS, PER_OWNER, Sessions
from benchwarmers.mcp.tools import Reach, Tools
from tests.helpers.http import Http
from tests.helpers.panel import chat_requests
from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data
from tests.test_mcp import Raw, check_all_jsonrpc, closed_url

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def rpc(msg_id, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params is not None else {})}


@pytest.fixture
def keyed(home, fake, make_service):
    """(http, make_key(name, rpm)) on a service with the admin token set; collection core has members a and b."""
    bench_data(home, fake)
    http = Http(make_service(admin_token=TOKEN).url)

    def make_key(name: str, rpm: int | None = None) -> dict:
        status, _, made = http("POST", "/bench/keys", {"name": name, "collections": ["core"], "rpm": rpm},
                               ADMIN_HEADERS)
        assert status == 201, made
        return {"Authorization": f"Bearer {made['key']}", **ACCEPT}
    return http, make_key


def session_of(http: Http, headers: dict) -> dict:
    status, hdrs, reply = http("POST", "/mcp", INIT, headers)
    assert status == 200, reply
    return {**headers, "Mcp-Session-Id": {k.lower(): v for k, v in hdrs.items()}["mcp-session-id"]}


def test_each_ask_in_a_batch_counts_against_the_keys_rate(keyed, fake):
    """One POST of 12 `ask` calls ran 12 panels for a key limited to 3 requests a minute."""
    http, make_key = keyed
    headers = session_of(http, make_key("slow-app", rpm=3))      # initialize was the first request of the minute
    asks = [rpc(i, "tools/call", {"name": "ask", "arguments": {"collection": "core", "prompt": f"ask {i}"}})
            for i in range(2, 14)]
    status, _, replies = http("POST", "/mcp", asks, headers)
    assert status == 200 and [r["id"] for r in replies] == list(range(2, 14))
    ran = [r for r in replies if "result" in r]
    refused = [r for r in replies if "error" in r]
    assert len(ran) == 2 and len(refused) == 10            # the POST and one more: 3 in the minute with initialize
    assert all("limited to 3 requests a minute" in r["error"]["message"] and r["error"]["data"]["retry_after"] > 0
               for r in refused)
    assert len(chat_requests(fake)) == 2 * 2                # two panels of two members, nothing more went upstream
    assert http("POST", "/mcp", rpc(99, "ping"), headers)[0] == 429   # and the minute is spent for the key


def test_a_batch_past_the_cap_is_refused_whole(keyed, fake):
    """A batch of 5,000 messages was accepted (each run in turn, in one request's thread)."""
    http, make_key = keyed
    headers = session_of(http, make_key("big-app"))
    status, _, refused = http("POST", "/mcp", [rpc(i, "ping") for i in range(5000)], headers)
    assert status == 400 and f"at most {MAX_BATCH} messages" in refused["error"]["message"]
    status, _, replies = http("POST", "/mcp", [rpc(i, "ping") for i in range(MAX_BATCH)], headers)
    assert status == 200 and len(replies) == MAX_BATCH and not chat_requests(fake)


def test_a_stdio_batch_past_the_cap_is_refused_whole():
    """`bench mcp` on stdio took a batch of any size (HTTP's cap was 32): one line set 5,000 calls going."""
    with Raw(closed_url()) as srv:
        srv.initialize("2025-03-26", msg_id=1)
        srv.send([rpc(i, "ping") for i in range(2, 5002)])
        refused = srv.recv()
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert f"at most {MAX_BATCH} messages" in refused["error"]["message"]
        srv.send([rpc(i, "ping") for i in range(MAX_BATCH)])
        assert [r["id"] for r in srv.recv()] == list(range(MAX_BATCH))
        assert srv.close() == 0
    assert len(check_all_jsonrpc(srv.lines)) == 3        # initialize, the refusal, the batch: nothing else ran


def test_one_callers_initializes_end_only_its_own_sessions(keyed):
    """The cap was global, oldest first: one caller's flood of initializes ended every other caller's sessions."""
    http, make_key = keyed
    other = session_of(http, make_key("quiet-app"))
    flooder = make_key("noisy-app")
    first = session_of(http, flooder)
    for _ in range(PER_OWNER):
        session_of(http, flooder)
    assert http("POST", "/mcp", rpc(2, "ping"), other)[0] == 200
    assert http("POST", "/mcp", rpc(2, "ping"), first)[0] == 404      # the flooder's own oldest went


def test_past_the_global_cap_a_new_session_is_refused_and_none_is_ended():
    now = [0.0]
    sessions = Sessions(clock=lambda: now[0])
    kept, _ = sessions.open("key:first:1", Tools(Reach()), 3600)
    owners = (MAX_SESSIONS // PER_OWNER) + 1
    opened = [sessions.open(f"key:k{n}:1", Tools(Reach()), 3600) for n in range(owners) for _ in range(PER_OWNER)]
    assert len(sessions) == MAX_SESSIONS and opened[-1] is None
    assert sessions.find(kept, "key:first:1", 3600) is not None
    now[0] += 3601                                              # idle ones make room again
    assert sessions.open("key:late:1", Tools(Reach()), 3600) is not None and len(sessions) == 1
