"""Anthropic Messages (POST /v1/messages): request -> Ask, Answer or Events -> message and its SSE stream."""
from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

from ..canonical import (Answer, Ask, ErrorEvent, Finish, Image, KeepAlive, Message, Reasoning, ReasoningDelta,
                         Target, Text, TextDelta, Tool, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent,
                         merge_usage)
from ..errors import BadRequest
from ..tokencount import estimate_tokens
from .base import (BOOL, LIST, STRING, FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo, check, error_message,
                   error_type, get, image_from_base64, new_id, number, parsed, positive_int, push, require_object,
                   schema, sse, status_of, string_list, typed_parts, with_models)

NAME = "anthropic"
CONTENT_TYPE_STREAM = "text/event-stream"
SHAPE = "anthropic"
PATHS = r"/v1/messages"
NATIVE_API = "anthropic"
CONVERSATION = "messages"
PREFIXES = ("/v1",)
MESSAGES = schema(("model", "messages"), model=STRING, messages=LIST, system={"type": ["string", "array"]},
                  max_tokens={"type": "integer"}, stream=BOOL, tools=LIST)
ROUTES = (FormatRoute("POST", "/v1/messages", "ask", summary="Anthropic Messages: ask a panel, :merged, route mode "
                      "or one model (also ?beta=true).", body=MESSAGES),
          FormatRoute("POST", "/v1/messages/count_tokens", "count_tokens", summary="An estimate of the prompt's "
                      "tokens (about four characters a token).", body=MESSAGES),
          # the same path as OpenAI's model list: an Anthropic client says who it is with anthropic-version
          FormatRoute("GET", "/v1/models", "models", header="anthropic-version", summary="The model names, in "
                      "Anthropic's shape."))
ERROR_SCHEMA = schema(("type", "error"), type=STRING, error=schema(("type", "message"), type=STRING, message=STRING))
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}


# ---- parse -----------------------------------------------------------------------------------

def parse(body: dict, ctx: RequestInfo) -> Parsed:
    body = require_object(body)
    model = get(body, "model", str, required=True)
    raw = get(body, "messages", list, required=True)
    ask = Ask(target=Target.parse(model), with_models=with_models(body))
    dropped: list[str] = []
    ask.system = _system(body.get("system"), dropped) or None
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        role = get(check(m, dict, where), "role", str, required=True, where=where)
        if role not in ("user", "assistant", "system"):
            raise BadRequest(f"`{where}.role` is {role!r}.", "Use user or assistant (or system, mid-conversation).")
        parts = blocks(m.get("content"), f"{where}.content", dropped)
        if role == "system":            # Claude Code's mid-conversation system messages
            ask.messages.append(Message(role="system", parts=[p for p in parts if isinstance(p, Text)]))
        else:
            push(ask.messages, role, parts)
    ask.tools = _tools(body, dropped)
    ask.tool_choice = _tool_choice(body.get("tool_choice"))
    ask.max_tokens = positive_int(body, "max_tokens")
    ask.temperature = number(body, "temperature")
    ask.top_p = number(body, "top_p")
    ask.stop = string_list(body.get("stop_sequences"), "stop_sequences")
    stream = bool(get(body, "stream", bool, default=False))
    return parsed(ask, NAME, stream, body, ctx, NATIVE_API, dropped)


def _system(system, dropped: list[str]) -> str:
    if system is None or isinstance(system, str):
        return system or ""
    return "\n\n".join(p.text for p in blocks(system, "system", dropped) if isinstance(p, Text))


def blocks(content, where: str, dropped: list[str]) -> list:
    """Anthropic content: a string or blocks (text, image, tool_use, tool_result, thinking)."""
    return typed_parts(content, where, lambda kind, block, spot: _block(kind, block, spot, dropped))


def _block(kind: str, block: dict, spot: str, dropped: list[str]):
    if kind == "text":
        return Text(get(block, "text", str, default="", where=spot))
    if kind == "image":
        return _image(get(block, "source", dict, required=True, where=spot), f"{spot}.source")
    if kind == "tool_use":
        return ToolCall(id=get(block, "id", str, required=True, where=spot),
                        name=get(block, "name", str, required=True, where=spot),
                        arguments=json.dumps(get(block, "input", dict, default={}, where=spot), ensure_ascii=False))
    if kind == "tool_result":
        inner = blocks(block.get("content"), f"{spot}.content", dropped)
        if any(isinstance(p, Image) for p in inner):
            dropped.append("image inside tool_result")
        return ToolResult(id=get(block, "tool_use_id", str, required=True, where=spot),
                          content="\n".join(p.text for p in inner if isinstance(p, Text)),
                          is_error=bool(block.get("is_error")))
    if kind == "thinking":
        return Reasoning(text=get(block, "thinking", str, default="", where=spot), signature=block.get("signature"))
    dropped.append(f"{kind} block")
    return None


def _image(source: dict, where: str) -> Image:
    kind = source.get("type")
    if kind == "base64":
        return image_from_base64(get(source, "data", str, required=True, where=where), f"{where}.data",
                                 get(source, "media_type", str, where=where))
    if kind == "url":
        return Image(url=get(source, "url", str, required=True, where=where))
    raise BadRequest(f"`{where}.type` is {kind!r}.", 'Send an image source of type "base64" or "url".')


def _tools(body: dict, dropped: list[str]) -> list[Tool]:
    out = []
    for i, t in enumerate(get(body, "tools", list, default=[])):
        where = f"tools[{i}]"
        check(t, dict, where)
        if t.get("type") not in (None, "custom"):
            dropped.append(f"{t.get('type')} tool")   # server tools (web_search_..., bash_...)
            continue
        out.append(Tool(name=get(t, "name", str, required=True, where=where),
                        description=get(t, "description", str, default="", where=where),
                        parameters=get(t, "input_schema", dict, where=where) or {"type": "object", "properties": {}}))
    return out


def _tool_choice(value):
    if value is None:
        return None
    check(value, dict, "tool_choice")
    kind = value.get("type")
    if kind == "tool":
        return {"name": get(value, "name", str, required=True, where="tool_choice")}
    choice = {"auto": "auto", "any": "required", "none": "none"}.get(kind)
    if choice is None:
        said = f"is {kind!r}" if kind is not None else "is missing"
        raise BadRequest(f"`tool_choice.type` {said}: it must be auto, any, tool or none.",
                         'e.g. "tool_choice": {"type": "auto"}')
    return choice


def count_tokens(body: dict) -> dict:
    """POST /v1/messages/count_tokens: a local estimate (no tokenizer at hand)."""
    ask = parse(body, RequestInfo(path="/v1/messages/count_tokens")).ask
    return {"input_tokens": estimate_tokens(ask.prompt_text())}


# ---- render ----------------------------------------------------------------------------------

def usage_dict(u: Usage) -> dict:
    # Anthropic's input_tokens leaves out the cached ones, which the canonical count includes
    fresh = max(0, u.input_tokens - u.cache_read_tokens - u.cache_write_tokens)
    return {"input_tokens": fresh, "output_tokens": u.output_tokens,
            "cache_creation_input_tokens": u.cache_write_tokens, "cache_read_input_tokens": u.cache_read_tokens}


def render(answer: Answer, ctx: ReplyInfo) -> dict:
    content: list[dict] = [{"type": "thinking", "thinking": r.text, "signature": r.signature or ""}
                           for r in answer.reasoning]
    if answer.text or not answer.tool_calls:
        content.append({"type": "text", "text": answer.text})
    content.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args()} for c in answer.tool_calls)
    reply = {"id": "msg_" + ctx.id, "type": "message", "role": "assistant", "model": ctx.model,
             "content": content, "stop_reason": STOP_REASONS.get(answer.finish_reason, "end_turn"),
             "stop_sequence": None, "usage": usage_dict(answer.usage)}
    if ctx.extra is not None:
        reply["bench"] = ctx.extra
    return reply


# ---- stream ----------------------------------------------------------------------------------

def _event(data: dict) -> bytes:
    return sse(data, event=data["type"])


class _Blocks:
    """Opens and closes content blocks so each delta lands in a block of its kind, indexes in order."""

    def __init__(self) -> None:
        self.count = 0
        self.open: tuple | None = None         # ("text",) / ("thinking", signed) / ("tool", tool index)

    def ensure(self, key: tuple, block: dict) -> Iterator[bytes]:
        if self.open == key:
            return
        yield from self.close()
        self.open = key
        yield _event({"type": "content_block_start", "index": self.count, "content_block": block})

    def delta(self, delta: dict) -> bytes:
        return _event({"type": "content_block_delta", "index": self.count, "delta": delta})

    def close(self) -> Iterator[bytes]:
        if self.open is not None:
            yield _event({"type": "content_block_stop", "index": self.count})
            self.open = None
            self.count += 1


def stream(events: Iterable, ctx: ReplyInfo) -> Iterator[bytes]:
    message: dict[str, Any] = {"id": "msg_" + ctx.id, "type": "message", "role": "assistant", "model": ctx.model,
                               "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage_dict(Usage())}
    yield _event({"type": "message_start", "message": message})
    blocks_, usage, finish = _Blocks(), Usage(), Finish()
    for event in events:
        if isinstance(event, TextDelta):
            if event.text:
                yield from blocks_.ensure(("text",), {"type": "text", "text": ""})
                yield blocks_.delta({"type": "text_delta", "text": event.text})
        elif isinstance(event, ReasoningDelta):
            yield from _thinking(blocks_, event)
        elif isinstance(event, ToolCallDelta):
            start = {"type": "tool_use", "id": event.id or new_id("toolu_"), "name": event.name or "", "input": {}}
            yield from blocks_.ensure(("tool", event.index), start)
            if event.arguments:
                yield blocks_.delta({"type": "input_json_delta", "partial_json": event.arguments})
        elif isinstance(event, UsageEvent):
            usage = merge_usage(usage, event.usage)
        elif isinstance(event, KeepAlive):
            yield _event({"type": "ping"})
        elif isinstance(event, ErrorEvent):
            yield _event(error_body(event.error))
            return
        elif isinstance(event, Finish):
            finish = event
            break
    usage = merge_usage(usage, finish.usage) if finish.usage else usage
    delta = {"type": "message_delta", "delta": {"stop_reason": STOP_REASONS.get(finish.reason, "end_turn"),
                                                "stop_sequence": None}, "usage": usage_dict(usage)}
    extra = finish.extra if finish.extra is not None else ctx.extra
    if extra is not None:
        delta["bench"] = extra
    # the last events in one write: each write on a stream costs a send (and, on loopback, the reader's receive)
    yield b"".join([*blocks_.close(), _event(delta), _event({"type": "message_stop"})])


def _thinking(blocks_: _Blocks, event: ReasoningDelta) -> Iterator[bytes]:
    """Thinking text then its signature; new text after a signature starts a new thinking block."""
    if event.text and blocks_.open == ("thinking", True):
        yield from blocks_.close()
    if blocks_.open not in (("thinking", False), ("thinking", True)):
        yield from blocks_.ensure(("thinking", False), {"type": "thinking", "thinking": "", "signature": ""})
    if event.text:
        yield blocks_.delta({"type": "thinking_delta", "thinking": event.text})
    if event.signature:
        blocks_.open = ("thinking", True)
        yield blocks_.delta({"type": "signature_delta", "signature": event.signature})


# ---- errors ----------------------------------------------------------------------------------

def error_body(err: BaseException) -> dict:
    return {"type": "error", "error": {"type": error_type(status_of(err)), "message": error_message(err)}}


def models_list(names: list[str]) -> dict:
    """GET /v1/models as the Anthropic API answers it (an Anthropic client sends anthropic-version)."""
    data = [{"type": "model", "id": n, "display_name": n, "created_at": "2026-01-01T00:00:00Z"} for n in names]
    return {"data": data, "has_more": False, "first_id": names[0] if names else None,
            "last_id": names[-1] if names else None}


def on_models(q: Lookup) -> dict:
    return models_list(q.names())


def on_count_tokens(q: Lookup) -> dict:
    body = q.body()
    counted = count_tokens(body)   # checks the body first: a bad one is a 400 before an unknown model is a 404
    q.require_listed(body.get("model"))
    return counted


def stream_content_type(ctx: ReplyInfo) -> str:
    return CONTENT_TYPE_STREAM


# the ops of its own routes (FormatRoute.op other than "ask")
OPS = {"models": on_models, "count_tokens": on_count_tokens}
load_reply = None                # an empty conversation is a 400 naming CONVERSATION
