"""A fake OpenAI chat-completions upstream: /v1/chat/completions (whole and SSE) and /v1/models."""
from __future__ import annotations

import json
import time

from .server import FakeUpstream, Recorded, Reply, counts, fragments, pieces, sse

FINISH = {"stop": "stop", "length": "length", "content_filter": "content_filter"}


def content_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


class FakeOpenAI(FakeUpstream):
    protocol = "openai"
    url_suffix = "/v1"

    def default_style(self) -> str:
        return "openai"

    def error_body(self, status: int, message: str, reply: Reply | None = None) -> dict:
        code = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}.get(status)
        kind = {429: "requests", 500: "server_error", 502: "server_error", 503: "server_error"}.get(
            status, "invalid_request_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def auth_error(self, h, rec: Recorded) -> None:
        h.send_json(401, self.error_body(401, "Incorrect API key provided. You can find your API key at "
                                              "https://platform.openai.com/account/api-keys."))

    def route(self, h, rec: Recorded) -> None:
        path = rec.path.rstrip("/")
        if rec.method == "POST" and path == "/v1/chat/completions":
            return self.chat(h, rec)
        if rec.method == "GET" and path.startswith("/v1/models"):
            if not self.check_key(h, rec):
                return
            entries = [dict({"object": "model", "created": 1700000000, "owned_by": "fake"}, **m)
                       for m in self.model_entries()]
            if path == "/v1/models":
                return h.send_json(200, {"object": "list", "data": entries})
            found = [m for m in entries if m["id"] == path[len("/v1/models/"):]]
            return h.send_json(200, found[0]) if found else h.send_json(404, self.error_body(404, "not found"))
        h.send_json(404, self.error_body(404, f"Invalid URL ({rec.method} {rec.path})"))

    def chat(self, h, rec: Recorded) -> None:
        if not self.check_key(h, rec):
            return
        body = rec.body if isinstance(rec.body, dict) else {}
        model, messages = body.get("model"), body.get("messages")
        if not model or not isinstance(messages, list):
            return h.send_json(400, self.error_body(400, "you must provide a model parameter and messages"))
        last = next((content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        prompt = "\n".join(content_text(m.get("content")) for m in messages)
        reply = self.next_reply(model)
        text = self.answer_text(reply, model, last)
        n = self.count(reply, prompt, text)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.play(h, reply, bool(body.get("stream")), lambda: self.whole(model, reply, text, n),
                  lambda: self.frames(model, reply, text, n, include_usage), model=model)

    @staticmethod
    def usage(n: dict) -> dict:
        return {"prompt_tokens": n["input"], "completion_tokens": n["output"],
                "total_tokens": n["input"] + n["output"],
                "prompt_tokens_details": {"cached_tokens": n["cache_read"]},
                "completion_tokens_details": {"reasoning_tokens": 0}}

    @staticmethod
    def calls(reply: Reply) -> list[dict]:
        return [dict(c, id=c["id"] or f"call_fake{i}") for i, c in enumerate(reply.calls())]

    def whole(self, model: str, reply: Reply, text: str, n: dict) -> dict:
        calls = self.calls(reply)
        message: dict = {"role": "assistant", "content": text if text or not calls else None, "refusal": None}
        if calls:
            message["tool_calls"] = [{"id": c["id"], "type": "function",
                                      "function": {"name": c["name"], "arguments": as_sent(c["args"])}}
                                     for c in calls]
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
               "choices": [{"index": 0, "message": message, "logprobs": None,
                            "finish_reason": "tool_calls" if calls else FINISH.get(reply.finish, "stop")}],
               "usage": self.usage(n), "system_fingerprint": "fp_fake"}
        if reply.no_usage:
            del out["usage"]
        return out

    def frames(self, model: str, reply: Reply, text: str, n: dict, include_usage: bool):
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "system_fingerprint": "fp_fake"}

        def chunk(delta: dict, finish: str | None = None) -> bytes:
            obj = dict(base, choices=[{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])
            if include_usage and not reply.no_usage:
                obj["usage"] = None
            return sse(obj)

        calls = self.calls(reply)
        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in pieces(reply.reasoning or ""):
            yield chunk({"reasoning_content": piece})
        for piece in pieces(text, reply.chunk_chars):
            yield chunk({"content": piece})
        for i, c in enumerate(calls):
            yield chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                         "function": {"name": c["name"], "arguments": ""}}]})
            for frag in fragments(as_sent(c["args"])):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]})
        yield chunk({}, "tool_calls" if calls else FINISH.get(reply.finish, "stop"))
        if include_usage and not reply.no_usage:
            yield sse(dict(base, choices=[], usage=self.usage(n)))
        yield b"data: [DONE]\n\n"


def as_sent(args) -> str:
    """A call's arguments as OpenAI's API sends them: a JSON string; a script's text that is not JSON as it is (a
    member that writes broken arguments)."""
    return args if isinstance(args, str) else json.dumps(args)
