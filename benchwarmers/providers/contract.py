"""What one upstream protocol's adapter gives, and what the package calls on a provider: the contract of a
`Provider` subclass.

`Provider` (providers/base.py) does the rest: sending, streaming, errors, retries, model lists; each method it leaves
to a subclass raises NotImplementedError there. A new protocol is a class meeting this contract, one line in
PROVIDERS (providers/__init__.py) and a fake in tests/fakes/; tests/test_plugins.py checks each provider against it,
that it names every method the code calls on a provider, and finds each in the dashboard, the CLI and the fakes."""
from __future__ import annotations

from typing import Callable, ClassVar, Iterator, Protocol, runtime_checkable

from ..askparts import PassThrough
from ..canonical import Answer, Ask
from .transport import Sent, Timeouts


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
    base: str                           # this endpoint's base URL (where a seat is asked: local or not)

    # ---- the adapter's own: Provider calls these and leaves them to the subclass ----
    def headers(self) -> dict:
        """The auth (and version) headers of every request."""

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        """The URL and the JSON body of a streamed chat call."""

    def stream_head(self, model: str) -> tuple[str, dict]:
        """The URL and the body's fields that make a call our served model, streamed: all a client's own body
        needs from us in route mode's pass-through."""

    def events(self, response, meta: dict) -> Iterator:
        """The canonical events (TextDelta, ToolCallDelta, UsageEvent, Finish ...) read from a response."""

    def limit_native(self, body: dict, max_tokens: int) -> None:
        """Set the output budget in a client's own body (pass-through), in the field this API uses."""

    def models_url(self) -> str:
        """Where its model list is."""

    def parse_models(self, body) -> tuple[list[dict], str | None]:
        """The models listed in one page of that list, and the next page's cursor (None: the last)."""

    # ---- given by Provider: what the Dialer, the dispatcher, the roster and the admin API call ----
    def stream(self, ask: Ask, model: str, *, timeouts: Timeouts | None = None,
               native: PassThrough | None = None) -> Iterator:
        """A member's events, from our own request or the client's own body (`native`)."""

    def complete(self, ask: Ask, model: str, *, timeouts: Timeouts | None = None, whole: bool = False,
                 sent: Sent | None = None, heard: Callable[[str], None] | None = None) -> Answer:
        """A member's whole answer (`sent`: the one send_whole wrote; `heard`: told its text as it comes)."""

    def send_whole(self, ask: Ask, model: str, *, timeouts: Timeouts | None = None,
                   streamed: bool = False) -> Sent | None:
        """Write a whole answer's request (`streamed`: a stream's) on a kept-alive connection, not waiting; None: none
        was free."""

    def list_models(self, *, timeouts: Timeouts | None = None) -> list[dict]:
        """The endpoint's models, every page read."""
