"""fastfake.py's answers in the other member protocols: Anthropic Messages, Gemini, Ollama; whole or streamed.

Each reply function takes (path, request body) and gives (body bytes, content type, chunked), the answer being
"<model> says: fine." with the same usage as the OpenAI one (12 in, 4 out).
"""
from __future__ import annotations

import json

TEXT = " says: fine."


def sse(event: str | None, obj: dict) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(obj)}\n\n"


def anthropic(path: str, req: dict) -> tuple[bytes, str, bool]:
    model = str(req.get("model") or "m")
    usage = {"input_tokens": 12, "output_tokens": 4}
    if not req.get("stream"):
        return json.dumps({"id": "msg_fast", "type": "message", "role": "assistant", "model": model,
                           "content": [{"type": "text", "text": model + TEXT}], "stop_reason": "end_turn",
                           "usage": usage}).encode(), "application/json", False
    events = [sse("message_start", {"type": "message_start", "message": {
                  "id": "msg_fast", "type": "message", "role": "assistant", "model": model, "content": [],
                  "usage": {"input_tokens": 12, "output_tokens": 1}}}),
              sse("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}})]
    events += [sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": piece}})
               for piece in (model + " says:", " fine.")]
    events += [sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
               sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                     "usage": {"output_tokens": 4}}),
               sse("message_stop", {"type": "message_stop"})]
    return "".join(events).encode(), "text/event-stream", True


def gemini(path: str, req: dict) -> tuple[bytes, str, bool]:
    model = path.split("/models/", 1)[-1].split(":", 1)[0]
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 4, "totalTokenCount": 16}

    def chunk(text: str, last: bool) -> dict:
        candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
        return dict({"candidates": [dict(candidate, finishReason="STOP") if last else candidate],
                     "modelVersion": model}, **({"usageMetadata": usage} if last else {}))
    if ":streamGenerateContent" not in path:
        return json.dumps(chunk(model + TEXT, True)).encode(), "application/json", False
    return (sse(None, chunk(model + " says:", False)) + sse(None, chunk(" fine.", True))).encode(), \
        "text/event-stream", True


def ollama(path: str, req: dict) -> tuple[bytes, str, bool]:
    model = str(req.get("model") or "m")
    done = {"model": model, "created_at": "2025-01-01T00:00:00Z", "done": True, "done_reason": "stop",
            "prompt_eval_count": 12, "eval_count": 4}
    if req.get("stream") is False:
        return json.dumps(dict(done, message={"role": "assistant", "content": model + TEXT})).encode(), \
            "application/json", False
    lines = [{"model": model, "created_at": "2025-01-01T00:00:00Z", "done": False,
              "message": {"role": "assistant", "content": piece}} for piece in (model + " says:", " fine.")]
    lines.append(dict(done, message={"role": "assistant", "content": ""}))
    return "".join(json.dumps(line) + "\n" for line in lines).encode(), "application/x-ndjson", True


def reply_for(path: str):
    """The reply function for a path of another protocol, or None (OpenAI's, or not found)."""
    if path.startswith("/v1/messages") and "count_tokens" not in path:
        return anthropic
    if path.startswith("/v1beta/models/") and (":generateContent" in path or ":streamGenerateContent" in path):
        return gemini
    if path.startswith("/api/chat"):
        return ollama
    return None
