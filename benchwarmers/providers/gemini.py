"""Gemini, native: POST {base}/models/{model}:streamGenerateContent?alt=sse with the key in x-goog-api-key."""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from ..canonical import (CONTENT_FILTER, ERROR, LENGTH, STOP, TOOL_CALLS, Ask, Finish, Image, Reasoning,
                         ReasoningDelta, Text, TextDelta, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent)
from ..errors import FaultKind
from .base import Provider
from .framing import is_whole, iter_sse, load_json
from .requestparts import call_names, image_note, inline_image, new_call_id, system_prompt
from .ratelimits import gemini_retry_delay

FINISH = {"STOP": STOP, "MAX_TOKENS": LENGTH, "SAFETY": CONTENT_FILTER, "RECITATION": CONTENT_FILTER,
          "BLOCKLIST": CONTENT_FILTER, "PROHIBITED_CONTENT": CONTENT_FILTER, "SPII": CONTENT_FILTER,
          "IMAGE_SAFETY": CONTENT_FILTER, "MALFORMED_FUNCTION_CALL": ERROR, "UNEXPECTED_TOOL_CALL": ERROR}
TOOL_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "any": "ANY"}


def client_tool(tool) -> bool:
    """Function declarations only: code execution and Google Search run on Google's servers."""
    return isinstance(tool, dict) and bool(tool) and set(tool) <= {"functionDeclarations", "function_declarations"}


class GeminiProvider(Provider):
    api = "gemini"
    title = "Gemini"
    supports = {"tools": True, "vision": True, "image_urls": False, "stream_usage": True, "reasoning": True}
    default_base = "https://generativelanguage.googleapis.com/v1beta"
    passthrough_fields = frozenset({
        "contents", "systemInstruction", "system_instruction", "tools", "toolConfig", "tool_config",
        "generationConfig", "generation_config", "safetySettings", "safety_settings"})
    client_tool = staticmethod(client_tool)

    def headers(self) -> dict:
        return {"x-goog-api-key": self.key} if self.key else {}

    # ---- request ------------------------------------------------------------------------------
    def limit_native(self, body: dict, max_tokens: int) -> None:
        key = "generation_config" if "generation_config" in body else "generationConfig"
        config = dict(body.get(key) or {})
        config["max_output_tokens" if "max_output_tokens" in config else "maxOutputTokens"] = max_tokens
        body[key] = config

    def stream_head(self, model: str) -> tuple[str, dict]:
        return f"{self.base}/{model_path(model)}:streamGenerateContent?alt=sse", {}   # the model is in the URL

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        url, body = self.stream_head(model)
        body["contents"] = contents(ask)
        system = system_prompt(ask)
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if ask.tools:
            body["tools"] = [{"functionDeclarations": [
                {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
                for t in ask.tools]}]
            config = tool_config(ask.tool_choice)
            if config:
                body["toolConfig"] = config
        generation = {k: v for k, v in (("maxOutputTokens", ask.max_tokens), ("temperature", ask.temperature),
                                        ("topP", ask.top_p), ("stopSequences", ask.stop or None)) if v is not None}
        if generation:
            body["generationConfig"] = generation
        return url, body

    def whole_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        url, body = self.chat_request(ask, model)
        return url.replace(":streamGenerateContent?alt=sse", ":generateContent"), body

    # ---- response -----------------------------------------------------------------------------
    def events(self, response, meta):
        finish, calls, signed = None, 0, False
        for chunk in chunks(response):
            if chunk.get("error"):
                raise self.chunk_error(chunk["error"])
            meta.setdefault("model", chunk.get("modelVersion"))
            if chunk.get("usageMetadata"):
                yield UsageEvent(usage(chunk["usageMetadata"]))
            if (chunk.get("promptFeedback") or {}).get("blockReason"):
                finish = finish or "SAFETY"
            for candidate in (chunk.get("candidates") or [])[:1]:
                for part in (candidate.get("content") or {}).get("parts") or []:
                    if part.get("thoughtSignature") and not signed:
                        signed = True                  # Gemini 3 wants it back on the next turn
                        yield ReasoningDelta("", part["thoughtSignature"])
                    if "functionCall" in part:
                        fc = part["functionCall"] or {}
                        yield ToolCallDelta(index=calls, id=fc.get("id") or new_call_id(), name=fc.get("name"),
                                            arguments=json.dumps(fc.get("args") or {}, ensure_ascii=False))
                        calls += 1
                    elif part.get("text"):
                        yield ReasoningDelta(part["text"]) if part.get("thought") else TextDelta(part["text"])
                finish = candidate.get("finishReason") or finish
        if finish is None:
            raise self.dropped("a finishReason")
        reason = FINISH.get(finish, STOP)
        yield Finish(reason=TOOL_CALLS if calls and reason == STOP else reason)

    def chunk_error(self, error: dict):
        status = error.get("code") if isinstance(error.get("code"), int) else None
        message = str(error.get("message") or error.get("status") or error)
        kind = self.classify(status, message, error) if status else FaultKind.SERVER
        return self.stream_failure(kind, message, status)

    def retry_after_from_body(self, body) -> float | None:
        return gemini_retry_delay(body)

    # ---- models -------------------------------------------------------------------------------
    def models_url(self) -> str:
        return f"{self.base}/models?pageSize=1000"

    def parse_models(self, body):
        models = []
        for m in body.get("models") or []:
            methods = m.get("supportedGenerationMethods")
            if not m.get("name") or (isinstance(methods, list) and "generateContent" not in methods):
                continue
            facts = {"id": m["name"].split("/", 1)[1] if m["name"].startswith("models/") else m["name"]}
            if m.get("displayName"):
                facts["name"] = m["displayName"]
            if m.get("inputTokenLimit"):
                facts["context_window"] = int(m["inputTokenLimit"])
            if m.get("outputTokenLimit"):
                facts["max_output"] = int(m["outputTokenLimit"])
            models.append(facts)
        token = body.get("nextPageToken")
        return models, f"{self.models_url()}&pageToken={quote(token)}" if token else None


def chunks(response):
    """The response's GenerateContentResponse objects: one per SSE event, or the whole body (one object, or the
    JSON array a stream without alt=sse gives)."""
    if is_whole(response):
        body = load_json(response.read())
        yield from (c if isinstance(c, dict) else {} for c in (body if isinstance(body, list) else [body]))
        return
    for _event, data in iter_sse(response.pieces()):
        chunk = load_json(data, "stream chunk")
        if isinstance(chunk, list):
            chunk = chunk[0] if chunk else {}
        yield chunk


def model_path(model: str) -> str:
    model = model.strip("/")
    return quote(model if model.startswith(("models/", "tunedModels/")) else f"models/{model}", safe="/.-_~")


def usage(u: dict) -> Usage:
    return Usage(input_tokens=int(u.get("promptTokenCount") or 0),
                 output_tokens=int(u.get("candidatesTokenCount") or 0) + int(u.get("thoughtsTokenCount") or 0),
                 cache_read_tokens=int(u.get("cachedContentTokenCount") or 0))


def tool_config(choice) -> dict | None:
    if isinstance(choice, dict) and choice.get("name"):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice["name"]]}}
    mode = TOOL_MODES.get(choice) if isinstance(choice, str) else None
    return {"functionCallingConfig": {"mode": mode}} if mode else None


def function_response(result: ToolResult) -> dict:
    if result.is_error:
        return {"error": result.content}
    try:
        value = json.loads(result.content)
    except (ValueError, TypeError):
        value = None
    return value if isinstance(value, dict) else {"output": result.content}


def part(p, names: dict) -> dict | None:
    if isinstance(p, Text):
        return {"text": p.text} if p.text else None
    if isinstance(p, Image):
        inline = inline_image(p)
        return {"inlineData": {"mimeType": inline[0], "data": inline[1]}} if inline else {"text": image_note(p)}
    if isinstance(p, ToolCall):
        call: dict[str, Any] = {"functionCall": {"name": p.name, "args": p.args()}}
        if getattr(p, "signature", None):
            call["thoughtSignature"] = p.signature
        return call
    if isinstance(p, ToolResult):
        return {"functionResponse": {"name": p.name or names.get(p.id) or "tool", "response": function_response(p)}}
    return None                                        # reasoning text is not sent back


SKIP_SIGNATURE = "skip_thought_signature_validator"


def contents(ask: Ask) -> list[dict]:
    """Turns as user/model contents; tool results are user parts; system messages go to systemInstruction."""
    out: list[dict]
    names, out = call_names(ask.messages), []
    for m in ask.messages:
        if m.role == "system":
            continue
        role = "model" if m.role == "assistant" else "user"
        parts = [x for x in (part(p, names) for p in m.parts) if x]
        if not parts:
            continue
        # Gemini's signatures come without thought text; a signed block with text is another API's thinking.
        signature = next((p.signature for p in m.parts
                          if isinstance(p, Reasoning) and p.signature and not p.text), None)
        if signature and role == "model" and not any("thoughtSignature" in x for x in parts):
            target = next((x for x in parts if "functionCall" in x), parts[-1])   # first call, else last part
            target["thoughtSignature"] = signature
        elif role == "model" and not any("thoughtSignature" in x for x in parts):
            # Calls another model (or a client that drops signatures) made: Gemini 3 refuses an unsigned call
            # in the history, and Google documents this stand-in for exactly that case.
            first_call = next((x for x in parts if "functionCall" in x), None)
            if first_call is not None:
                first_call["thoughtSignature"] = SKIP_SIGNATURE
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out
