"""The parts of the Bench that several dashboard pages share (each page's `bench` is a Protocol naming the parts it
uses, as the API's handlers' are: tests/test_parts.py checks them)."""
from __future__ import annotations

from typing import Protocol

from ..api.parts import EffectiveSettings


class Address(Protocol):
    """Where the service is reached."""

    @property
    def url(self) -> str: ...


class Served(Address, EffectiveSettings, Protocol):
    """Where the service is, and whether it enforces gateway keys (an admin token set, and a setting)."""
    admin_token: str | None
