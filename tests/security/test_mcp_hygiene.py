"""MCP hygiene: the MCP server's stdout carries JSON-RPC and nothing else, keys never reach it, and its tools are
held to the same gateway-key policy as every other path."""
from __future__ import annotations

import json

from tests.fakes import FakeOpenAI, Reply
from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data, keyed_endpoint, raw
from tests.test_mcp import Raw, check_all_jsonrpc

PROVIDER_KEY = "sk-mcp-canary-0123456789abcdef"
HOSTILE = f"\x1b]0;owned\x07\x1b[2J\rforged line; key {PROVIDER_KEY}"


def test_mcp_output_is_clean_and_keyless_when_an_upstream_misbehaves(home, make_service, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_KEY_FAKE", PROVIDER_KEY)
    with FakeOpenAI() as fake:
        fake.expect_key(PROVIDER_KEY)
        fake.script("m-a", Reply(text=HOSTILE, chunk_chars=7))
        fake.script("m-b", Reply.error(500, message=HOSTILE))
        bench_data(home, fake)
        keyed_endpoint(home)
        svc = make_service()
        with Raw(svc.url) as srv:
            srv.initialize("2025-11-25", msg_id=1)
            result = srv.call(2, "tools/call", {"name": "ask", "arguments": {"collection": "core",
                                                                             "prompt": "hi"}})["result"]
            assert srv.close() == 0
    out = b"".join(srv.lines)
    check_all_jsonrpc(srv.lines)
    assert b"\x1b" not in out and b"\r" not in out.replace(b"\\r", b"")
    assert PROVIDER_KEY.encode() not in out and PROVIDER_KEY.encode() not in srv.err
    assert "[redacted]" in json.dumps(result)


def test_an_mcp_ask_is_held_to_the_keys_collections(home, make_service):
    with FakeOpenAI() as fake:
        bench_data(home, fake)
        svc = make_service(admin_token=TOKEN)
        _, _, made = raw(svc.url, "POST", "/bench/keys", b'{"name": "mcp", "collections": ["core"]}',
                         {"Content-Type": "application/json", **ADMIN_HEADERS})
        with Raw(svc.url, BENCHWARMERS_KEY=json.loads(made)["key"]) as srv:
            srv.initialize("2025-11-25", msg_id=1)
            result = srv.call(2, "tools/call", {"name": "ask", "arguments": {
                "collection": "core", "prompt": "hi", "with": ["paid"]}})["result"]
            assert srv.close() == 0
        assert result["isError"] is True and "does not reach" in json.dumps(result)
        assert not any(isinstance(r.body, dict) and r.body.get("model") == "m-paid" for r in fake.requests)
    check_all_jsonrpc(srv.lines)
