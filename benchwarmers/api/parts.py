"""The parts of the Bench that handlers in several modules share: each handler's `bench` is a Protocol naming only
the parts it uses (tests/test_parts.py checks that every name is declared and is on the real Bench)."""
from __future__ import annotations

from typing import Protocol

from ..store import Database


class Records(Protocol):
    """The data folder's database, alone."""
    db: Database


class EffectiveSettings(Protocol):
    """The effective settings (read again whenever settings.json changed)."""

    def settings(self) -> dict: ...


class ProviderLookup(Protocol):
    """The catalog's provider for a base URL (a hub's source)."""

    def provider_at(self, base_url: str) -> str | None: ...
