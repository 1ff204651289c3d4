"""Claude Code's Stop hook: the seats this turn's `ask` calls returned, read from the transcript, and the decision
that keeps the agent going once to judge the ones still without a verdict."""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlencode

from ..servicelink import CommandError, ServiceLink
from ..words import plural

TIMEOUT = 5.0                   # the hook holds up the end of a turn: a slow service is a silent one
MAX_CALLS = 200                 # what GET /bench/pending takes in `calls` and `limit`
# the `ask` tool writes one heading per seat (tools.panel_text): "## Seat 2 · beta · member · ok · call Xy3k9aQ2"
SEAT_HEADING = re.compile(r"^## Seat \d+ · .* · call ([A-Za-z0-9_-]{1,64})\s*$", re.M)
# an MCP tool named `ask` as Claude Code names it: mcp__<server>__ask, or mcp__plugin_<plugin>_<server>__ask
ASK_TOOL = re.compile(r"^mcp__.+__ask$")


def run(stdin: str, url: str | None = None, environ: dict | None = None) -> str:
    """What the hook prints: the block decision as one JSON line, or "" to let the turn end. Silent when it already
    reminded this turn (stop_hook_active), and when the input, the transcript or the service cannot be read."""
    try:
        hook = json.loads(stdin)
        if not isinstance(hook, dict) or hook.get("stop_hook_active") or \
                not isinstance(hook.get("transcript_path"), str):
            return ""
        calls = calls_this_turn(entries(Path(hook["transcript_path"])))
        points, waiting = pending(ServiceLink(url, TIMEOUT, environ), calls) if calls else ([], [])
    except (CommandError, OSError, ValueError):
        return ""
    if not waiting and not points:
        return ""
    return json.dumps({"decision": "block", "reason": reason(waiting, points)}) + "\n"


def entries(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line) if line.strip() else None
        except ValueError:
            continue            # a line being written as we read it
        if isinstance(entry, dict):
            out.append(entry)
    return out


def content(entry: dict):
    message = entry.get("message")
    return message.get("content") if isinstance(message, dict) else None


def blocks(entry: dict) -> list[dict]:
    found = content(entry)
    return [b for b in found if isinstance(b, dict)] if isinstance(found, list) else []


def starts_turn(entry: dict) -> bool:
    """The user's own prompt (not a tool result, not a meta or side-chain entry) starts a turn."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isSidechain"):
        return False
    if isinstance(content(entry), str):
        return True
    kinds = {b.get("type") for b in blocks(entry)}
    return "text" in kinds and "tool_result" not in kinds


def result_text(block: dict) -> str:
    found = block.get("content")
    if isinstance(found, str):
        return found
    parts = found if isinstance(found, list) else []
    return "\n".join(str(c.get("text") or "") for c in parts if isinstance(c, dict) and c.get("type") == "text")


def calls_this_turn(all_entries: list[dict]) -> list[str]:
    """The call ids of every seat the `ask` tool returned since the user's last prompt, in order."""
    start = max((i for i, e in enumerate(all_entries) if starts_turn(e)), default=0)
    asks, calls = set(), []
    for entry in all_entries[start:]:
        for block in blocks(entry):
            if block.get("type") == "tool_use" and ASK_TOOL.match(str(block.get("name") or "")):
                asks.add(block.get("id"))
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in asks:
                calls += [c for c in SEAT_HEADING.findall(result_text(block)) if c not in calls]
    return calls[-MAX_CALLS:]


def pending(client: ServiceLink, calls: list[str]) -> tuple[list[dict], list[dict]]:
    """(the unjudged points of these calls' panels, the answers among these calls without a verdict)."""
    data = client.get("/bench/pending?" + urlencode({"calls": ",".join(calls), "limit": MAX_CALLS}), gateway=True)
    data = data if isinstance(data, dict) else {}
    points, answers = ([p for p in got if isinstance(p, dict)] if isinstance(got := data.get(name), list) else []
                       for name in ("points", "pending"))
    return points, answers


def reason(waiting: list[dict], points: list[dict] | None = None) -> str:
    """Only ids, seats and models go back to the agent: it has the answers (and the points' claims) in its context
    already, and a seat's own words do not belong in an instruction. Points come first: one judgement of a point
    counts for every seat that took a side."""
    lines = []
    if points:
        lines += [f"Benchwarmers: {plural(len(points), 'point')} where the seats disagree, not judged yet:",
                  *[f"- point {p.get('id')} · asserted by seat {', '.join(map(str, p.get('assert') or [])) or '-'}"
                    f" · denied by seat {', '.join(map(str, p.get('deny') or [])) or '-'}" for p in points],
                  "Check each against the code and send a `verdict` (point, holds) for it first."]
    if waiting:
        lines += [f"Benchwarmers: no verdict yet for {plural(len(waiting), 'answer')} from the panel you asked this "
                  "turn:", *[f"- call {p.get('call')} · seat {p.get('seat')} · {p.get('model')}" for p in waiting]]
    lines.append("Send a `verdict` (call, useful, real, false) for each answer you checked against the code, and tell "
                 "the user about any you did not check rather than judging it unchecked. Verdicts decide which models "
                 "get seated.")
    return "\n".join(lines)
