"""Helpers for route-mode tests: a collection of members on fake upstreams, and the captured agent requests."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.data import configure

WIRE = Path(__file__).parent.parent / "wire"


@pytest.fixture
def fakes():
    """One started fake upstream per protocol: {api: fake}."""
    from tests.fakes import start_all
    with start_all() as started:
        yield started


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
