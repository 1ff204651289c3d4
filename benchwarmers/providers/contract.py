"""What one upstream protocol's adapter gives: the class facts and methods of a `Provider` subclass.

`Provider` (providers/base.py) does the rest: sending, streaming, errors, retries, model lists. A new protocol is a
class meeting this contract, one line in PROVIDERS (providers/__init__.py) and a fake in tests/fakes/;
tests/test_plugins.py checks each provider against it and finds it in the dashboard, the CLI and the fakes."""
from __future__ import annotations

from typing import Callable, ClassVar, Iterator, Protocol, runtime_checkable

from ..canonical import Ask


@runtime_checkable
class ProviderContract(Protocol):
    """One upstream protocol, as its class declares it."""
    api: ClassVar[str]                  # its name in endpoints.json, PROVIDERS and `bench endpoint add --api`
    title: ClassVar[str]                # what the dashboard's endpoint form calls it ("OpenAI-compatible")
    default_base: ClassVar[str]         # the public base URL an endpoint without one uses
    supports: ClassVar[dict]            # tools, vision, image_urls, stream_usage, reasoning: True or False
    # route mode's same-API pass-through: the fields of a client's own body that may reach this upstream, and
    # which entries of `tools` are the client's own functions (server tools would run, and bill, upstream)
    passthrough_fields: ClassVar[frozenset]
    client_tool: ClassVar[Callable[[object], bool]]

    def headers(self) -> dict:
        """The auth (and version) headers of every request."""

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        """The URL and the JSON body of a streamed chat call."""

    def events(self, response, meta: dict) -> Iterator:
        """The canonical events (TextDelta, ToolCallDelta, UsageEvent, Finish ...) read from a response."""

    def limit_native(self, body: dict, max_tokens: int) -> None:
        """Set the output budget in a client's own body (pass-through), in the field this API uses."""

    def models_url(self) -> str:
        """Where its model list is."""

    def parse_models(self, body) -> tuple[list[dict], str | None]:
        """The models listed in one page of that list, and the next page's cursor (None: the last)."""

