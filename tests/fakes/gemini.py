"""A fake Gemini upstream: models/{m}:generateContent and :streamGenerateContent (SSE or JSON array), models."""
from __future__ import annotations

import json
import re

from .server import FakeUpstream, Recorded, Reply, counts, pieces, sse

FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
CALL = re.compile(r"^/(v1beta|v1|v1alpha)/(?:models/)?([^:]+):(generateContent|streamGenerateContent)$")


def parts_text(parts) -> str:
    return "\n".join(p.get("text", "") for p in parts or [] if isinstance(p, dict) and not p.get("thought"))


class FakeGemini(FakeUpstream):
    protocol = "gemini"
    url_suffix = "/v1beta"

    def default_style(self) -> str:
        return "gemini"

    def sent_key(self, rec: Recorded) -> str | None:
        return rec.headers.get("x-goog-api-key") or rec.query.get("key")

    def error_body(self, status: int, message: str, reply: Reply | None = None) -> dict:
        error = {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}
        if status == 429 and (reply is None or reply.style in (None, "gemini")):
            delay = reply.retry_after if reply else 30
            error["details"] = [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                    {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                     "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay:g}s"}]
        return {"error": error}

    def auth_error(self, h, rec: Recorded) -> None:
        if not self.sent_key(rec):
            return h.send_json(403, self.error_body(403, "Method doesn't allow unregistered callers (callers "
                                                         "without established identity). Please use API Key or "
                                                         "other form of API consumer identity to call this API."))
        body = self.error_body(400, "API key not valid. Please pass a valid API key.")
        body["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                     "domain": "googleapis.com",
                                     "metadata": {"service": "generativelanguage.googleapis.com"}}]
        h.send_json(400, body)

    def not_found_message(self, model: str) -> str:
        return f"models/{model} is not found for API version v1beta, or is not supported for generateContent."

    def stream_error_frame(self, message: str) -> bytes:
        return sse({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}}, crlf=True)

    def route(self, h, rec: Recorded) -> None:
        match = CALL.match(rec.path)
        if rec.method == "POST" and match:
            return self.generate(h, rec, match.group(2), match.group(3) == "streamGenerateContent")
        if rec.method == "GET" and re.match(r"^/(v1beta|v1)/models", rec.path):
            if not self.check_key(h, rec):
                return
            models = [self.entry(m) for m in self.model_entries()]
            name = rec.path.split("/models", 1)[1].strip("/")
            if not name:
                return h.send_json(200, {"models": models})
            found = [m for m in models if m["name"] in (name, f"models/{name}")]
            return h.send_json(200, found[0]) if found else h.send_json(404, self.error_body(404, "not found"))
        h.send_json(404, self.error_body(404, f"Method not found: {rec.method} {rec.path}"))

    @staticmethod
    def entry(m: dict) -> dict:
        m = dict(m)
        model_id = m.pop("id")
        return dict({"name": f"models/{model_id}", "version": "001", "displayName": model_id, "description": "",
                     "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                     "supportedGenerationMethods": ["generateContent", "countTokens"]}, **m)

    def generate(self, h, rec: Recorded, model: str, stream: bool) -> None:
        if not self.check_key(h, rec):
            return
        body = rec.body if isinstance(rec.body, dict) else {}
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            return h.send_json(400, self.error_body(400, "* GenerateContentRequest.contents: contents is not "
                                                         "specified"))
        for c in contents:
            if c.get("role") not in ("user", "model", None):
                return h.send_json(400, self.error_body(400, "Please use a valid role: user, model."))
        last = next((parts_text(c.get("parts")) for c in reversed(contents) if c.get("role", "user") == "user"
                     and parts_text(c.get("parts"))), "")
        system = parts_text((body.get("systemInstruction") or {}).get("parts"))
        prompt = "\n".join([system] + [parts_text(c.get("parts")) for c in contents])
        reply = self.next_reply(model)
        text = self.answer_text(reply, model, last)
        n = self.count(reply, prompt, text)
        sse_mode = rec.query.get("alt") == "sse"
        frames = (lambda: self.frames(model, reply, text, n)) if sse_mode else \
            (lambda: self.array_frames(model, reply, text, n))
        self.play(h, reply, stream, lambda: self.whole(model, reply, text, n), frames, model=model,
                  ctype=None if sse_mode else "application/json")

    @staticmethod
    def usage(n: dict, final: bool = True) -> dict:
        u = {"promptTokenCount": n["input"], "totalTokenCount": n["input"] + (n["output"] if final else 0)}
        if final:
            u["candidatesTokenCount"] = n["output"]
        if n["cache_read"]:
            u["cachedContentTokenCount"] = n["cache_read"]
        return u

    @staticmethod
    def response(model: str, parts: list, n: dict, finish: str | None = None) -> dict:
        candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "usageMetadata": FakeGemini.usage(n, final=bool(finish)),
                "modelVersion": model, "responseId": "fake-response"}

    @staticmethod
    def final_parts(reply: Reply, text_parts: list) -> list:
        calls = [{"functionCall": {"name": c["name"], "args": c["args"]}} for c in reply.calls()]
        parts = calls or text_parts or [{"text": ""}]
        if reply.signature:
            parts[0 if calls else -1]["thoughtSignature"] = reply.signature
        return parts

    def whole(self, model: str, reply: Reply, text: str, n: dict) -> dict:
        parts = ([{"text": reply.reasoning, "thought": True}] if reply.reasoning else []) + \
                ([{"text": text}] if text else [])
        calls = self.final_parts(reply, []) if reply.tool_calls else []
        if reply.signature and not calls:
            parts = self.final_parts(reply, parts)
        return self.response(model, parts + calls, n, FINISH.get(reply.finish, "STOP"))

    def frames(self, model: str, reply: Reply, text: str, n: dict):
        for chunk in self.chunks(model, reply, text, n):
            yield sse(chunk, crlf=True)

    def array_frames(self, model: str, reply: Reply, text: str, n: dict):
        chunks = list(self.chunks(model, reply, text, n))
        for i, chunk in enumerate(chunks):
            yield ("[" if i == 0 else ",\r\n").encode() + json.dumps(chunk).encode() + \
                (b"]" if i == len(chunks) - 1 else b"")

    def chunks(self, model: str, reply: Reply, text: str, n: dict):
        for piece in pieces(reply.reasoning or ""):
            yield self.response(model, [{"text": piece, "thought": True}], n)
        texts = pieces(text, reply.chunk_chars)
        for piece in texts[:-1] if not reply.tool_calls else texts:
            yield self.response(model, [{"text": piece}], n)
        last = [{"text": texts[-1]}] if texts and not reply.tool_calls else []
        yield self.response(model, self.final_parts(reply, last), n, FINISH.get(reply.finish, "STOP"))
