"""MCP and points, through the official SDK: `ask` returns the points with their ids, `verdict` judges a point (a
claim for every seat that took a side, proposals back), `pending_verdicts` lists unjudged points first; the Stop
hook names them."""
from __future__ import annotations

import json

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.panel import fake, setup_bench  # noqa: F401  (the fake fixture)
from tests.helpers.http import Http
from tests.test_mcp_http import run_sdk, text_of

ANSWERS = {"m-a": "The cache is stale. The lock is held.", "m-b": "The cache is fresh. The lock is held.",
           "m-c": "The lock is held."}


@pytest.fixture
def url(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b", "c"], "explore": 0, "merge_model": "merger",
                                      "points": "contested"}})
    for served, text in ANSWERS.items():
        fake.script(served, text)
    fake.script("m-merge", FakeReferee().reply())
    return make_service().url


def test_ask_returns_points_and_verdict_judges_one(url):
    async def body(session, init):
        asked = await session.call_tool("ask", {"collection": "core", "prompt": "Why is it slow?"})
        before = await session.call_tool("pending_verdicts", {})
        point = asked.structured_content["points"][0]["id"]
        judged = await session.call_tool("verdict", {"point": point, "holds": True, "note": "read cache.py"})
        bad = await session.call_tool("verdict", {"point": point, "useful": True})
        after = await session.call_tool("pending_verdicts", {})
        return asked, before, judged, bad, after

    asked, before, judged, bad, after = run_sdk(url, body)
    assert not asked.is_error, text_of(asked)
    [point] = asked.structured_content["points"]
    assert point["assert"] == [1] and point["deny"] == [2] and point["id"].startswith("pt_")
    text = text_of(asked)
    assert "## Where they disagree" in text and f"point {point['id']}" in text
    assert "seat 2 denys" not in text and "seat 2 denies: \u201cThe cache is fresh\u201d" in text
    assert "judge it with `verdict` (point, holds)" in text
    assert [p["id"] for p in before.structured_content["points"]] == [point["id"]]
    assert before.structured_content["points_total"] == 1 and "Points nobody judged yet: 1." in text_of(before)
    assert text_of(before).index(point["id"]) < text_of(before).index("Waiting for a verdict")
    assert not judged.is_error, text_of(judged)
    assert {(c["seat"], c["real"]) for c in judged.structured_content["claims"]} == {(1, True), (2, False)}
    proposals = {p["seat"]: p for p in judged.structured_content["proposals"]}
    assert proposals[1]["useful"] is True and proposals[2]["useful"] is False
    assert "from_points true" in text_of(judged)
    assert bad.is_error and "`point` and `holds`" in text_of(bad)
    assert after.structured_content["points"] == []
    models = Http(url)("GET", "/bench/record?collection=core")[2]["models"]
    assert models["a"]["real_claims"] == 1 and models["b"]["false_claims"] == 1


def test_pending_verdicts_says_how_many_points_wait_beyond_those_shown():
    from benchwarmers.mcp.tools import pending_text
    point = {"id": "pt_1", "panel": "p_1", "claim": "the cache is stale", "assert": [1], "deny": [2]}
    text = pending_text({"total": 0, "points": [point], "pending": [], "points_total": 3})
    assert "Points nobody judged yet: 3 (the newest 1 shown)." in text


def test_the_stop_hook_names_the_unjudged_points_first(url, tmp_path):
    from benchwarmers.mcp.stophook import run
    from benchwarmers.mcp.tools import panel_data, panel_text
    status, _, data = Http(url)("POST", "/v1/chat/completions",
                                {"model": "bench/core", "messages": [{"role": "user", "content": "Why?"}]})
    assert status == 200
    text = panel_text(panel_data(data["bench"], "bench/core", ""))
    transcript = tmp_path / "t.jsonl"
    entries = [{"type": "user", "message": {"content": "review it"}},
               {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1",
                                                              "name": "mcp__benchwarmers__ask"}]}},
               {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1",
                                                         "content": text}]}}]
    transcript.write_text("\n".join(json.dumps(e) for e in entries))
    said = json.loads(run(json.dumps({"transcript_path": str(transcript)}), url))
    point = data["bench"]["points"][0]["id"]
    assert said["decision"] == "block" and said["reason"].index(point) < said["reason"].index("call ")
