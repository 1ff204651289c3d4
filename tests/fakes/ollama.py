"""A fake Ollama upstream: /api/chat and /api/generate (NDJSON or whole), /api/tags, /api/show, /api/version."""
from __future__ import annotations

import json
import time

from .server import FakeUpstream, Recorded, Reply, counts, pieces

DONE = {"stop": "stop", "length": "length", "content_filter": "stop"}


def line(obj: dict) -> bytes:
    return json.dumps(obj).encode() + b"\n"


class FakeOllama(FakeUpstream):
    protocol = "ollama"
    stream_type = "application/x-ndjson"

    def error_body(self, status: int, message: str, reply: Reply | None = None) -> dict:
        return {"error": message}

    def auth_error(self, h, rec: Recorded) -> None:
        h.send_json(401, {"error": "unauthorized"})

    def not_found_message(self, model: str) -> str:
        return f'model "{model}" not found, try pulling it first'

    def stream_error_frame(self, message: str) -> bytes:
        return line({"error": message})

    def route(self, h, rec: Recorded) -> None:
        path = rec.path.rstrip("/") or "/"
        if path == "/" and rec.method in ("GET", "HEAD"):
            return h.send_bytes(200, "text/plain; charset=utf-8", b"Ollama is running")
        if rec.method == "GET" and path == "/api/version":
            return h.send_json(200, {"version": "0.12.0"})
        if not self.check_key(h, rec):
            return
        if rec.method == "GET" and path == "/api/tags":
            return h.send_json(200, {"models": [self.entry(m) for m in self.model_entries()]})
        if rec.method == "POST" and path == "/api/show":
            return h.send_json(200, {"details": self.entry({"id": "x"})["details"],
                                     "model_info": {"general.architecture": "llama", "llama.context_length": 8192},
                                     "capabilities": ["completion", "tools"]})
        if rec.method == "POST" and path in ("/api/chat", "/api/generate"):
            return self.chat(h, rec, path == "/api/generate")
        h.send_json(404, {"error": "404 page not found"})

    @staticmethod
    def entry(m: dict) -> dict:
        m = dict(m)
        name = m.pop("id")
        return dict({"name": name, "model": name, "modified_at": "2025-01-01T00:00:00Z", "size": 4661224676,
                     "digest": "sha256:" + "0" * 64,
                     "details": {"parent_model": "", "format": "gguf", "family": "llama", "families": ["llama"],
                                 "parameter_size": "8.0B", "quantization_level": "Q4_K_M"}}, **m)

    def chat(self, h, rec: Recorded, generate: bool) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        model = body.get("model")
        if not model:
            return h.send_json(400, {"error": "model is required"})
        if generate:
            last = prompt = str(body.get("prompt") or "")
        else:
            messages = body.get("messages") or []
            for m in messages:
                if m.get("role") not in ("system", "user", "assistant", "tool"):
                    return h.send_json(400, {"error": f"invalid role: {m.get('role')}"})
            last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
            prompt = "\n".join(str(m.get("content", "")) for m in messages)
        reply = self.next_reply(model)
        text = self.answer_text(reply, model, last)
        n = self.count(reply, prompt, text)
        stream = body.get("stream", True) is not False
        self.play(h, reply, stream, lambda: self.whole(model, reply, text, n, generate),
                  lambda: self.frames(model, reply, text, n, generate), model=model)

    @staticmethod
    def stats(reply: Reply, n: dict) -> dict:
        return {"done": True, "done_reason": DONE.get(reply.finish, "stop"), "total_duration": 5_000_000,
                "load_duration": 1_000_000, "prompt_eval_count": n["input"], "prompt_eval_duration": 1_000_000,
                "eval_count": n["output"], "eval_duration": 3_000_000}

    @staticmethod
    def message(content: str = "", reply: Reply | None = None, thinking: str | None = None) -> dict:
        msg: dict = {"role": "assistant", "content": content}
        if thinking:
            msg["thinking"] = thinking
        if reply and reply.tool_calls:
            msg["tool_calls"] = [{"function": {"name": c["name"], "arguments": c["args"]}} for c in reply.calls()]
        return msg

    def whole(self, model: str, reply: Reply, text: str, n: dict, generate: bool) -> dict:
        head = {"model": model, "created_at": now()}
        if generate:
            return dict(head, response=text, **self.stats(reply, n))
        return dict(head, message=self.message(text, reply, reply.reasoning), **self.stats(reply, n))

    def frames(self, model: str, reply: Reply, text: str, n: dict, generate: bool):
        head = {"model": model, "created_at": now()}
        for piece in pieces(reply.reasoning or ""):
            yield line(dict(head, message=self.message(thinking=piece), done=False))
        for piece in pieces(text, reply.chunk_chars):
            yield line(dict(head, response=piece, done=False) if generate else
                       dict(head, message=self.message(piece), done=False))
        if reply.tool_calls and not generate:
            yield line(dict(head, message=self.message("", reply), done=False))
        end = dict(head, response="") if generate else dict(head, message=self.message())
        yield line(dict(end, **self.stats(reply, n)))


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
