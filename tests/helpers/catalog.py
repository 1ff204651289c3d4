"""Catalog test helpers: the fake catalog host, the recorded samples as the data folder's copies, endpoint mapping."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwarmers.catalog import parse, sources, store
from benchwarmers.providers.transport import Timeouts
from tests.fakes.catalog import FIXTURES, FakeCatalog
from tests.helpers.data import write

# The samples' copies are dated just after the shipped ones, so they are the copies in use, and "recent"
# (Discover) is counted from a fixed day whatever day the tests run.
SAMPLE_DATE = "2026-12-01T00:00:01Z"


def sample(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def install_samples(home: Path, extra: dict | None = None) -> None:
    """The recorded models.dev and OpenRouter samples, as the copies last fetched into the data folder; `extra`:
    more models for models.dev's OpenRouter entry ({id: models.dev model entry})."""
    for source, name in (("models.dev", "models.dev-api.json"), ("openrouter", "openrouter-models.json")):
        raw = sample(name)
        if source == "models.dev" and extra:
            raw["openrouter"]["models"].update(extra)
        data = parse.trim(raw, parse.KEEP[source])
        path = store.copy_path(home, source)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"source": source, "url": "recorded sample", "fetched": SAMPLE_DATE,
                                    "data": data}), encoding="utf-8")


def map_endpoints(home: Path, mapping: dict, models: dict | None = None) -> None:
    """config/overrides.json: {endpoint: provider id} (the fakes sit on 127.0.0.1), and per-model overrides."""
    write(home, "overrides.json", {"endpoints": {e: {"provider": p} for e, p in mapping.items()},
                                   "models": models or {}})


@pytest.fixture
def catalog_host():
    """A started fake catalog host that every catalog fetch goes to; short timeouts."""
    with FakeCatalog() as fake:
        sources.use_fake_for_tests(fake.root, Timeouts(connect=2, first_byte=2, idle=2))
        try:
            yield fake
        finally:
            sources.use_fake_for_tests(None)
