"""What one client format's module declares and gives: the contract of a module under formats/.

A new format is a module meeting FormatContract and one line in FORMATS (formats/__init__.py); the route table,
the error shape of a 404, the OpenAPI document and route mode's pass-through read these declarations, and
tests/test_plugins.py checks every format against them."""
from __future__ import annotations

from typing import Callable, Iterable, Iterator, Protocol, runtime_checkable

from ..canonical import Answer
from .base import FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo


@runtime_checkable
class FormatContract(Protocol):
    """A client API, as its module declares it (module-level names; a module meets a Protocol by its names)."""
    NAME: str                     # its name in FORMATS and in a parse's ReplyOptions (`format`)
    SHAPE: str                    # its error shape: the first format of a shape renders that shape's errors
    ERROR_SCHEMA: dict            # the JSON schema of that error body, for the OpenAPI document
    PATHS: str                    # a regex of its API's paths: a 404 under them answers in its shape
    PREFIXES: tuple[str, ...]     # its routes' path prefixes: a path lacking one (or doubled) is a base URL set wrong
    NATIVE_API: str | None        # the upstream protocol that takes its body as it came (pass-through), or None
    CONVERSATION: str             # the field that carries the conversation (named when it is empty)
    CONTENT_TYPE_STREAM: str      # the usual Content-Type of its streamed replies
    ROUTES: tuple[FormatRoute, ...]   # its routes: op "ask" asks the bench, any other op is one of OPS
    OPS: dict[str, Callable[[Lookup], dict]]   # op -> the answer of its own route (a model list, a token count)
    # the answer to a conversation with no content (Ollama's "model loaded" reply); None: a 400 naming CONVERSATION
    load_reply: Callable[[ReplyInfo, list[str]], dict] | None

    def parse(self, body: dict, info: RequestInfo) -> Parsed:
        """The client's request as an Ask, apart from it its ReplyOptions and its PassThrough (with NATIVE_API as
        its `api` when the body may pass through as it came)."""

    def render(self, answer: Answer, reply: ReplyInfo) -> dict:
        """A whole answer in this API's response shape."""

    def stream(self, events: Iterable, reply: ReplyInfo) -> Iterator[bytes]:
        """The canonical events as this API's stream, frame by frame."""

    def stream_content_type(self, reply: ReplyInfo) -> str:
        """The Content-Type of this reply's stream (Gemini's depends on `?alt=sse`)."""

    def error_body(self, err: BaseException) -> dict:
        """An error in this API's own shape."""
