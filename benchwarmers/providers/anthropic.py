"""Anthropic Messages, native: POST {base}/v1/messages, streamed as named SSE events."""
from __future__ import annotations

import json
import logging
from typing import Any

from ..askparts import PassThrough
from ..canonical import (CONTENT_FILTER, LENGTH, STOP, TOOL_CALLS, Ask, Finish, Image, Reasoning, ReasoningDelta,
                         Text, TextDelta, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent)
from ..errors import FaultKind, UpstreamFailed
from .base import Provider
from .framing import is_whole, iter_sse, load_json
from .requestparts import inline_image, system_prompt
VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
FINISH = {"end_turn": STOP, "stop_sequence": STOP, "pause_turn": STOP, "max_tokens": LENGTH,
          "model_context_window_exceeded": LENGTH, "tool_use": TOOL_CALLS, "refusal": CONTENT_FILTER}
ERROR_KINDS: dict[str | None, FaultKind] = {"authentication_error": FaultKind.AUTH, "permission_error": FaultKind.AUTH,
               "not_found_error": FaultKind.NOT_FOUND, "rate_limit_error": FaultKind.RATE_LIMITED,
               "overloaded_error": FaultKind.SERVER, "api_error": FaultKind.SERVER,
               "invalid_request_error": FaultKind.BAD_REQUEST, "request_too_large": FaultKind.BAD_REQUEST,
               "timeout_error": FaultKind.TIMEOUT}

log = logging.getLogger("benchwarmers.providers")


def client_tool(tool) -> bool:
    """A tool the client runs itself: the other types run on Anthropic's servers."""
    return isinstance(tool, dict) and tool.get("type") in (None, "custom")


class AnthropicProvider(Provider):
    api = "anthropic"
    title = "Anthropic"
    supports = {"tools": True, "vision": True, "image_urls": True, "stream_usage": True, "reasoning": True}
    default_base = "https://api.anthropic.com"
    passthrough_fields = frozenset({
        "model", "messages", "system", "max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences",
        "tools", "tool_choice", "thinking", "metadata", "context_management", "output_config"})
    client_tool = staticmethod(client_tool)

    @staticmethod
    def normalise_base(base: str) -> str:
        return base[: -len("/v1")] if base.endswith("/v1") else base

    def headers(self) -> dict:
        h = {"anthropic-version": VERSION}
        if self.key:
            h["x-api-key"] = self.key
        return h

    def send(self, method, url, body, timeouts, extra_headers=None, model=None, sent=None):
        """A client's own betas and fields (same-API pass-through) must never end a turn in a 400 that the member
        gave only because it does not know them: a refused beta header, then each refused optional field, is
        dropped and the request sent again (logged, since the client cannot see it)."""
        for _ in range(4):
            try:
                return super().send(method, url, body, timeouts, extra_headers, model, sent)
            except UpstreamFailed as exc:
                sent = None
                if exc.kind is not FaultKind.BAD_REQUEST:
                    raise
                text = exc.message.lower()
                if extra_headers and "anthropic-beta" in extra_headers and "beta" in text:
                    log.info("%s refused the client's betas; sending again without them", self.label)
                    extra_headers = {k: v for k, v in extra_headers.items() if k != "anthropic-beta"}
                    continue
                field = refused_field(text, body)
                if field is None:
                    raise
                log.info("%s refused the field %r; sending again without it", self.label, field)
                body = {k: v for k, v in body.items() if k != field}
        return super().send(method, url, body, timeouts, extra_headers, model)

    # ---- request ------------------------------------------------------------------------------
    def native_request(self, ask: Ask, model: str, native: PassThrough) -> tuple[str, dict]:
        """The client's body as it came, except `system` entries inside `messages` (Claude Code's
        mid-conversation system): not every Anthropic-speaking server takes that role, so they travel as a
        <system-reminder> text in a user turn, never dropped."""
        url, body = super().native_request(ask, model, native)
        body["messages"] = fold_system_entries(body.get("messages") or [])
        return url, body

    def limit_native(self, body: dict, max_tokens: int) -> None:
        body["max_tokens"] = max_tokens

    def stream_head(self, model: str) -> tuple[str, dict]:
        return f"{self.base}/v1/messages", {"model": model, "stream": True}

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        url, body = self.stream_head(model)
        body.update(max_tokens=ask.max_tokens or DEFAULT_MAX_TOKENS, messages=messages(ask))
        system = system_prompt(ask)
        if system:
            body["system"] = system
        if ask.tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in ask.tools]
            choice = tool_choice(ask.tool_choice)
            if choice:
                body["tool_choice"] = choice
        for field, value in (("temperature", ask.temperature), ("top_p", ask.top_p),
                             ("stop_sequences", ask.stop or None)):
            if value is not None:
                body[field] = value
        return url, body

    # ---- response -----------------------------------------------------------------------------
    def events(self, response, meta):
        if is_whole(response):                         # asked for whole: one message object
            yield from self.message_events(load_json(response.read()), meta)
            return
        tools: dict[int, int] = {}                     # content block index -> tool call number
        stop, done = None, False
        for name, data in iter_sse(response.pieces()):
            event = load_json(data, "stream event")
            kind = event.get("type") or name
            if kind == "message_start":
                message = event.get("message") or {}
                meta.setdefault("model", message.get("model"))
                if message.get("usage"):
                    yield UsageEvent(usage(message["usage"]))
            elif kind == "content_block_start":
                yield from self._block_start(event, tools)
            elif kind == "content_block_delta":
                yield from self._block_delta(event, tools)
            elif kind == "message_delta":
                stop = (event.get("delta") or {}).get("stop_reason") or stop
                if event.get("usage"):
                    yield UsageEvent(usage(event["usage"]))
            elif kind == "message_stop":
                done = True
                response.finish()
                break
            elif kind == "error":
                error = event.get("error") or {}
                raise self.stream_failure(ERROR_KINDS.get(error.get("type"), FaultKind.SERVER),
                                          str(error.get("message") or error))
        if not done:
            raise self.dropped("message_stop")
        reason = FINISH.get(stop or "end_turn", STOP)
        yield Finish(reason=TOOL_CALLS if tools and reason == STOP else reason)

    def message_events(self, message: dict, meta: dict):
        """Events from a whole (non-streamed) message: its content blocks in order, its usage, its stop reason."""
        if message.get("type") == "error" or isinstance(message.get("error"), dict):
            error = message.get("error") or {}
            raise self.stream_failure(ERROR_KINDS.get(error.get("type"), FaultKind.SERVER),
                                      str(error.get("message") or error))
        meta.setdefault("model", message.get("model"))
        if message.get("usage"):
            yield UsageEvent(usage(message["usage"]))
        tools = 0
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                yield TextDelta(block["text"])
            elif kind == "thinking" and (block.get("thinking") or block.get("signature")):
                yield ReasoningDelta(block.get("thinking", ""), block.get("signature"))
            elif kind == "tool_use":
                yield ToolCallDelta(index=tools, id=block.get("id"), name=block.get("name"),
                                    arguments=json.dumps(block.get("input") or {}, ensure_ascii=False))
                tools += 1
        reason = FINISH.get(message.get("stop_reason") or "end_turn", STOP)
        yield Finish(reason=TOOL_CALLS if tools and reason == STOP else reason)

    @staticmethod
    def _block_start(event: dict, tools: dict):
        block = event.get("content_block") or {}
        if block.get("type") == "tool_use":
            number = tools[event.get("index", 0)] = len(tools)
            yield ToolCallDelta(index=number, id=block.get("id"), name=block.get("name"))
            if block.get("input"):                     # whole input given up front (not the usual case)
                yield ToolCallDelta(index=number, arguments=json.dumps(block["input"]))
        elif block.get("type") == "text" and block.get("text"):
            yield TextDelta(block["text"])
        elif block.get("type") == "thinking" and (block.get("thinking") or block.get("signature")):
            yield ReasoningDelta(block.get("thinking", ""), block.get("signature"))

    @staticmethod
    def _block_delta(event: dict, tools: dict):
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            yield TextDelta(delta.get("text", ""))
        elif kind == "input_json_delta":
            number = tools.get(event.get("index", 0))
            if number is not None and delta.get("partial_json"):
                yield ToolCallDelta(index=number, arguments=delta["partial_json"])
        elif kind == "thinking_delta":
            yield ReasoningDelta(delta.get("thinking", ""))
        elif kind == "signature_delta":
            yield ReasoningDelta("", delta.get("signature"))

    def error_message(self, body) -> str:
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            err = body["error"]
            return f"{err.get('type', 'error')}: {err.get('message', '')}"
        return super().error_message(body)

    # ---- models -------------------------------------------------------------------------------
    def models_url(self) -> str:
        return f"{self.base}/v1/models?limit=1000"

    def parse_models(self, body):
        rows = [m for m in body.get("data") or [] if isinstance(m, dict) and m.get("id")]
        models = []
        for m in rows:
            facts = {"id": m["id"]}
            if m.get("display_name"):
                facts["name"] = m["display_name"]
            for src, dst in (("max_input_tokens", "context_window"), ("max_tokens", "max_output")):
                if m.get(src):
                    facts[dst] = int(m[src])
            models.append(facts)
        more = body.get("has_more") and body.get("last_id")
        return models, f"{self.base}/v1/models?limit=1000&after_id={body['last_id']}" if more else None


def usage(u: dict) -> Usage:
    read, write = int(u.get("cache_read_input_tokens") or 0), int(u.get("cache_creation_input_tokens") or 0)
    # Anthropic counts cached tokens apart from input_tokens; the canonical input counts every input token
    return Usage(input_tokens=int(u.get("input_tokens") or 0) + read + write,
                 output_tokens=int(u.get("output_tokens") or 0), cache_read_tokens=read, cache_write_tokens=write)


def tool_choice(choice) -> dict | None:
    if isinstance(choice, dict) and choice.get("name"):
        return {"type": "tool", "name": choice["name"]}
    return {"auto": {"type": "auto"}, "required": {"type": "any"}, "any": {"type": "any"},
            "none": {"type": "none"}}.get(choice)


def block(part) -> dict | None:
    """One canonical part as an Anthropic content block (None: nothing to send)."""
    if isinstance(part, Text):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, Image):
        inline = inline_image(part)
        if inline:
            return {"type": "image", "source": {"type": "base64", "media_type": inline[0], "data": inline[1]}}
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    if isinstance(part, ToolCall):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.args()}
    if isinstance(part, ToolResult):
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.id, "content": part.content}
        if part.is_error:
            result["is_error"] = True
        return result
    if isinstance(part, Reasoning) and part.signature and part.text:   # Anthropic's own signed thinking
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def messages(ask: Ask) -> list[dict]:
    """user/assistant turns of content blocks; tool results ride in user turns; same-role turns merged.
    System messages are folded into the system prompt (see system_prompt)."""
    out: list[dict] = []
    for m in ask.messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = [b for b in map(block, m.parts) if b]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for turn in out:                                   # tool results open a user turn, thinking an assistant one
        first = "tool_result" if turn["role"] == "user" else "thinking"
        turn["content"].sort(key=lambda b: b["type"] != first)
    return out


def fold_system_entries(messages: list) -> list:
    out: list = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "system":
            out.append(m)
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict))
        block = {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}
        if out and out[-1].get("role") == "user":
            prev = dict(out[-1])
            blocks = prev.get("content")
            prev["content"] = ([{"type": "text", "text": blocks}] if isinstance(blocks, str) else list(blocks or []))
            prev["content"].append(block)
            out[-1] = prev
        else:
            out.append({"role": "user", "content": [block]})
    return out


ESSENTIAL = {"model", "messages", "max_tokens", "stream", "system", "tools", "tool_choice"}


def refused_field(text: str, body: dict | None) -> str | None:
    """The optional top-level field a 400 names as not permitted (e.g. `context_management: Extra inputs are not
    permitted`), or None."""
    if not body or not any(w in text for w in ("not permitted", "extra input", "unknown", "unexpected",
                                               "unrecognized", "not supported")):
        return None
    return next((k for k in body if k not in ESSENTIAL and k.lower() in text), None)
