"""A fake Anthropic Messages upstream: /v1/messages (whole and named SSE events), count_tokens, /v1/models."""
from __future__ import annotations

import json

from .server import FakeUpstream, Recorded, Reply, counts, fragments, pieces, sse

STOP = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
               529: "overloaded_error"}


def blocks_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def validate(body: dict) -> str | None:
    """The rules of the real API that an adapter most easily breaks; the message the API gives."""
    if not body.get("max_tokens"):
        return "max_tokens: Field required"
    previous_tool_ids: set = set()
    for i, m in enumerate(body.get("messages") or []):
        role = m.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        for b in blocks:
            if b.get("type") == "text" and not b.get("text"):
                return f"messages.{i}: text content blocks must be non-empty"
            if b.get("type") == "tool_result" and b.get("tool_use_id") not in previous_tool_ids:
                return (f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{b.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                        "block in the previous message.")
        previous_tool_ids = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
    return None


class FakeAnthropic(FakeUpstream):
    protocol = "anthropic"

    def default_style(self) -> str:
        return "anthropic"

    def sent_key(self, rec: Recorded) -> str | None:
        return rec.headers.get("x-api-key") or super().sent_key(rec)

    def error_body(self, status: int, message: str, reply: Reply | None = None) -> dict:
        return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
                "request_id": "req_fake"}

    def auth_error(self, h, rec: Recorded) -> None:
        h.send_json(401, self.error_body(401, "invalid x-api-key"))

    def not_found_message(self, model: str) -> str:
        return f"model: {model}"

    def stream_error_frame(self, message: str) -> bytes:
        return sse({"type": "error", "error": {"type": "overloaded_error", "message": message}}, "error")

    def route(self, h, rec: Recorded) -> None:
        path = rec.path.rstrip("/")
        if rec.method == "POST" and path in ("/v1/messages", "/v1/messages/count_tokens"):
            if not self.check_key(h, rec):
                return
            if "anthropic-version" not in rec.headers:
                return h.send_json(400, self.error_body(400, "anthropic-version: header is required"))
            if path.endswith("count_tokens"):
                return h.send_json(200, {"input_tokens": counts(Reply(), self.prompt(rec.body or {}), "")["input"]})
            return self.messages(h, rec)
        if rec.method == "GET" and path.startswith("/v1/models"):
            if not self.check_key(h, rec):
                return
            data = [dict({"type": "model", "display_name": m["id"], "created_at": "2025-01-01T00:00:00Z"}, **m)
                    for m in self.model_entries()]
            return h.send_json(200, {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                                     "last_id": data[-1]["id"] if data else None})
        h.send_json(404, self.error_body(404, "Not Found"))

    @staticmethod
    def prompt(body: dict) -> str:
        system = body.get("system")
        system = system if isinstance(system, str) else blocks_text(system)
        return "\n".join([system] + [blocks_text(m.get("content")) for m in body.get("messages") or []])

    def messages(self, h, rec: Recorded) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        model = body.get("model")
        problem = "model: Field required" if not model else validate(body)
        if problem:
            return h.send_json(400, self.error_body(400, problem))
        last = next((blocks_text(m.get("content")) for m in reversed(body["messages"]) if m.get("role") == "user"
                     and blocks_text(m.get("content"))), "")
        reply = self.next_reply(model)
        text = self.answer_text(reply, model, last)
        n = self.count(reply, self.prompt(body), text)
        self.play(h, reply, bool(body.get("stream")), lambda: self.whole(model, reply, text, n),
                  lambda: self.frames(model, reply, text, n), model=model)

    @staticmethod
    def calls(reply: Reply) -> list[dict]:
        return [dict(c, id=c["id"] or f"toolu_fake{i}") for i, c in enumerate(reply.calls())]

    @staticmethod
    def usage(n: dict, output: int | None = None) -> dict:
        return {"input_tokens": n["input"], "output_tokens": n["output"] if output is None else output,
                "cache_creation_input_tokens": n["cache_write"], "cache_read_input_tokens": n["cache_read"]}

    def whole(self, model: str, reply: Reply, text: str, n: dict) -> dict:
        content = []
        if reply.reasoning:
            content.append({"type": "thinking", "thinking": reply.reasoning, "signature": reply.signature or "sig"})
        if text:
            content.append({"type": "text", "text": text})
        calls = self.calls(reply)
        content += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls]
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": "tool_use" if calls else STOP.get(reply.finish, "end_turn"), "stop_sequence": None,
                "usage": self.usage(n)}

    def frames(self, model: str, reply: Reply, text: str, n: dict):
        def event(obj: dict) -> bytes:
            return sse(obj, obj["type"])

        yield event({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": self.usage(n, output=1)}})
        yield event({"type": "ping"})
        index = 0
        if reply.reasoning:
            yield event({"type": "content_block_start", "index": index,
                         "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            for piece in pieces(reply.reasoning):
                yield event({"type": "content_block_delta", "index": index,
                             "delta": {"type": "thinking_delta", "thinking": piece}})
            yield event({"type": "content_block_delta", "index": index,
                         "delta": {"type": "signature_delta", "signature": reply.signature or "sig"}})
            yield event({"type": "content_block_stop", "index": index})
            index += 1
        if text:
            yield event({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            for piece in pieces(text, reply.chunk_chars):
                yield event({"type": "content_block_delta", "index": index,
                             "delta": {"type": "text_delta", "text": piece}})
            yield event({"type": "content_block_stop", "index": index})
            index += 1
        calls = self.calls(reply)
        for c in calls:
            yield event({"type": "content_block_start", "index": index,
                         "content_block": {"type": "tool_use", "id": c["id"], "name": c["name"], "input": {}}})
            for frag in [""] + fragments(json.dumps(c["args"])):
                yield event({"type": "content_block_delta", "index": index,
                             "delta": {"type": "input_json_delta", "partial_json": frag}})
            yield event({"type": "content_block_stop", "index": index})
            index += 1
        yield event({"type": "message_delta", "delta": {
            "stop_reason": "tool_use" if calls else STOP.get(reply.finish, "end_turn"), "stop_sequence": None},
            "usage": {"output_tokens": n["output"]}})
        yield event({"type": "message_stop"})
