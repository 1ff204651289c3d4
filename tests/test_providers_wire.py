"""Real agent requests (tests/wire: Claude Code, Codex), parsed by their format, sent by every provider to its fake.

The fakes enforce the rules real APIs enforce (roles, tool_result pairing, non-empty text blocks), so a
route-mode member of any protocol can take what these agents send.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwarmers import formats
from benchwarmers.canonical import ToolCall
from benchwarmers.formats.base import RequestInfo
from benchwarmers.providers import PROVIDERS, Transport, make_provider
from tests.fakes import FAKES, Reply

WIRE = Path(__file__).parent / "wire"
CAPTURES = [("claude_code_2.1.197.json", "anthropic", "/v1/messages"),
            ("codex_0.171.0.json", "openai_responses", "/v1/responses")]


def asks():
    for filename, fmt, path in CAPTURES:
        for i, record in enumerate(json.loads((WIRE / filename).read_text())):
            if record.get("body"):
                yield f"{filename}#{i}", formats.get(fmt).parse(record["body"], RequestInfo(path=path)).ask


@pytest.mark.parametrize("api", sorted(PROVIDERS))
def test_agent_requests_reach_every_protocol(api):
    with FAKES[api]() as fake:
        provider = make_provider(api, fake.url, "k", transport=Transport())
        for label, ask in asks():
            mid_system = [m.text() for m in ask.messages if m.role == "system"]
            fake.script("member", Reply.tool("Bash", {"command": "echo hi"}))
            answer = provider.complete(ask, "member")
            assert answer.tool_calls and answer.tool_calls[0].args() == {"command": "echo hi"}, label
            body = fake.last.body
            assert fake.last.method == "POST" and body, label
            sent = json.dumps(body)
            for text in mid_system:                    # never dropped ...
                assert json.dumps(text)[1:-1][:80] in sent, label
            if api in ("anthropic", "gemini"):         # ... and folded where "system" is no valid role
                assert "system" not in {m.get("role") for m in body.get("messages", body.get("contents", []))}
            calls = [p for m in ask.messages for p in m.parts if isinstance(p, ToolCall)]
            for call in calls:
                assert call.name in sent, label
