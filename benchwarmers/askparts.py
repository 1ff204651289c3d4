"""What a request carries besides its Ask, each a value of its own: how the reply is shaped (ReplyOptions),
what may reach a member of the client's own API as it came (PassThrough), and who asks (Asker). The Ask keeps the
content alone, so the copy every seat makes of it carries no wire."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable


@dataclass(frozen=True)
class ReplyOptions:
    """What only shapes the reply: the client's format, whether it streams, and its own body, where a format reads
    its reply options (OpenAI `stream_options.include_usage`, Ollama's `/api/generate` or `/api/chat`)."""
    format: str = ""                 # the client format it came in ("openai_chat", ...)
    stream: bool = False
    body: dict | None = None


@dataclass(frozen=True)
class PassThrough:
    """Same-API pass-through, settled once when the request is parsed: the client's own body for a member that speaks
    `api`, the client's headers that may go with it (only those), and what could not be carried."""
    api: str | None = None           # the upstream API that takes `body` as it came (None: no member does)
    body: dict | None = None         # the client's body; once narrowed, only the fields that may be forwarded
    headers: dict = field(default_factory=dict)   # e.g. anthropic-beta, forwarded only with `body`
    dropped: tuple[str, ...] = ()    # features that could not be carried

    def takes(self, api: str) -> bool:
        """A member speaking `api` gets the client's own body."""
        return self.api is not None and self.api == api and self.body is not None

    def narrowed(self, narrow: Callable[[str, dict], tuple[dict, list]]) -> "PassThrough":
        """The body cut to what `narrow(api, body)` lets through (the providers' own list), what it cut added to
        `dropped`; unchanged when no member takes the body."""
        if self.api is None or self.body is None:
            return self
        body, cut = narrow(self.api, self.body)
        return replace(self, body=body, dropped=self.dropped + tuple(d for d in cut if d not in self.dropped))


@dataclass(frozen=True)
class Asker:
    """Who asks: for the record, the pending answers' lookups and the ledger; never sent upstream."""
    caller: str | None = None        # the gateway key's name, when one was used
    session: str | None = None       # the MCP session (or X-Bench-Session) that asked, when one was named
    origin: str | None = None        # "suite": the service's own suite asked (the ledger's kind, a longer limit wait)


ANYONE = Asker()                     # no key, no session, no origin named
NO_PASSTHROUGH = PassThrough()
