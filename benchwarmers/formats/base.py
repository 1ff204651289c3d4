"""Shared pieces of the client formats: declared routes, request/reply context, body validation, framing, errors."""
from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from ..askparts import PassThrough, ReplyOptions
from ..canonical import ROUTE, Ask, Image, Message, Part, Text, ToolResult
from ..errors import BadRequest, BenchError, NotFound, ToolsNeedRouteMode
from ..redaction import redact


@dataclass(frozen=True)
class FormatRoute:
    """A route a format answers. `op` "ask" asks a panel, route mode or a model (the gateway does that part);
    any other op is this format's own `on_<op>(Lookup) -> dict`, e.g. its model list."""
    method: str
    pattern: str                     # {name} is one path segment, {name:path} the rest of the path
    op: str
    header: str | None = None        # answered here only when the request sends this header (else the other route)
    stream: bool = False             # the path itself asks for a stream (Gemini's :streamGenerateContent)
    summary: str = ""                # what it does, for the OpenAPI document (every route says)
    body: dict | None = None         # the JSON schema of its request body, when it takes one


@dataclass
class Lookup:
    """What a format's own route may read: the request, its JSON body, and the model names this caller can ask."""
    info: "RequestInfo"
    params: dict
    body: Callable[[], dict]
    names: Callable[[], list[str]]

    def require_listed(self, name) -> None:
        """A name this caller could ask, or 404 (a typo should not get a cheerful answer)."""
        if name not in self.names():
            raise NotFound(f"The model {name!r} does not exist here.",
                           "GET /v1/models lists what this service answers.")


@dataclass
class RequestInfo:
    """What the server knows about the HTTP request besides its JSON body."""
    path: str
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)     # lower-case keys
    path_model: str | None = None                              # Gemini: the model named in the URL
    stream_route: bool = False                                 # Gemini: `:streamGenerateContent`


@dataclass
class ReplyInfo:
    """What a renderer needs besides the Answer: the model name as requested, ids, and the panel data.

    `native` (the client's body) and `request` let a format honour request options when rendering:
    OpenAI `stream_options.include_usage`, Gemini `?alt=sse`, Ollama `/api/generate` vs `/api/chat`.
    """
    model: str
    id: str
    created: int
    extra: dict | None = None
    native: dict | None = None
    request: RequestInfo | None = None

    @classmethod
    def new(cls, model: str, extra: dict | None = None, *, native: dict | None = None,
            request: RequestInfo | None = None) -> "ReplyInfo":
        # secrets.token_hex(16)'s bytes, without its three Python layers (token_bytes, SystemRandom.randbytes)
        return cls(model=model, id=os.urandom(16).hex(), created=int(time.time()), extra=extra,
                   native=native, request=request)

    @classmethod
    def for_ask(cls, ask, options: ReplyOptions, request: RequestInfo | None = None,
                extra: dict | None = None) -> "ReplyInfo":
        """The usual way: the reply names the model exactly as the client asked for it."""
        return cls.new(ask.target.requested if ask.target else "", extra, native=options.body, request=request)

    def option(self, *keys: str, default: Any = None) -> Any:
        """A nested value of the client's body, e.g. option("stream_options", "include_usage")."""
        value: Any = self.native or {}
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                return default
            value = value[key]
        return value


# ---- what a parse gives -------------------------------------------------------------------------

class Parsed(NamedTuple):
    """A client's request as its format parsed it: the Ask, and apart from it how to reply and the pass-through."""
    ask: Ask
    reply: ReplyOptions
    passthrough: PassThrough


FORWARDED_HEADERS = ("anthropic-beta",)   # the client's headers that go with its own body (same-API pass-through)


def parsed(ask: Ask, fmt: str, stream: bool, body: dict, ctx: RequestInfo, api: str | None,
           dropped: list[str]) -> Parsed:
    """A format's parse, whole: the Ask, how to reply (in `fmt`, streamed or not), and the pass-through to a member
    of `api` (None: no member takes the body), its headers cut here to the ones that may be forwarded."""
    headers = {h: ctx.headers[h] for h in FORWARDED_HEADERS if h in ctx.headers}
    return Parsed(ask, ReplyOptions(fmt, stream, body), PassThrough(api, body, headers, tuple(dropped)))


# ---- JSON schemas for the OpenAPI document -----------------------------------------------------

def schema(required: tuple = (), /, **properties: dict) -> dict:
    """A JSON object schema with these properties (`required` of them); other properties are allowed."""
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


STRING, BOOL, LIST = {"type": "string"}, {"type": "boolean"}, {"type": "array"}


# ---- ids and framing -------------------------------------------------------------------------

def new_id(prefix: str, length: int = 24) -> str:
    return prefix + secrets.token_hex(16)[:length]


# json.dumps given options makes an encoder a call: this one is made once (it keeps no state between calls)
COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def sse(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Events frame; `data` is JSON-encoded unless it is already a string."""
    text = data if isinstance(data, str) else COMPACT.encode(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode("utf-8")


SSE_KEEPALIVE = b": keep-alive\n\n"


def ndjson(record: dict) -> bytes:
    return (COMPACT.encode(record) + "\n").encode("utf-8")


# ---- body validation -------------------------------------------------------------------------

_KINDS = {str: "a string", bool: "true or false", int: "an integer", float: "a number",
          list: "a list", dict: "an object"}


def _describe(types: tuple) -> str:
    return " or ".join(_KINDS.get(t, t.__name__) for t in types)


def check(value: Any, types: type | tuple, where: str) -> Any:
    """`value` if it has one of `types`, else a 400 naming the field (bool is never a number here)."""
    types = types if isinstance(types, tuple) else (types,)
    numeric = int in types or float in types
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types) or (float in types and isinstance(value, int))
    if not ok:
        got = "null" if value is None else type(value).__name__
        raise BadRequest(f"`{where}` must be {_describe(types)}, not {got}.",
                         "Fix that field and send the request again." if not numeric else
                         f"Send `{where}` as a plain JSON number.")
    return value


def get(body: dict, key: str, types: type | tuple, *, default: Any = None, required: bool = False,
        where: str = "") -> Any:
    """Read an optional (or required) field of an object, checking its type; null counts as absent."""
    value = body.get(key)
    if value is None:
        if required:
            name = f"{where}.{key}" if where else key
            raise BadRequest(f"`{name}` is required.", f"Add `{name}` to the request body.")
        return default
    if type(value) is types or (type(types) is tuple and type(value) in types):
        return value                  # the usual case, decided at once (bool is its own type, never int's)
    return check(value, types, f"{where}.{key}" if where else key)


def require_object(body: Any) -> dict:
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.", "Send a JSON object with a `model` field.")
    return body


def positive_int(body: dict, *keys: str) -> int | None:
    """The first of `keys` present, as an integer of at least 1."""
    for key in keys:
        value = get(body, key, int)
        if value is not None:
            if value < 1:
                raise BadRequest(f"`{key}` must be at least 1, not {value}.", f"Send a positive `{key}`.")
            return value
    return None


def number(body: dict, key: str) -> float | None:
    value = get(body, key, float)
    return float(value) if value is not None else None


def string_list(value: Any, where: str) -> list[str]:
    """A string or a list of strings, as a list (stop sequences)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    check(value, list, where)
    return [check(v, str, f"{where}[{i}]") for i, v in enumerate(value)]


def with_models(body: dict) -> list[str]:
    """Extra seats asked for by name: a top-level `"bench": {"with": [aliases]}`."""
    bench = get(body, "bench", dict, default={})
    if not bench:   # nearly every request: nothing to look at
        return []
    names = get(bench, "with", (list, str), default=[], where="bench")
    if isinstance(names, str):   # "a,b" as the CLI writes it
        return [n.strip() for n in names.split(",") if n.strip()]
    return string_list(names, "bench.with")


POINT_MODES = ("off", "contested", "all")


def points_wanted(body: dict) -> str | None:
    """Which of the panel's points the reply shows, when the request says: `"bench": {"points": "off" | "contested" |
    "all"}` (true: all, false: off). None: the collection's own choice."""
    bench = get(body, "bench", dict)
    if bench is None:   # nearly every request: nothing to look at
        return None
    value = get(bench, "points", (str, bool), where="bench")
    if isinstance(value, bool):
        return "all" if value else "off"
    if value is not None and value not in POINT_MODES:
        raise BadRequest(f"`bench.points` must be one of {', '.join(POINT_MODES)} (or true / false), not {value!r}.",
                         "contested shows the points some seat contradicts; all shows every point; off none.")
    return value


def client_only_tool(kind: str, ask: Ask) -> None:
    """OpenAI `custom` tools (free-form input) run on the client like functions, but no other API can carry them:
    a panel refuses them as it refuses functions (answering without them would quietly change the question);
    route mode drops them visibly."""
    if kind == "custom" and (ask.target is None or ask.target.mode != ROUTE):
        raise ToolsNeedRouteMode("A panel answers with text, so requests with tools (custom tools too) are refused.",
                                 "Use bench/<collection>:route for an agent with tools (one member answers).")


# ---- content helpers -------------------------------------------------------------------------

_MAGIC = (("iVBOR", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"), ("UklGR", "image/webp"))


def sniff_media_type(b64: str) -> str:
    """Ollama sends bare base64 images: tell the type from the first bytes."""
    for prefix, media in _MAGIC:
        if b64.startswith(prefix):
            return media
    return "image/png"


def image_from_url(url: Any, where: str) -> Image:
    """An `image_url`: a data: URL becomes inline base64, anything else stays a URL."""
    check(url, str, where)
    if url.startswith("data:"):
        head, sep, data = url[5:].partition(",")
        if not sep or ";base64" not in head:
            raise BadRequest(f"`{where}` is a data: URL without base64 content.",
                             "Send `data:<media type>;base64,<data>` or an http(s) URL.")
        return Image(media_type=head.split(";")[0] or "image/png", data=data)
    return Image(url=url)


def image_from_base64(data: str, where: str, media_type: str | None = None) -> Image:
    check(data, str, where)
    if data.startswith("data:"):       # some clients send a data: URL where bare base64 is expected
        return image_from_url(data, where)
    return Image(media_type=media_type or sniff_media_type(data), data=data)


def push(messages: list, role: str, parts: list) -> None:
    """Append parts, splitting tool results into their own `tool` message (the canonical convention)."""
    results: list[Part] = [p for p in parts if isinstance(p, ToolResult)]
    rest = [p for p in parts if not isinstance(p, ToolResult)]
    if results:
        messages.append(Message(role="tool", parts=results))
    if rest or (not results and role != "tool"):
        messages.append(Message(role=role, parts=rest))


class CallIds:
    """Gemini and Ollama tool calls may come without ids: make them up, and pair results by name."""

    def __init__(self) -> None:
        self._pending: dict[str, list[str]] = {}
        self._count = 0

    def call(self, name: str, given: str | None = None) -> str:
        self._count += 1
        call_id = given or f"call_{self._count}_{name}"
        self._pending.setdefault(name, []).append(call_id)
        return call_id

    def result(self, name: str, given: str | None = None) -> str:
        queue = self._pending.get(name) or []
        if given:
            if given in queue:
                queue.remove(given)
            return given
        return queue.pop(0) if queue else f"call_{name}"


def typed_parts(content: Any, where: str, part_of: Callable[[str, dict, str], Any]) -> list:
    """A message's content as canonical parts: none, a string (one Text), or a list of blocks each with its "type",
    made by `part_of(type, block, where it is)`; a None from it (a block no member can take, noted) is left out."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)]
    check(content, list, where)
    parts: list = []
    for i, block in enumerate(content):
        spot = f"{where}[{i}]"
        part = part_of(get(check(block, dict, spot), "type", str, required=True, where=spot), block, spot)
        if part is not None:
            parts.append(part)
    return parts


def json_args(arguments: Any, where: str) -> str:
    """Tool-call arguments as a JSON string, from a string or an object."""
    if isinstance(arguments, str):
        return arguments or "{}"
    if arguments is None:
        return "{}"
    check(arguments, dict, where)
    return json.dumps(arguments, ensure_ascii=False)


def text_of(content: Any, where: str, kinds: tuple = ("text", "input_text", "output_text")) -> str:
    """Text of a string or of a list of text parts (tool outputs), other parts skipped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    check(content, list, where)
    chunks = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            chunks.append(part)
        elif isinstance(check(part, dict, f"{where}[{i}]"), dict) and part.get("type") in kinds:
            chunks.append(str(part.get("text", "")))
    return "\n".join(chunks)


# ---- errors ----------------------------------------------------------------------------------

def error_message(err: BaseException) -> str:
    return redact(str(err))


def status_of(err: BaseException) -> int:
    return err.status if isinstance(err, BenchError) else 500


# Anthropic's error type names, which OpenAI mostly shares; by HTTP status.
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 405: "invalid_request_error", 409: "invalid_request_error",
               413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 502: "api_error",
               503: "overloaded_error", 504: "api_error", 529: "overloaded_error"}


def error_type(status: int) -> str:
    return ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")
