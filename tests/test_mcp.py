"""The MCP server: the official SDK's stdio client against a real service with a fake upstream, and raw JSON-RPC."""
from __future__ import annotations

import asyncio
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers.data import configure
from benchwarmers.mcp.tools import Reach, ToolError, Tools, ask_body, check_args, TOOLS
from tests.fakes import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
KEY = "bw-test-secret-7f3a9c2e51d04b8a"
BETA_SAYS = "Beta thinks line 3 divides by zero."


@pytest.fixture
def panel(service, home):
    """The service with collection `core` (alpha, beta) and an extra model gamma, all on one fake OpenAI upstream."""
    with FakeOpenAI() as fake:
        fake.script("beta-1", BETA_SAYS)
        configure(home, {"fake": (fake, "openai")},
                  {"alpha": ("fake", "alpha-1"), "beta": ("fake", "beta-1"), "gamma": ("fake", "gamma-1")},
                  {"core": {"members": ["alpha", "beta"], "explore": 0, "description": "the core panel"}})
        yield service, fake


def closed_url() -> str:
    """A loopback URL where nothing listens (the port was just free)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def server_env(url: str, **extra) -> dict:
    env = dict(os.environ, BENCHWARMERS_URL=url, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    env.update(extra)
    return env


# -- the official SDK as the user's MCP client -----------------------------------------------------

def run_sdk(url: str, body, errlog: Path, **extra_env):
    """Start `python -m benchwarmers mcp` with the SDK's stdio client, initialize, and run `body(session, init)`."""
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"BENCHWARMERS_URL": url, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8",
           "BENCHWARMERS_HOME": os.environ["BENCHWARMERS_HOME"], **extra_env}
    params = StdioServerParameters(command=sys.executable, args=["-m", "benchwarmers", "mcp"], env=env, cwd=str(ROOT))

    async def main():
        with open(errlog, "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    return await body(session, init)
    return asyncio.run(asyncio.wait_for(main(), 60))


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_sdk_client_lists_tools_and_asks_the_panel(panel, http, tmp_path):
    service, fake = panel

    async def body(session, init):
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "benchwarmers"
        assert init.capabilities.tools is not None
        tools = {t.name: t for t in (await session.list_tools()).tools}
        listed = await session.call_tool("list_collections", {})
        asked = await session.call_tool("ask", {"collection": "core", "prompt": "Is line 3 right?",
                                                "system": "Be terse."})
        return tools, listed, asked

    tools, listed, asked = run_sdk(service.url, body, tmp_path / "err.log")
    assert set(tools) == {"list_collections", "ask", "verdict", "pending_verdicts"}
    assert tools["ask"].input_schema["required"] == ["collection", "prompt"]
    assert set(tools["ask"].input_schema["properties"]) == {"collection", "prompt", "merged", "with", "system",
                                                           "points", "conversation"}
    assert set(tools["verdict"].input_schema["properties"]) == {"call", "useful", "note", "real", "false", "point",
                                                               "holds", "from_points"}
    assert all(t.output_schema and t.output_schema["type"] == "object" for t in tools.values())
    rules = tools["ask"].description.lower()
    for rule in ("collection rather than a favourite model", "verify", "every seat", "verdict"):
        assert rule in rules
    assert "every seat you judged" in tools["verdict"].description

    assert not listed.is_error
    assert [c["name"] for c in listed.structured_content["collections"]] == ["core"]
    assert "core" in text_of(listed) and "alpha, beta" in text_of(listed)

    assert not asked.is_error, text_of(asked)
    data = asked.structured_content
    assert data["collection"] == "core" and data["panel"]
    seats = {s["model"]: s for s in data["seats"]}
    assert set(seats) == {"alpha", "beta"}
    assert seats["beta"]["answer"] == BETA_SAYS and seats["beta"]["status"] == "ok"
    assert all(s["kind"] == "member" for s in seats.values())
    text = text_of(asked)
    for s in seats.values():
        assert s["call"] and s["call"] in text       # every seat with its call id in the text
        status, _, call = http("GET", f"/bench/calls/{s['call']}")
        assert status == 200 and call["model"] == s["model"]
    assert BETA_SAYS in text and "verdict" in text
    sent = [r.body for r in fake.requests if r.path.endswith("/chat/completions")]
    assert len(sent) == 2
    for body in sent:
        assert body["messages"][0] == {"role": "system", "content": "Be terse."}
        assert "Is line 3 right?" in json.dumps(body["messages"][-1])


def test_sdk_verdict_merged_and_extra_seats(panel, http, tmp_path):
    service, fake = panel

    async def body(session, init):
        asked = await session.call_tool("ask", {"collection": "core", "prompt": "Review this.", "merged": True,
                                                "with": ["gamma"]})
        beta = next(s for s in asked.structured_content["seats"] if s["model"] == "beta")
        first = await session.call_tool("verdict", {"call": beta["call"], "useful": True,
                                                    "real": ["line 3 divides by zero"], "note": "checked"})
        second = await session.call_tool("verdict", {"call": beta["call"], "useful": False,
                                                     "false": ["line 3 divides by zero"]})
        unknown = await session.call_tool("verdict", {"call": "no-such-call", "useful": True})
        missing = await session.call_tool("ask", {"collection": "core"})
        wrong = await session.call_tool("verdict", {"call": beta["call"], "useful": "yes"})
        return asked, beta, first, second, unknown, missing, wrong

    asked, beta, first, second, unknown, missing, wrong = run_sdk(service.url, body, tmp_path / "err.log")
    data = asked.structured_content
    assert data["mode"] == "merged"
    assert data["merge"]["call"] and data["merge"]["status"] == "ok"
    kinds = {s["model"]: s["kind"] for s in data["seats"]}
    assert kinds == {"alpha": "member", "beta": "member", "gamma": "with"}
    assert "Merged" in text_of(asked)

    assert not first.is_error and first.structured_content["useful"] is True
    assert first.structured_content["call"] == beta["call"]
    assert not second.is_error and second.structured_content["revisions"] == 2
    assert "revision 2" in text_of(second)
    status, _, call = http("GET", f"/bench/calls/{beta['call']}")
    assert [v["useful"] for v in call["verdicts"]] == [True, False]
    assert call["verdicts"][1]["false"] == ["line 3 divides by zero"]

    assert unknown.is_error and "no-such-call" in text_of(unknown)
    assert missing.is_error and "prompt" in text_of(missing)
    assert wrong.is_error and "useful" in text_of(wrong)


def test_sdk_without_a_service_keeps_the_session_and_says_how_to_start(tmp_path):
    url = closed_url()

    async def body(session, init):
        tools = (await session.list_tools()).tools
        results = [await session.call_tool("list_collections", {}),
                   await session.call_tool("ask", {"collection": "core", "prompt": "hi"}),
                   await session.call_tool("verdict", {"call": "abc", "useful": True})]
        await session.send_ping()                     # the session is still up after the failures
        return tools, results

    errlog = tmp_path / "err.log"
    tools, results = run_sdk(url, body, errlog, BENCHWARMERS_KEY=KEY)
    assert len(tools) == 4
    for r in results:
        assert r.is_error
        text = text_of(r)
        assert f"No Benchwarmers service answers at {url}" in text
        assert "`benchwarmers`" in text and "BENCHWARMERS_URL" in text
        assert KEY not in text
    assert KEY not in errlog.read_text(encoding="utf-8")


# -- raw JSON-RPC on the launcher's stdio ----------------------------------------------------------

class Raw:
    """`python mcp_server.py` on pipes: send objects or raw lines, read replies, keep every stdout line."""

    def __init__(self, url: str, **env):
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "mcp_server.py")], cwd=str(ROOT),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=server_env(url, **env))
        self.lines: list[bytes] = []
        self.err = b""
        self.q: queue.Queue = queue.Queue()
        self.readers = [threading.Thread(target=self._out, daemon=True),
                        threading.Thread(target=self._err, daemon=True)]
        for t in self.readers:
            t.start()

    def _out(self):
        for raw in self.proc.stdout:
            self.lines.append(raw)
            self.q.put(raw)
        self.q.put(None)

    def _err(self):
        self.err = self.proc.stderr.read()

    def send(self, msg) -> None:
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 30):
        raw = self.q.get(timeout=timeout)
        assert raw is not None, f"the server closed stdout; stderr: {self.err.decode(errors='replace')}"
        return json.loads(raw)

    def call(self, msg_id, method, params=None):
        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.recv()

    def initialize(self, version: str, msg_id=0) -> dict:
        reply = self.call(msg_id, "initialize", {"protocolVersion": version, "capabilities": {},
                                                 "clientInfo": {"name": "raw-test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self) -> int:
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=30)
        for t in self.readers:
            t.join(10)
        return rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


def check_all_jsonrpc(lines: list[bytes]) -> list:
    """Every stdout line is one JSON-RPC 2.0 reply (or a batch of them): nothing else ever reaches stdout."""
    out = []
    for raw in lines:
        assert raw.endswith(b"\n")
        msg = json.loads(raw.decode("utf-8"))
        for m in (msg if isinstance(msg, list) else [msg]):
            assert m["jsonrpc"] == "2.0" and "id" in m and ("result" in m) != ("error" in m), m
        out.append(msg)
    return out


@pytest.mark.parametrize("asked, expected", [(v, v) for v in VERSIONS] +
                         [("2023-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")])
def test_raw_negotiation_and_errors(asked, expected):
    with Raw(closed_url()) as srv:
        init = srv.initialize(asked, msg_id=1)["result"]
        assert init["protocolVersion"] == expected
        assert init["capabilities"] == {"tools": {"listChanged": False}}
        assert init["serverInfo"]["name"] == "benchwarmers" and init["serverInfo"]["version"]
        assert "every seat" in init["instructions"]
        assert srv.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
        tools = srv.call("three", "tools/list")["result"]["tools"]
        assert [t["name"] for t in tools] == ["list_collections", "ask", "verdict", "pending_verdicts"]
        for t in tools:
            assert t["inputSchema"]["type"] == "object"
            assert ("outputSchema" in t) == (expected >= "2025-06-18")
            assert ("annotations" in t) == (expected >= "2025-03-26")
        assert srv.call(4, "resources/nothing")["error"]["code"] == -32601
        srv.send(b'{"jsonrpc": "2.0", "id": 5, "method": ')
        parse = srv.recv()
        assert parse["id"] is None and parse["error"]["code"] == -32700
        srv.send({"jsonrpc": "1.0", "id": 6, "method": "ping"})
        assert srv.recv()["error"]["code"] == -32600
        assert srv.call(7, "tools/call", {"name": "nope", "arguments": {}})["error"]["code"] == -32602
        assert srv.call(8, "initialize", {"capabilities": {}})["error"]["code"] == -32602
        called = srv.call(9, "tools/call", {"name": "list_collections", "arguments": {}})["result"]
        assert called["isError"] is True and "structuredContent" not in called
        assert srv.close() == 0
    replies = check_all_jsonrpc(srv.lines)
    assert [r["id"] for r in replies] == [1, 2, "three", 4, None, 6, 7, 8, 9]
    assert b"speaking " + expected.encode() in srv.err     # logs go to stderr


def test_raw_batch_notifications_and_eof():
    with Raw(closed_url()) as srv:
        srv.initialize("2025-03-26", msg_id=1)
        srv.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})   # no reply
        srv.send([{"jsonrpc": "2.0", "id": 2, "method": "ping"},
                  {"jsonrpc": "2.0", "method": "notifications/initialized"},
                  {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}])
        batch = srv.recv()
        assert isinstance(batch, list) and [r["id"] for r in batch] == [2, 3]
        assert len(batch[1]["result"]["tools"]) == 4
        srv.send([])
        assert srv.recv()["error"]["code"] == -32600
        assert srv.close() == 0
    assert len(check_all_jsonrpc(srv.lines)) == 3


def test_raw_old_version_gets_json_in_text(panel):
    service, _ = panel
    with Raw(service.url) as srv:
        srv.initialize("2024-11-05", msg_id=1)
        result = srv.call(2, "tools/call", {"name": "ask", "arguments": {"collection": "core",
                                                                         "prompt": "Is line 3 right?"}})["result"]
        assert srv.close() == 0
    assert result["isError"] is False and "structuredContent" not in result
    readable, structured = result["content"]
    data = json.loads(structured["text"])
    assert {s["model"] for s in data["seats"]} == {"alpha", "beta"}
    for s in data["seats"]:
        assert s["call"] in readable["text"]


def test_raw_cancelled_call_gets_no_reply(panel):
    service, fake = panel
    cancelled = threading.Event()                  # the panel is still waiting when the cancel arrives
    fake.script("*", Reply(hold=cancelled))
    with Raw(service.url) as srv:
        try:
            srv.initialize("2025-11-25", msg_id=1)
            srv.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "ask", "arguments": {"collection": "core", "prompt": "slow"}}})
            srv.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7,
                                                                                       "reason": "user"}})
            assert srv.call(8, "ping")["id"] == 8        # answered while the tool call runs
            listed = srv.call(9, "tools/call", {"name": "list_collections", "arguments": {}})
            assert listed["result"]["isError"] is False
        finally:
            cancelled.set()
        assert srv.close() == 0                      # EOF: waits for the cancelled call, which sends nothing
    assert [r["id"] for r in check_all_jsonrpc(srv.lines)] == [1, 8, 9]
    assert any("slow" in json.dumps(r.body) for r in fake.requests)


def test_raw_key_never_in_output(panel):
    service, _ = panel
    with Raw(service.url, BENCHWARMERS_KEY=KEY) as srv:
        srv.initialize("2025-11-25", msg_id=1)
        srv.call(2, "tools/call", {"name": "list_collections", "arguments": {}})
        srv.call(3, "tools/call", {"name": "verdict", "arguments": {"call": KEY, "useful": True}})
        assert srv.close() == 0
    out = b"".join(srv.lines)
    assert KEY.encode() not in out and KEY.encode() not in srv.err
    assert b"[redacted]" in out        # the unknown call id was the key itself: the service's echo is redacted


def test_service_that_needs_a_key_says_which_variable(make_service):
    service = make_service(admin_token="admin-token-" + "9" * 16)
    with Raw(service.url) as srv:
        srv.initialize("2025-11-25", msg_id=1)
        result = srv.call(2, "tools/call", {"name": "list_collections", "arguments": {}})["result"]
        assert srv.close() == 0
    assert result["isError"] is True
    assert "gateway key" in result["content"][0]["text"] and "BENCHWARMERS_KEY" in result["content"][0]["text"]


def test_bad_timeout_is_a_tool_error_not_a_crash():
    with Raw(closed_url(), BENCHWARMERS_TIMEOUT="soon") as srv:
        srv.initialize("2025-11-25", msg_id=1)
        result = srv.call(2, "tools/call", {"name": "list_collections", "arguments": {}})["result"]
        assert result["isError"] and "BENCHWARMERS_TIMEOUT" in result["content"][0]["text"]
        assert srv.call(3, "ping")["result"] == {}
        assert srv.close() == 0


def test_cli_help_names_the_tools():
    r = subprocess.run([sys.executable, "-m", "benchwarmers", "mcp", "--help"], cwd=str(ROOT), capture_output=True,
                       env=server_env(closed_url()), timeout=30)
    assert r.returncode == 0 and b"list_collections" in r.stdout and b"stderr" in r.stdout


# -- the pieces in process -------------------------------------------------------------------------

def test_ask_body_mirrors_bench_ask():
    assert ask_body({"collection": "core", "prompt": "p"}) == {
        "model": "bench/core", "messages": [{"role": "user", "content": "p"}]}
    body = ask_body({"collection": "bench/core", "prompt": "p", "merged": True, "with": "a, b", "system": "s"})
    assert body["model"] == "bench/core:merged" and body["bench"] == {"with": ["a", "b"]}
    assert body["messages"][0] == {"role": "system", "content": "s"}
    assert ask_body({"collection": "core:merged", "prompt": "p", "merged": True})["model"] == "bench/core:merged"
    with pytest.raises(ToolError):
        ask_body({"collection": "core:route", "prompt": "p"})


def test_check_args_follows_the_schemas():
    schema = {t["name"]: t["inputSchema"] for t in TOOLS}
    check_args(schema["verdict"], {"call": "x", "useful": False, "real": ["a"]})
    for bad in ({"call": "x", "useful": 1}, {"call": "x", "useful": True, "real": "a"},
                {"call": "x", "useful": True, "real": [1]}, {"call": "x", "useful": True, "extra": 1},
                {"point": "p", "holds": "yes"}):
        with pytest.raises(ToolError):
            check_args(schema["verdict"], bad)
    tools = Tools(Reach())    # a seat's verdict needs call and useful, a point's point and holds: the tool says so
    for half in ({"call": "x"}, {"useful": True}, {"point": "p"}, {"point": "p", "holds": True, "useful": True}, {}):
        with pytest.raises(ToolError):
            tools.tool_verdict(half, None)
    with pytest.raises(ToolError):
        check_args(schema["ask"], {"collection": "core", "prompt": "   "})
