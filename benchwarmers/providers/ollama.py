"""Ollama, native: POST {base}/api/chat, streamed as one JSON object a line."""
from __future__ import annotations

import json
from typing import Any

from ..canonical import (LENGTH, STOP, TOOL_CALLS, Ask, Finish, Image, Message, ReasoningDelta, Text, TextDelta,
                         ToolCallDelta, ToolResult, Usage)
from ..errors import FaultKind
from .base import Provider
from .framing import is_whole, iter_ndjson, load_json
from .passthrough import function_tool
from .requestparts import call_names, chat_messages, image_note, inline_image, new_call_id

FINISH = {"stop": STOP, "length": LENGTH}


class OllamaProvider(Provider):
    api = "ollama"
    title = "Ollama"
    supports = {"tools": True, "vision": True, "image_urls": False, "stream_usage": True, "reasoning": True}
    default_base = "http://localhost:11434"
    passthrough_fields = frozenset({"model", "messages", "stream", "tools", "options", "format", "think"})
    client_tool = staticmethod(function_tool)

    @staticmethod
    def normalise_base(base: str) -> str:
        for suffix in ("/v1", "/api"):
            if base.endswith(suffix):
                return base[: -len(suffix)]
        return base

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    # ---- request ------------------------------------------------------------------------------
    def limit_native(self, body: dict, max_tokens: int) -> None:
        body["options"] = {**(body.get("options") or {}), "num_predict": max_tokens}

    def stream_head(self, model: str) -> tuple[str, dict]:
        return f"{self.base}/api/chat", {"model": model, "stream": True}

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        url, body = self.stream_head(model)
        body["messages"] = messages(ask)
        if ask.tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in ask.tools]
        options = {k: v for k, v in (("num_predict", ask.max_tokens), ("temperature", ask.temperature),
                                     ("top_p", ask.top_p), ("stop", ask.stop or None)) if v is not None}
        if options:
            body["options"] = options
        return url, body

    # ---- response -----------------------------------------------------------------------------
    def events(self, response, meta):
        calls = 0
        objects = [load_json(response.read())] if is_whole(response) else iter_ndjson(response.lines())
        for obj in objects:
            if obj.get("error"):
                said = str(obj["error"])
                raise self.stream_failure(self.classify(500, said, obj) if "not found" not in said
                                          else FaultKind.NOT_FOUND, said)
            meta.setdefault("model", obj.get("model"))
            message = obj.get("message") or {}
            if message.get("thinking"):
                yield ReasoningDelta(message["thinking"])
            if message.get("content"):
                yield TextDelta(message["content"])
            for tc in message.get("tool_calls") or []:
                fn = tc.get("function") or {}
                args = fn.get("arguments")
                yield ToolCallDelta(index=calls, id=tc.get("id") or new_call_id(), name=fn.get("name"),
                                    arguments=args if isinstance(args, str) else json.dumps(args or {},
                                                                                            ensure_ascii=False))
                calls += 1
            if obj.get("done"):
                response.finish()
                reason = FINISH.get(obj.get("done_reason") or "stop", STOP)
                yield Finish(reason=TOOL_CALLS if calls and reason == STOP else reason,
                             usage=Usage(input_tokens=int(obj.get("prompt_eval_count") or 0),
                                         output_tokens=int(obj.get("eval_count") or 0)))
                return
        raise self.dropped('"done": true')

    # ---- models -------------------------------------------------------------------------------
    def models_url(self) -> str:
        return f"{self.base}/api/tags"

    def parse_models(self, body):
        models = []
        for m in body.get("models") or []:
            name = m.get("name") or m.get("model")
            if not name:
                continue
            facts = {"id": name}
            details = m.get("details") or {}
            for key in ("family", "parameter_size", "quantization_level"):
                if details.get(key):
                    facts[key] = details[key]
            models.append(facts)
        return models, None


def messages(ask: Ask) -> list[dict]:
    """Ollama chat messages: system messages stay in place (a valid role there), images as base64 lists."""
    names = call_names(ask.messages)

    def tool_message(r: ToolResult) -> dict:
        msg = {"role": "tool", "content": f"Error: {r.content}" if r.is_error else r.content}
        if r.name or names.get(r.id):
            msg["tool_name"] = r.name or names[r.id]
        return msg
    return chat_messages(ask, tool_message, _message)


def _message(m: Message, content: list, calls: list) -> dict | None:
    texts, images = [], []
    for p in content:
        if isinstance(p, Text):
            texts.append(p.text)
        elif isinstance(p, Image):
            inline = inline_image(p)
            images.append(inline[1]) if inline else texts.append(image_note(p))
    if not (texts or images or calls):
        return None
    msg: dict[str, Any] = {"role": "assistant" if m.role == "assistant" else "user", "content": "\n".join(texts)}
    if images and m.role != "assistant":
        msg["images"] = images
    if calls and m.role == "assistant":
        msg["tool_calls"] = [{"function": {"name": c.name, "arguments": c.args()}} for c in calls]
    return msg
