"""`benchwarmers mcp`: an MCP server on stdio (JSON-RPC 2.0, one message a line) whose tools ask the running service."""
from __future__ import annotations

import json
import logging
import sys
import threading

from .. import __version__
from .tools import Tools

log = logging.getLogger("benchwarmers.mcp")

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")   # oldest to newest
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = \
    -32700, -32600, -32601, -32602, -32603

INSTRUCTIONS = (
    "Benchwarmers asks a panel of models (a collection) the same question and returns every seat's answer "
    "with a call id. Ask a collection (list_collections shows them), not a favourite model. Treat each answer "
    "as a claim to check: verify it against the code before acting on it. When you report back, list every "
    "seat, including the ones that failed or said nothing useful. Send one verdict per seat you judged.")


class RpcError(Exception):
    """A JSON-RPC error answer: code, message and optional data."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_reply(msg_id, code: int, message: str, data=None) -> dict:
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def negotiate(requested) -> str:
    """The client's version when we speak it, else the newest we have (the client then decides)."""
    return requested if requested in VERSIONS else VERSIONS[-1]


def _valid_id(value) -> bool:
    # MCP ids are strings or integers, never null; bool is an int in Python, so exclude it.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Server:
    """Reads messages from `inp` (binary lines), writes replies to `out`; tool calls run on worker threads."""

    def __init__(self, inp, out, tools: Tools | None = None):
        self.inp, self.out = inp, out
        self.tools = tools or Tools()
        self.version: str | None = None       # negotiated in initialize
        self.initialized = False              # the client's notifications/initialized arrived
        self._write_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: dict[str, threading.Event] = {}   # request id (as JSON) -> cancelled flag
        self._workers: list[threading.Thread] = []

    # -- the loop ------------------------------------------------------------------------------
    def serve(self) -> int:
        """Until stdin ends; then let in-flight tool calls answer, and exit 0."""
        log.info("benchwarmers MCP server %s on stdio; tools ask %s", __version__, self.tools.describe_target())
        for raw in self.inp:
            line = raw.strip()
            if line:
                self.handle_line(line)
        for t in list(self._workers):
            t.join()
        return 0

    def handle_line(self, line: bytes) -> None:
        try:
            msg = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            self.write(error_reply(None, PARSE_ERROR, f"Parse error: {e}"))
            return
        if isinstance(msg, list):
            if not msg:
                self.write(error_reply(None, INVALID_REQUEST, "Invalid Request: an empty batch."))
            else:
                self._spawn(self._run_batch, msg)
            return
        if isinstance(msg, dict) and msg.get("method") == "tools/call" and _valid_id(msg.get("id")):
            event = self._track(msg["id"])
            self._spawn(self._run_one, msg, event)
            return
        reply = self.respond(msg)
        if reply is not None:
            self.write(reply)

    def write(self, obj) -> None:
        """One message, one line; ensure_ascii=False keeps it UTF-8 and json never emits a raw newline."""
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, OSError, ValueError):
                log.debug("stdout is closed; dropping a reply")

    # -- workers and cancellation ------------------------------------------------------------------
    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, daemon=True, name="mcp-call")
        self._workers = [w for w in self._workers if w.is_alive()]
        self._workers.append(t)
        t.start()

    def _track(self, msg_id) -> threading.Event:
        event = threading.Event()
        with self._pending_lock:
            self._pending[json.dumps(msg_id)] = event
        return event

    def _finish(self, msg_id) -> bool:
        """Forget the request; True when it was cancelled (then no reply is sent)."""
        with self._pending_lock:
            event = self._pending.pop(json.dumps(msg_id), None)
        return event is not None and event.is_set()

    def cancel(self, params) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        with self._pending_lock:
            event = self._pending.get(json.dumps(request_id))
        if event is not None:
            event.set()
            log.info("request %s cancelled by the client%s", request_id,
                     f": {params.get('reason')}" if params.get("reason") else "")

    def _run_one(self, msg: dict, event: threading.Event) -> None:
        reply = self.respond(msg, cancelled=event)
        if not self._finish(msg["id"]) and reply is not None:
            self.write(reply)

    def _run_batch(self, batch: list) -> None:
        """A JSON-RPC batch (2025-03-26) is answered by one array of the replies, in order."""
        replies = []
        for msg in batch:
            event = self._track(msg["id"]) if isinstance(msg, dict) and _valid_id(msg.get("id")) else None
            reply = self.respond(msg, cancelled=event)
            cancelled = self._finish(msg["id"]) if event is not None else False
            if reply is not None and not cancelled:
                replies.append(reply)
        if replies:
            self.write(replies)

    # -- one message -------------------------------------------------------------------------------
    def respond(self, msg, cancelled: threading.Event | None = None) -> dict | None:
        """The reply to one message, or None for a notification (or a response to us, which we never ask for)."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return error_reply(_id_or_none(msg), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message.")
        method = msg.get("method")
        if method is None and ("result" in msg or "error" in msg):
            return None
        has_id = "id" in msg
        if not isinstance(method, str) or (has_id and not _valid_id(msg["id"])):
            return error_reply(_id_or_none(msg), INVALID_REQUEST,
                               "Invalid Request: `method` must be a string and `id` a string or integer.")
        params = msg.get("params", {})
        if params is not None and not isinstance(params, dict):
            return error_reply(msg.get("id"), INVALID_PARAMS, "Invalid params: `params` must be an object.") \
                if has_id else None
        params = params or {}
        if not has_id:
            self.notify(method, params)
            return None
        try:
            result = self.dispatch(method, params, cancelled)
        except RpcError as e:
            return error_reply(msg["id"], e.code, e.message, e.data)
        except Exception as e:       # a bug of ours must not end the session
            log.exception("internal error answering %s", method)
            return error_reply(msg["id"], INTERNAL_ERROR, f"Internal error: {type(e).__name__}")
        return {"jsonrpc": "2.0", "id": msg["id"], "result": result}

    def notify(self, method: str, params: dict) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            self.cancel(params)
        else:
            log.debug("ignoring notification %s", method)

    def dispatch(self, method: str, params: dict, cancelled: threading.Event | None) -> dict:
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": self.tools.listing(self.version or VERSIONS[-1])}
        if method == "tools/call":
            name, args = params.get("name"), params.get("arguments")
            if not isinstance(name, str) or not self.tools.has(name):
                raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}",
                               {"tools": self.tools.names()})
            if args is not None and not isinstance(args, dict):
                raise RpcError(INVALID_PARAMS, "Invalid params: `arguments` must be an object.")
            return self.tools.call(name, args or {}, self.version or VERSIONS[-1], cancelled)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def initialize(self, params: dict) -> dict:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: initialize needs `protocolVersion` (a string).",
                           {"supported": list(VERSIONS)})
        self.version = negotiate(requested)
        client = params.get("clientInfo") or {}
        log.info("client %s %s asked for protocol %s; speaking %s", client.get("name", "?"),
                 client.get("version", ""), requested, self.version)
        info = {"name": "benchwarmers", "version": __version__}
        if self.version >= "2025-06-18":
            info["title"] = "Benchwarmers"
        return {"protocolVersion": self.version, "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": info, "instructions": INSTRUCTIONS}


def _id_or_none(msg):
    return msg.get("id") if isinstance(msg, dict) and _valid_id(msg.get("id")) else None


def run(url: str | None = None) -> int:
    """Serve on this process's stdin and stdout; anything else that prints goes to stderr, not the protocol."""
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    try:
        return Server(sys.stdin.buffer, out, Tools(url=url)).serve()
    except KeyboardInterrupt:
        return 130
