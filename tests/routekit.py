"""Helpers for route-mode tests: a collection of members on fake upstreams, and the captured agent requests."""
from __future__ import annotations

import json
from pathlib import Path

from benchsetup import configure

WIRE = Path(__file__).parent / "wire"


def captured(name: str) -> list[dict]:
    """The POSTs a real client sent (method, path, headers, body), from tests/wire/*.jsonl."""
    rows = [json.loads(line) for line in (WIRE / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["method"] == "POST"]


def route_collection(home, fakes: dict, members: list[tuple[str, str]], shadow: int = 0, extra_models=None):
    """fakes: {api: started fake}; members: [(alias, api)] in the collection 'core' (served name = alias + '-s')."""
    endpoints = {api: (fake, api) for api, fake in fakes.items()}
    models = {alias: (api, alias + "-s", {"tools": True}) for alias, api in members}
    models.update(extra_models or {})
    configure(home, endpoints, models,
              {"core": {"members": [a for a, _ in members], "explore": 0, "shadow": shadow}})


def sse(raw: bytes) -> list[tuple[str | None, dict | str]]:
    """(event name, data) pairs of an SSE body."""
    out = []
    for block in raw.decode("utf-8").split("\n\n"):
        event, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            text = "\n".join(data)
            try:
                out.append((event, json.loads(text)))
            except ValueError:
                out.append((event, text))
    return out
