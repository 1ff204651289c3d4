"""MCP over JSON-RPC 2.0 for one session, whatever carries it: version negotiation, the tool methods, cancellation
and progress notifications. The stdio server and the service's /mcp transport each hold Sessions."""
from __future__ import annotations

import json
import logging
import threading
from typing import Callable

from .. import __version__
from .tools import Progress, Tools

log = logging.getLogger("benchwarmers.mcp")

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")   # oldest to newest
PROGRESS_MESSAGE_FROM = "2025-03-26"      # notifications/progress carries `message` from here on
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = \
    -32700, -32600, -32601, -32602, -32603
MAX_BATCH = 32          # messages in one JSON-RPC batch, on stdio and HTTP alike (MCP from 2025-06-18 sends none)

INSTRUCTIONS = (
    "Benchwarmers asks a panel of models (a collection) the same question and returns every seat's answer "
    "with a call id. Ask a collection (list_collections shows them), not a favourite model. Treat each answer "
    "as a claim to check: verify it against the code before acting on it. When you report back, list every "
    "seat, including the ones that failed or said nothing useful. Send one verdict per seat you judged; "
    "pending_verdicts lists the answers still waiting for one.")

Send = Callable[[dict], None]      # writes one message to the client while a request runs


def batch_refusal(messages: list) -> str | None:
    """Why a JSON-RPC batch is not taken (empty, or more than MAX_BATCH messages), or None."""
    if not messages:
        return "Invalid Request: an empty batch."
    if len(messages) > MAX_BATCH:
        return (f"Invalid Request: a batch holds at most {MAX_BATCH} messages, this one {len(messages):,}; send them "
                "in smaller batches.")
    return None


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


def valid_id(value) -> bool:
    # MCP ids are strings or integers, never null; bool is an int in Python, so exclude it.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def id_or_none(msg):
    return msg.get("id") if isinstance(msg, dict) and valid_id(msg.get("id")) else None


def is_request(msg) -> bool:
    return isinstance(msg, dict) and isinstance(msg.get("method"), str) and "id" in msg


class Session:
    """One client's session: the negotiated version, its tools, and the requests in flight (for cancellation).
    A transport whose caller is known per request (HTTP) passes the tools that reach the panel as that caller."""

    def __init__(self, tools: Tools):
        self.tools = tools
        self.version: str | None = None       # negotiated in initialize
        self.initialized = False              # the client's notifications/initialized arrived
        self._lock = threading.Lock()
        self._pending: dict[str, threading.Event] = {}   # request id (as JSON) -> cancelled flag

    # -- requests in flight --------------------------------------------------------------------
    def answer(self, msg, send: Send | None = None, tools: Tools | None = None) -> dict | None:
        """The reply to one message, tracked so a notifications/cancelled can stop it: None for a notification,
        a response to us, or a request the client cancelled meanwhile (no reply is sent for it)."""
        if not (isinstance(msg, dict) and valid_id(msg.get("id"))):
            return self.respond(msg, tools=tools)
        key = json.dumps(msg["id"])
        event = threading.Event()
        with self._lock:
            self._pending[key] = event
        try:
            reply = self.respond(msg, event, send, tools)
        finally:
            with self._lock:
                self._pending.pop(key, None)
        return None if event.is_set() else reply

    def cancel(self, params) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        with self._lock:
            event = self._pending.get(json.dumps(request_id))
        if event is not None:
            event.set()
            log.info("request %s cancelled by the client%s", request_id,
                     f": {params.get('reason')}" if params.get("reason") else "")

    # -- one message -------------------------------------------------------------------------------
    def respond(self, msg, cancelled: threading.Event | None = None, send: Send | None = None,
                tools: Tools | None = None) -> dict | None:
        """The reply to one message, or None for a notification (or a response to us, which we never ask for)."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return error_reply(id_or_none(msg), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message.")
        method = msg.get("method")
        if method is None and ("result" in msg or "error" in msg):
            return None
        has_id = "id" in msg
        if not isinstance(method, str) or (has_id and not valid_id(msg["id"])):
            return error_reply(id_or_none(msg), INVALID_REQUEST,
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
            result = self.dispatch(method, params, cancelled, send, tools or self.tools)
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

    def dispatch(self, method: str, params: dict, cancelled: threading.Event | None, send: Send | None,
                 tools: Tools) -> dict:
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        version = self.version or VERSIONS[-1]
        if method == "tools/list":
            return {"tools": tools.listing(version)}
        if method == "tools/call":
            name, args = params.get("name"), params.get("arguments")
            if name is None:
                raise RpcError(INVALID_PARAMS, "Invalid params: `name` is missing: the tool to call.",
                               {"tools": tools.names()})
            if not isinstance(name, str) or not tools.has(name):
                raise RpcError(INVALID_PARAMS, f"Unknown tool: {str(name)[:80]}", {"tools": tools.names()})
            if args is not None and not isinstance(args, dict):
                raise RpcError(INVALID_PARAMS, "Invalid params: `arguments` must be an object.")
            return tools.call(name, args or {}, version, cancelled, self.progress(params, send))
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def progress(self, params: dict, send: Send | None) -> Progress | None:
        """Progress notifications for a request that asked for them (its `_meta.progressToken`), when the transport
        can send while the request runs."""
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if send is None or not valid_id(token):
            return None
        with_message = (self.version or VERSIONS[-1]) >= PROGRESS_MESSAGE_FROM

        def report(done: float, total: float | None, message: str) -> None:
            note = {"progressToken": token, "progress": done}
            if total is not None:
                note["total"] = total
            if with_message:
                note["message"] = message
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
        return report

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
