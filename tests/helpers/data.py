"""Write endpoints, models and collections into a test's data folder, pointing at fake upstreams."""
from __future__ import annotations

import json
from pathlib import Path


def write(home: Path, name: str, data: dict) -> None:
    path = Path(home) / "config" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def configure(home: Path, endpoints: dict, models: dict, collections: dict | None = None) -> None:
    """endpoints: {name: (fake, api)}; models: {alias: (endpoint, served) or (endpoint, served, facts)} or dicts;
    collections: {name: {"members": [...], "explore": n, ...}}."""
    write(home, "endpoints.json", {"endpoints": {
        name: {"base_url": fake.url, "api": api, "no_key": True} for name, (fake, api) in endpoints.items()}})
    entries = {}
    for alias, spec in models.items():
        if isinstance(spec, dict):
            entries[alias] = spec
        else:
            endpoint, served, *rest = spec
            entries[alias] = {"endpoint": endpoint, "served": served, "facts": rest[0] if rest else {}}
    write(home, "models.json", {"models": entries})
    write(home, "collections.json", {"collections": collections or {}})
