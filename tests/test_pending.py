"""Answers waiting for a verdict: GET /bench/pending (by key, by session, by call ids), `bench verdicts pending`,
and the stdio MCP server's pending_verdicts for its own session."""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.test_cli_ask import bench_cli, err, out

ROOT = Path(__file__).resolve().parent.parent
CHAT = "/v1/chat/completions"


@pytest.fixture
def fake(home):
    """`core` (alpha, beta, and one explore seat that gamma fills) on one fake OpenAI upstream."""
    with FakeOpenAI() as upstream:
        upstream.script("alpha-1", "Alpha: line 3 is fine. " + "word " * 80)
        configure(home, {"fake": (upstream, "openai")},
                  {"alpha": ("fake", "alpha-1"), "beta": ("fake", "beta-1"), "gamma": ("fake", "gamma-1")},
                  {"core": {"members": ["alpha", "beta"], "explore": 0, "merge_model": "gamma"}})
        yield upstream


def ask(http: Http, prompt: str, session: str | None = None, model: str = "bench/core") -> list[dict]:
    headers = {"X-Bench-Session": session} if session else {}
    status, _, reply = http("POST", CHAT, {"model": model, "messages": [{"role": "user", "content": prompt}]},
                            headers)
    assert status == 200, reply
    return reply["bench"]["seats"]


def test_pending_lists_unjudged_answers_newest_first(fake, http):
    first = ask(http, "first", session="s-one")
    second = ask(http, "second", session="s-two")
    status, _, found = http("GET", "/bench/pending")
    assert status == 200 and found["total"] == 4 and found["asked_by"] == {"everyone": True}
    calls = [p["call"] for p in found["pending"]]
    assert set(calls[:2]) == {s["call"] for s in second} and set(calls[2:]) == {s["call"] for s in first}
    alpha = next(p for p in found["pending"] if p["model"] == "alpha")
    assert alpha["seat"] and alpha["kind"] == "member" and alpha["collection"] == "core" and alpha["panel"]
    assert alpha["excerpt"].startswith("Alpha: line 3 is fine.") and alpha["excerpt"].endswith("…")
    assert len(alpha["excerpt"]) == 200

    by_session = http("GET", "/bench/pending?session=s-one")[2]
    assert {p["call"] for p in by_session["pending"]} == {s["call"] for s in first}
    assert by_session["asked_by"] == {"session": "s-one"}
    some = http("GET", f"/bench/pending?calls={first[0]['call']},nope&limit=1")[2]
    assert [p["call"] for p in some["pending"]] == [first[0]["call"]] and some["limit"] == 1

    http("POST", "/bench/verdict", {"call": first[0]["call"], "useful": True})
    assert http("GET", "/bench/pending")[2]["total"] == 3
    assert http("GET", f"/bench/pending?calls={first[0]['call']}")[2]["pending"] == []


def test_pending_leaves_out_failures_and_merges(fake, http):
    fake.script("beta-1", Reply.error(500))
    status, _, reply = http("POST", CHAT, {"model": "bench/core:merged", "messages": [
        {"role": "user", "content": "merge it"}]})
    assert status == 200
    found = http("GET", "/bench/pending")[2]["pending"]
    assert [p["model"] for p in found] == ["alpha"]          # beta failed; gamma's merge is not a seat's answer


@pytest.mark.parametrize("query, headers, word", [
    ("?limit=0", {}, "limit"), ("?limit=x", {}, "limit"), ("?calls=a%20b", {}, "calls"),
    ("?calls=" + ",".join(["a"] * 201), {}, "calls"), ("?session=" + "s" * 129, {}, "session")])
def test_pending_refuses_bad_queries(fake, http, query, headers, word):
    status, _, body = http("GET", "/bench/pending" + query, headers=headers)
    assert status == 400 and word in body["error"]["message"]


def test_a_bad_session_header_on_an_ask_is_a_400(fake, http):
    status, _, body = http("POST", CHAT, {"model": "bench/core", "messages": [{"role": "user", "content": "x"}]},
                           {"X-Bench-Session": "two words"})
    assert status == 400 and "X-Bench-Session" in body["error"]["message"]


def test_cli_lists_pending_and_says_how_to_judge(fake, service):
    http = Http(service.url)
    empty = bench_cli(service.url, "verdicts", "pending")
    assert empty.returncode == 0 and "No answer is waiting" in err(empty)
    seats = ask(http, "Is line 3 right?")
    proc = bench_cli(service.url, "verdicts", "pending")
    assert proc.returncode == 0, err(proc)
    for s in seats:
        assert s["call"] in out(proc)
    assert "Alpha: line 3 is fine." in out(proc)
    assert "Waiting for a verdict: 2 answers" in err(proc) and "bench verdict" in err(proc)
    proc = bench_cli(service.url, "verdicts", "pending", "--limit", "1", "--json")
    assert proc.returncode == 0 and '"total": 2' in out(proc) and out(proc).count('"call"') == 1
    assert bench_cli(service.url, "verdicts", "pending", "--limit", "500").returncode == 2


def test_stdio_mcp_pending_verdicts_are_its_own_sessions(fake, service):
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    other = ask(Http(service.url), "someone else's ask")        # no session: not this MCP server's

    env = {"BENCHWARMERS_URL": service.url, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8",
           "BENCHWARMERS_HOME": os.environ["BENCHWARMERS_HOME"]}
    params = StdioServerParameters(command=sys.executable, args=["-m", "benchwarmers", "mcp"], env=env, cwd=str(ROOT))

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                asked = await session.call_tool("ask", {"collection": "core", "prompt": "Mine."})
                listed = await session.call_tool("pending_verdicts", {"limit": 10})
                bad = await session.call_tool("pending_verdicts", {"limit": 0})
                return asked, listed, bad
    asked, listed, bad = asyncio.run(asyncio.wait_for(main(), 60))
    mine = {s["call"] for s in asked.structured_content["seats"]}
    assert {p["call"] for p in listed.structured_content["pending"]} == mine
    assert not mine & {s["call"] for s in other}
    assert bad.is_error and "limit" in bad.content[0].text
