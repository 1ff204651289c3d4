"""A fake local model, slow the way llama.cpp's server is on a CPU: one request at a time (the others queue), a long
first byte (the prompt read), then a few tokens a second until its cap. A streamed request goes on until it is done
or its client closes the connection (it looks between tokens, as llama.cpp does); a request for a whole answer is
generated to its end whether or not anyone is still there (llama.cpp notices a client gone only while it streams).
OpenAI-compatible.

    with SlowModel(first_byte=0.5, tokens_per_second=20, length=4000, hold=None) as slow:   # hold: an Event
        slow.url                        # a base URL for an openai endpoint
        slow.asked_max                  # the max_tokens of each request, in order
        slow.streamed                   # whether each request asked for a stream, in order
        slow.served                     # per request: (tokens written, "done" | "length" | "closed"), noted
        #                                 before the answer's last bytes, so a client holding the answer finds it
        slow.wait_idle()                # until no request is being generated (the slot is free)
"""
from __future__ import annotations

import select
import socket
import threading
import time

from .openai import FakeOpenAI, content_text
from .server import sse


class SlowModel(FakeOpenAI):
    def __init__(self, *, first_byte: float = 0.5, tokens_per_second: float = 20.0, length: int = 4000,
                 slots: int = 1, hold: threading.Event | None = None, **kw):
        super().__init__(**kw)
        self.first_byte, self.tokens_per_second, self.length = first_byte, tokens_per_second, length
        self.hold = hold                  # set by the test: until then each request reads its prompt (still out)
        self._slot = threading.Semaphore(slots)
        self.asked_max: list = []
        self.streamed: list = []
        self.served: list = []            # (tokens written, how it ended)
        self.generating = 0               # requests holding a slot now
        self._idle = threading.Condition(self._lock)

    def chat(self, h, rec) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        stream = bool(body.get("stream"))

        def gone() -> bool:   # the service stopping, or a streamed request's client gone
            return self._stop.is_set() or stream and closed(h.connection)
        with self._lock:
            self.asked_max.append(cap)
            self.streamed.append(stream)
        while not self._slot.acquire(timeout=0.05):     # queued behind the request being generated
            if gone():
                return self._ended(0, "closed", held=False)
        with self._lock:
            self.generating += 1
        limit = min(self.length, cap) if cap else self.length
        written, how, noted = 0, "closed", None
        try:
            while self.hold is not None and not self.hold.wait(0.02):
                if gone():
                    return
            if self._stop.wait(self.first_byte) or gone():
                return
            if stream:
                h.start_stream(self.stream_type)
                h.chunk(self._chunk(body, {"role": "assistant", "content": ""}))
            for written in range(1, limit + 1):
                if self._stop.wait(1 / self.tokens_per_second) or gone():
                    written -= 1
                    return
                if stream:
                    h.chunk(self._chunk(body, {"content": "tok "}))
            how = "length" if limit < self.length else "done"
            noted = self._note(written, how)   # before the last bytes: a client that has the answer finds it noted
            finish = "length" if how == "length" else "stop"
            last = next((content_text(m.get("content")) for m in reversed(body.get("messages") or [])
                         if m.get("role") == "user"), "")
            usage = {"prompt_tokens": len(last.split()), "completion_tokens": written,
                     "total_tokens": len(last.split()) + written}
            if stream:
                h.chunk(self._chunk(body, {}, finish))
                h.chunk(sse({"id": "chatcmpl-slow", "object": "chat.completion.chunk", "choices": [],
                             "usage": usage}))
                h.chunk(b"data: [DONE]\n\n")
                h.end_stream()
            else:
                h.send_json(200, {"id": "chatcmpl-slow", "object": "chat.completion", "created": int(time.time()),
                                  "model": body.get("model"), "usage": usage,
                                  "choices": [{"index": 0, "finish_reason": finish,
                                               "message": {"role": "assistant", "content": "tok " * written}}]})
        except OSError:          # the client went away while we wrote
            how = "closed"
            if noted is not None:
                with self._lock:
                    self.served[noted] = (written, how)
        finally:
            self._ended(written, how, noted=noted is not None)

    def _chunk(self, body: dict, delta: dict, finish: str | None = None) -> bytes:
        return sse({"id": "chatcmpl-slow", "object": "chat.completion.chunk", "model": body.get("model"),
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def _note(self, written: int, how: str) -> int:
        """How a request ended, noted in `served`; its index there."""
        with self._lock:
            self.served.append((written, how))
            return len(self.served) - 1

    def _ended(self, written: int, how: str, held: bool = True, noted: bool = False) -> None:
        with self._lock:
            if not noted:
                self.served.append((written, how))
            if held:
                self.generating -= 1
                self._idle.notify_all()
        if held:
            self._slot.release()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no request is being generated; False when `timeout` passes first."""
        with self._idle:
            return self._idle.wait_for(lambda: self.generating == 0, timeout)

    def wait_served(self, n: int, timeout: float = 30.0) -> list:
        """Wait until `n` requests have ended (any way); the list of how they ended."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if len(self.served) >= n:
                    return list(self.served)
            time.sleep(0.02)
        raise AssertionError(f"{n} requests did not end within {timeout} s: {self.served}")


def closed(conn) -> bool:
    """The client closed its end: readable with nothing to read (a server's check between tokens)."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True
