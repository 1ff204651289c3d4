"""The shared scripted fake upstream: a ThreadingHTTPServer on 127.0.0.1:0 that records requests and plays Replies."""
from __future__ import annotations

import email.utils
import json
import re
import socket
import socketserver
import ssl
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """What a fake answers to one call. Every field has a harmless default: Reply() is the echo answer."""
    text: str | None = None            # None: the default echo, f"{model} says: {last user text}"
    tool_calls: list = field(default_factory=list)   # [("name", {args})] or [{"name", "arguments", "id"?}]; a
    #                                    string that is not JSON is sent as it is where the protocol allows (OpenAI)
    reasoning: str | None = None       # thinking text, sent the protocol's way
    signature: str | None = None       # Anthropic thinking signature / Gemini thoughtSignature
    finish: str = "stop"               # canonical: stop, length, content_filter (tool_calls is automatic)
    usage: dict | None = None          # override counts: {"input", "output", "cache_read", "cache_write"}
    no_usage: bool = False             # OpenAI: no usage at all, streamed even when asked, nor in a whole answer
    #                                    (llama.cpp's server)
    status: int = 200                  # an HTTP error when not 200 (the body in the protocol's error shape)
    message: str | None = None         # that error's message (a sensible default per status)
    style: str | None = None           # 429 signals: openai, anthropic, openrouter, retry_after,
    #                                    retry_after_ms, retry_after_date, gemini (default: the protocol's own)
    retry_after: float = 2.0           # seconds the 429 signals carry
    headers: dict = field(default_factory=dict)      # extra response headers, on any reply
    delay: float = 0.0                 # seconds before the response headers
    hold: threading.Event | None = None  # before the response headers, wait until the test sets it (or the fake
    #                                    stops): "still out" for as long as a test needs, and not a moment more
    chunk_delay: float = 0.0           # seconds between streamed frames
    stall: bool = False                # streamed: send `stall_after` frames, then nothing until the fake stops
    #                                    (whole: the head and half the body, then nothing)
    stall_after: int = 2
    drop_after: int | None = None      # streamed: cut the connection after N frames (no chunked terminator)
    #                                    (whole: cut after half the body)
    end_after: int | None = None       # streamed: end the body cleanly after N frames, without the end marker
    stream_error: str | None = None    # streamed: the protocol's in-stream error event after two frames
    #                                    (whole: the protocol's error body in a 200)
    garbage: bool = False              # a 200 whose body is not the protocol at all
    ignore_stream: bool = False        # answer whole even when asked to stream (some compatible servers do)
    always_stream: bool = False        # stream even when asked for a whole answer
    chunk_chars: int = 0               # text pieces of this many characters (0: word by word)
    compute: Callable[[str], str] | None = None   # the text worked out from the last user message's text (a fake
    #                                    referee reads the panel's answers there: tests/fakes/referee.py)

    @classmethod
    def error(cls, status: int, message: str | None = None, **kw) -> "Reply":
        return cls(status=status, message=message, **kw)

    @classmethod
    def tool(cls, name: str, args: dict | None = None, **kw) -> "Reply":
        return cls(tool_calls=[(name, args or {})], **kw)

    def calls(self) -> list[dict]:
        """Tool calls normalised to {"id" (None: the fake names it), "name", "args" (dict)}."""
        out = []
        for i, c in enumerate(self.tool_calls):
            if isinstance(c, (tuple, list)):
                c = {"name": c[0], "arguments": c[1] if len(c) > 1 else {}}
            args = c.get("arguments", c.get("args", {}))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass   # arguments that are not JSON, sent as they are where the protocol can (OpenAI's)
            out.append({"id": c.get("id"), "name": c["name"], "args": args})
        return out


@dataclass
class Recorded:
    method: str
    path: str                          # without the query
    query: dict                        # {name: first value}
    headers: dict                      # lower-cased names
    body: object                       # parsed JSON, or None
    raw: bytes = b""


def words(text: str) -> int:
    return len((text or "").split())


def pieces(text: str, size: int = 0) -> list[str]:
    if not text:
        return []
    if size:
        return [text[i:i + size] for i in range(0, len(text), size)]
    return re.findall(r"\s*\S+\s*?", text) or [text]


def fragments(s: str, size: int = 7) -> list[str]:
    """A JSON string cut the way streaming APIs cut tool arguments: mid-token, a few characters each."""
    return [s[i:i + size] for i in range(0, len(s), size)] or [""]


class FakeUpstream:
    """Base of the four protocol fakes. Subclasses implement `route(handler, rec)` and the protocol shapes."""
    protocol = ""
    url_suffix = ""                    # what `url` adds to the server root (e.g. "/v1")
    stream_type = "text/event-stream"

    def __init__(self, *, tls: tuple[str, str] | None = None, host_name: str = "127.0.0.1"):
        self.requests: list[Recorded] = []
        self.reported = {"input": 0, "output": 0, "cache_read": 0}   # tokens its answers reported (count)
        self.connections = 0           # TCP connections accepted (proves keep-alive reuse)
        self.models: list = ["fake-model"]
        self.key: str | None = None
        self._scripts: dict[str, object] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._socks: set = set()
        self._tls, self._host_name = tls, host_name
        self.server: ThreadingHTTPServer | None = None

    # ---- life -----------------------------------------------------------------------------------
    def start(self) -> "FakeUpstream":
        handler = type("Handler", (_Handler,), {"fake": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        if self._tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*self._tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.server:
            shut_down(self.server)
            self.drop_connections()
            self.server.server_close()
            self.server = None

    def drop_connections(self) -> None:
        """Close every open client connection, as a server does with idle keep-alives."""
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def root(self) -> str:
        return f"{'https' if self._tls else 'http'}://{self._host_name}:{self.port}"

    @property
    def url(self) -> str:
        """The base URL in the form the matching provider expects."""
        return self.root + self.url_suffix

    # ---- scripting ------------------------------------------------------------------------------
    def script(self, model: str, reply) -> "FakeUpstream":
        """A Reply (or text) for every call to `model` ("*": any model), or a list played in order across
        calls, after which the default echo answers."""
        if isinstance(reply, list):
            reply = [Reply(text=r) if isinstance(r, str) else r for r in reply]
        elif isinstance(reply, str):
            reply = Reply(text=reply)
        with self._lock:
            self._scripts[model] = reply
        return self

    def next_reply(self, model: str) -> Reply:
        with self._lock:
            entry = self._scripts.get(model, self._scripts.get("*"))
            if isinstance(entry, list):
                return entry.pop(0) if entry else Reply()
            return entry or Reply()

    def set_models(self, models: list) -> "FakeUpstream":
        """Model ids (str) or dicts of extra fields merged into that protocol's model entry."""
        self.models = list(models)
        return self

    def expect_key(self, key: str | None) -> "FakeUpstream":
        """Calls without exactly this key get the protocol's own auth error."""
        self.key = key
        return self

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._scripts.clear()

    def calls(self, path_part: str = "") -> list[Recorded]:
        return [r for r in list(self.requests) if path_part in r.path]

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    def model_entries(self) -> list[dict]:
        return [{"id": m} if isinstance(m, str) else dict(m) for m in self.models]

    # ---- what each protocol provides ------------------------------------------------------------
    def route(self, h: "_Handler", rec: Recorded) -> None:
        raise NotImplementedError

    def error_body(self, status: int, message: str, reply: Reply | None = None) -> dict:
        raise NotImplementedError

    def sent_key(self, rec: Recorded) -> str | None:
        auth = rec.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def auth_error(self, h: "_Handler", rec: Recorded) -> None:
        h.send_json(401, self.error_body(401, "invalid x-api-key"))

    def default_style(self) -> str:
        return "retry_after"

    # ---- playing a reply ------------------------------------------------------------------------
    def check_key(self, h: "_Handler", rec: Recorded) -> bool:
        if self.key is not None and self.sent_key(rec) != self.key:
            self.auth_error(h, rec)
            return False
        return True

    def count(self, reply: Reply, prompt: str, text: str) -> dict:
        """The token counts of a reply (`counts`), tallied in `reported` when the reply reports them (an answer
        that carries its usage): what this upstream says it served, to hold a ledger against."""
        n = counts(reply, prompt, text)
        if reply.status == 200 and not (reply.no_usage or reply.garbage):
            with self._lock:
                for key in self.reported:
                    self.reported[key] += n[key]
        return n

    def answer_text(self, reply: Reply, model: str, last_user: str) -> str:
        if reply.text is not None:
            return reply.text
        if reply.compute is not None:
            return reply.compute(last_user)
        return "" if reply.tool_calls else f"{model} says: {last_user}"

    def not_found_message(self, model: str) -> str:
        return f"The model `{model}` does not exist or you do not have access to it."

    def play(self, h: "_Handler", reply: Reply, stream: bool, whole, frames, *, model: str = "",
             ctype: str | None = None) -> None:
        """Send `reply`: an error, garbage, a whole body (`whole()`), or the `frames()` of a stream."""
        if reply.delay:
            self._stop.wait(reply.delay)
        if reply.hold is not None:
            self.held(reply.hold)
        if reply.status != 200:
            message = reply.message or (self.not_found_message(model) if reply.status == 404 else
                                        DEFAULT_ERRORS.get(reply.status, "error"))
            h.send_json(reply.status, self.error_body(reply.status, message, reply),
                        {**self.rate_headers(reply), **reply.headers})
            return
        if reply.garbage:
            body = b"data: <html>Bad Gateway {{{\n\n" if stream else b"<html><body>Bad Gateway</body></html>"
            h.send_bytes(200, self.stream_type if stream else "application/json", body, reply.headers)
            return
        if (not stream or reply.ignore_stream) and not reply.always_stream:
            self.play_whole(h, reply, whole)
            return
        h.start_stream(ctype or self.stream_type, reply.headers)
        for i, frame in enumerate(frames()):
            if reply.drop_after is not None and i >= reply.drop_after:
                return h.abort()
            if reply.end_after is not None and i >= reply.end_after:
                break
            if reply.stall and i == reply.stall_after:
                self._stop.wait(300)
                return h.abort()
            if reply.stream_error and i == 2:
                h.chunk(self.stream_error_frame(reply.stream_error))
                break
            if reply.chunk_delay and i:
                self._stop.wait(reply.chunk_delay)
            h.chunk(frame)
        h.end_stream()

    def play_whole(self, h: "_Handler", reply: Reply, whole) -> None:
        """A whole answer, with the stream faults a whole body can have: `stall` sends its head and half the body,
        then nothing; `drop_after` cuts the connection there; `stream_error` is the protocol's error in a 200."""
        if reply.stream_error:
            return h.send_json(200, self.error_body(500, reply.stream_error, reply), reply.headers)
        if not (reply.stall or reply.drop_after is not None):
            return h.send_json(200, whole(), reply.headers)
        body = json.dumps(whole()).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in reply.headers.items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body[: len(body) // 2])
        h.wfile.flush()
        if reply.stall:
            self._stop.wait(300)
        h.abort()

    def held(self, gate: threading.Event) -> None:
        """Wait for `gate`, the fake's stop, or HOLD_LIMIT seconds (a test that forgot its gate still ends)."""
        deadline = time.monotonic() + HOLD_LIMIT
        while not gate.wait(0.02) and not self._stop.is_set() and time.monotonic() < deadline:
            pass

    def stream_error_frame(self, message: str) -> bytes:
        return sse({"error": {"message": message, "type": "server_error", "code": 500}})

    def rate_headers(self, reply: Reply) -> dict:
        if reply.status != 429:
            return {}
        ra, now = reply.retry_after, time.time()
        style = reply.style or self.default_style()
        if style == "openai":
            return {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
                    "x-ratelimit-reset-requests": f"{ra:g}s", "x-ratelimit-limit-tokens": "150000",
                    "x-ratelimit-remaining-tokens": "149000", "x-ratelimit-reset-tokens": "6m0s"}
        if style == "anthropic":
            reset = datetime.fromtimestamp(now + ra, timezone.utc).isoformat().replace("+00:00", "Z")
            return {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
                    "anthropic-ratelimit-requests-reset": reset, "anthropic-ratelimit-tokens-limit": "40000",
                    "anthropic-ratelimit-tokens-remaining": "39000", "anthropic-ratelimit-tokens-reset": reset,
                    "retry-after": str(int(ra + 0.999))}
        if style == "openrouter":
            return {"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": str(int((now + ra) * 1000))}
        if style == "retry_after_ms":
            return {"retry-after-ms": str(int(ra * 1000))}
        if style == "retry_after_date":
            return {"retry-after": email.utils.formatdate(now + ra + 1, usegmt=True)}
        if style == "retry_after":
            return {"retry-after": f"{ra:g}"}
        return {}                                           # gemini: the body carries it


HOLD_LIMIT = 120.0                     # the longest a held reply waits for its gate

DEFAULT_ERRORS = {400: "Invalid request", 401: "Invalid authentication credentials", 403: "Permission denied",
                  404: "The model does not exist or you do not have access to it", 429: "Rate limit reached",
                  500: "Internal server error", 502: "Bad gateway", 503: "The server is overloaded",
                  529: "Overloaded"}


def shut_down(server: socketserver.BaseServer) -> None:
    """server.shutdown() without waiting out the serving loop's poll: knock on its socket until the loop has seen
    the request to stop (each test stops several fakes; the polls' waits added up to a good part of the suite)."""
    stopping = threading.Thread(target=server.shutdown, daemon=True)
    stopping.start()
    while stopping.is_alive():
        try:
            socket.create_connection(server.server_address[:2], timeout=0.5).close()
        except OSError:
            pass
        stopping.join(0.005)


def sse(obj, event: str | None = None, crlf: bool = False) -> bytes:
    data = obj if isinstance(obj, str) else json.dumps(obj)
    nl = "\r\n" if crlf else "\n"
    return ((f"event: {event}{nl}" if event else "") + f"data: {data}{nl}{nl}").encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeUpstream

    def setup(self):
        super().setup()
        try:      # as real servers do: small writes go out at once (no Nagle + delayed-ACK 40 ms stalls)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        with self.fake._lock:
            if not self.fake._stop.is_set():      # shut_down's knocks are no client's connections
                self.fake.connections += 1
            self.fake._socks.add(self.connection)

    def finish(self):
        with self.fake._lock:
            self.fake._socks.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, *args):
        pass

    def _any(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        rec = Recorded(self.command, parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()},
                       {k.lower(): v for k, v in self.headers.items()}, body, raw)
        with self.fake._lock:
            self.fake.requests.append(rec)
        try:
            self.fake.route(self, rec)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = do_PATCH = _any

    # ---- writing --------------------------------------------------------------------------------
    def send_bytes(self, status: int, ctype: str, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status: int, obj, headers: dict | None = None) -> None:
        self.send_bytes(status, "application/json", json.dumps(obj).encode(), headers)

    def start_stream(self, ctype: str, headers: dict | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def abort(self) -> None:
        """Cut the connection mid-body, the way a crashed upstream or a dead link does."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def counts(reply: Reply, prompt: str, text: str) -> dict:
    """Token counts the fakes report: words in and out, unless the Reply says otherwise."""
    out = words(text) + sum(words(json.dumps(c["args"])) for c in reply.calls())
    got = {"input": words(prompt), "output": out, "cache_read": 0, "cache_write": 0}
    got.update(reply.usage or {})
    return got
