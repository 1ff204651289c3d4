"""Follow-ups from the bench CLI (`--continue PANEL`, `--continue last`) and MCP's `ask` (`conversation`): each
seat continues its own thread, rebuilt from the record; what each seat was sent is read from the fake's log."""
from __future__ import annotations

import re

from tests.helpers.panel import bench, fake, requests_for, setup_bench  # noqa: F401 (fixtures)
from tests.test_cli_ask import bench_cli, err, out
from tests.test_mcp import panel, run_sdk  # noqa: F401 (fixture)


def assistant_turns(fake, served: str, prompt: str) -> list[str]:
    body = next(r.body for r in reversed(requests_for(fake, served)) if r.body["messages"][-1]["content"] == prompt)
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def test_cli_continue_by_id_and_last(bench, fake):
    first = bench_cli(bench.url, "ask", "core", "What does it do?")
    assert first.returncode == 0, err(first)
    panel = re.search(r"panel (p_\S+);", err(first)).group(1)
    assert f"--continue {panel}" in err(first)
    second = bench_cli(bench.url, "ask", "core", "And why?", "--continue", panel)
    assert second.returncode == 0, err(second)
    assert f"(continues {panel})" in err(second)
    assert "## Seat 1 · a · member" in out(second)
    assert assistant_turns(fake, "m-a", "And why?") == ["m-a says: What does it do?"]
    assert assistant_turns(fake, "m-b", "And why?") == ["m-b says: What does it do?"]
    third = bench_cli(bench.url, "ask", "core", "Anything else?", "--continue", "last")
    assert third.returncode == 0, err(third)
    assert assistant_turns(fake, "m-a", "Anything else?") == ["m-a says: What does it do?", "m-a says: And why?"]
    wrong = bench_cli(bench.url, "ask", "core", "x", "--continue", "nope")
    assert wrong.returncode != 0 and "bench.continue" in err(wrong)


def test_mcp_ask_returns_a_conversation_and_follows_it(panel, tmp_path):
    service, fake = panel

    async def body(session, init):
        first = await session.call_tool("ask", {"collection": "core", "prompt": "Is line 3 right?"})
        again = await session.call_tool("ask", {"collection": "core", "prompt": "And line 4?",
                                                "conversation": first.structured_content["conversation"]})
        return first, again

    first, again = run_sdk(service.url, body, tmp_path / "err.log")
    data = first.structured_content
    assert data["conversation"] == data["panel"] and "conversation" in first.content[0].text
    assert not again.is_error and again.structured_content["conversation"] != data["conversation"]
    assert assistant_turns(fake, "alpha-1", "And line 4?") == ["alpha-1 says: Is line 3 right?"]
    assert assistant_turns(fake, "beta-1", "And line 4?") == ["Beta thinks line 3 divides by zero."]
