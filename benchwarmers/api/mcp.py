"""/mcp: MCP's Streamable HTTP transport inside the service. POST carries JSON-RPC messages (answered as JSON, or as
an event stream when a tool call asked for progress), DELETE ends a session, GET opens no stream here (405).
Sessions start at initialize (Mcp-Session-Id), belong to the caller who made them and expire when idle."""
from __future__ import annotations

import json
import queue
import threading
from typing import TYPE_CHECKING, Protocol

from .. import strictjson
from ..errors import BadRequest, MethodNotAllowed, NotFound, RateLimited
from ..mcp.protocol import (INVALID_REQUEST, PARSE_ERROR, VERSIONS, Session, batch_refusal, error_reply, id_or_none,
                            is_request)
from ..mcp.sessions import MAX_SESSIONS, Sessions
from ..mcp.tools import Reach, Tools
from ..server import guard
from ..server.messages import Request, Response
from ..server.openapi import ANY_JSON, obj, op
from ..server.gatewaykeys import GatewayKeys
from ..server.routes import GATEWAY, Route
from .mcpreach import InProcessReach, McpReachParts
from .parts import EffectiveSettings

if TYPE_CHECKING:
    from ..bench import Bench


class OwnerParts(Protocol):
    """The admin token, for who a session belongs to."""
    admin_token: str | None


class SessionParts(OwnerParts, EffectiveSettings, Protocol):
    """The MCP sessions, found by their owner and ended when idle past the setting."""
    mcp_sessions: Sessions


class PacingParts(Protocol):
    """The gateway keys, for each request of a batch counted against its key's rate."""
    gateway_keys: GatewayKeys


class McpParts(McpReachParts, Protocol):
    """A POST: its session, its batch paced, its tool calls reaching the panel in process."""
    admin_token: str | None
    gateway_keys: GatewayKeys
    mcp_sessions: Sessions

    def settings(self) -> dict: ...


SESSION_HEADER, VERSION_HEADER = "mcp-session-id", "mcp-protocol-version"
EVENT_STREAM = "text/event-stream"
RATE_LIMITED = -32029   # JSON-RPC's server-defined range: a request of the batch past the key's rate
_DONE = object()


def owner_of(req: Request, bench: OwnerParts) -> str:
    """Who a session belongs to: the key (by name and when it was made, so a new key of the same name is someone
    else), the admin, or anyone when the service takes no token."""
    if req.caller is not None:
        return f"key:{req.caller.name}:{req.caller.created}"
    return "admin" if req.is_admin and bench.admin_token else "anyone"


def idle_seconds(bench: EffectiveSettings) -> float:
    return bench.settings()["mcp_session_idle_minutes"] * 60


def rpc_error(status: int, code: int, message: str) -> Response:
    """A refusal of the transport: the HTTP status, with a JSON-RPC error that has no id."""
    return Response.json(error_reply(None, code, message), status)


def post_mcp(req: Request, bench: McpParts) -> Response:
    version = req.headers.get(VERSION_HEADER)
    if version is not None and version not in VERSIONS:
        return rpc_error(400, INVALID_REQUEST, f"Unsupported MCP-Protocol-Version {version!r}; this server speaks "
                                               f"{', '.join(VERSIONS)}.")
    try:
        body = strictjson.loads(req.body)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        return rpc_error(400, PARSE_ERROR, f"Parse error: {e}")
    messages = body if isinstance(body, list) else [body]
    refusal = batch_refusal(messages)
    if refusal:
        return rpc_error(400, INVALID_REQUEST, refusal)
    if any(is_request(m) and m["method"] == "initialize" for m in messages):
        if len(messages) > 1 or isinstance(body, list):
            return rpc_error(400, INVALID_REQUEST, "initialize must be sent alone, not in a batch.")
        return initialize(req, bench, messages[0])
    sid = req.headers.get(SESSION_HEADER)
    if not sid:
        return rpc_error(400, INVALID_REQUEST, "Mcp-Session-Id is missing: send initialize first, then the id it "
                                               "gave on every request.")
    session = bench.mcp_sessions.find(sid, owner_of(req, bench), idle_seconds(bench))
    if session is None:
        return rpc_error(404, INVALID_REQUEST, "No such MCP session (unknown, ended or expired): initialize again.")
    tools = Tools(InProcessReach(req, bench, sid))
    if not isinstance(body, list) and wants_progress(req, body):
        return streamed(session, body, tools, bench.settings()["keepalive_seconds"])
    replies = [r for r in answers(req, bench, session, messages, tools) if r is not None]
    if not replies:                 # notifications (initialized, cancelled) and responses: accepted
        return Response(202)
    refused = all("error" in r and r["id"] is None for r in replies)    # nothing in it was a message we can take
    return Response.json(replies if isinstance(body, list) else replies[0], 400 if refused else 200)


def answers(req: Request, bench: PacingParts, session: Session, messages: list, tools: Tools):
    """Each message's reply, in order. The POST counted once against the caller's key; each request after the
    first in a batch counts once more, and one past the key's rate is answered with an error, not run."""
    first = True
    for msg in messages:
        if is_request(msg) and not first:
            try:
                bench.gateway_keys.pace(req.caller)
            except RateLimited as err:
                wait = {"retry_after": round(err.retry_after, 1)} if err.retry_after is not None else {}
                yield error_reply(id_or_none(msg), RATE_LIMITED, str(err), wait)
                continue
        first = first and not is_request(msg)
        yield session.answer(msg, tools=tools)


def initialize(req: Request, bench: SessionParts, msg: dict) -> Response:
    opened = bench.mcp_sessions.open(owner_of(req, bench), Tools(Reach()), idle_seconds(bench))  # each request
    if opened is None:                                                                  # brings its own tools
        return rpc_error(503, INVALID_REQUEST, f"{MAX_SESSIONS:,} MCP sessions are open, the most this service "
                                               "holds: try again once some end (DELETE /mcp) or idle out.")
    sid, session = opened
    reply = session.answer(msg)
    if reply is None or "error" in reply:          # a failed initialize leaves no session behind
        bench.mcp_sessions.end(sid, owner_of(req, bench), idle_seconds(bench))
        return Response.json(reply or error_reply(None, INVALID_REQUEST, "initialize needs an id."))
    return Response.json(reply, headers={"Mcp-Session-Id": sid})


def wants_progress(req: Request, msg) -> bool:
    """A tool call that asked for progress, from a client that reads event streams."""
    params = msg.get("params") if is_request(msg) and msg["method"] == "tools/call" else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and "progressToken" in meta and EVENT_STREAM in req.headers.get("accept", "")


def event(msg: dict) -> bytes:
    return b"event: message\ndata: " + json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


def streamed(session: Session, msg: dict, tools: Tools, keepalive: float) -> Response:
    """The call runs on its own thread; its progress notifications and then its answer go out as events. A client
    that goes away does not cancel it (it cancels with notifications/cancelled): its calls are still recorded."""
    out: queue.Queue = queue.Queue()

    def work() -> None:
        reply = None
        try:
            reply = session.answer(msg, out.put, tools)
        finally:
            out.put((_DONE, reply))
    threading.Thread(target=work, daemon=True, name="mcp-http-call").start()

    def events():
        while True:
            try:
                item = out.get(timeout=keepalive)
            except queue.Empty:
                yield b": keep-alive\n\n"
                continue
            if isinstance(item, tuple) and item[0] is _DONE:
                if item[1] is not None:
                    yield event(item[1])
                return
            yield event(item)
    return Response.streaming(events(), EVENT_STREAM)


def delete_mcp(req: Request, bench: SessionParts) -> Response:
    sid = req.headers.get(SESSION_HEADER)
    if not sid:
        raise BadRequest("Mcp-Session-Id is missing: name the session to end.")
    if not bench.mcp_sessions.end(sid, owner_of(req, bench), idle_seconds(bench)):
        raise NotFound("No such MCP session (unknown, ended or expired).")
    return Response(204)


def get_mcp(req: Request, bench: object) -> Response:
    """No server-initiated stream is offered; the Origin check still applies (the transport asks it of every
    request, not only the ones that change something)."""
    guard.check_origin(req, every_method=True)
    raise MethodNotAllowed("GET /mcp opens no event stream on this server; POST JSON-RPC messages instead.",
                           ["DELETE", "POST"])


ROUTES: list[Route[Bench]] = [
    Route("POST", "/mcp", post_mcp, "jsonrpc", GATEWAY, doc=op(
        "MCP over HTTP (Streamable HTTP): JSON-RPC messages in (initialize first, then Mcp-Session-Id), JSON or "
        "an event stream out (202 when it held only notifications).", body=ANY_JSON, ok=ANY_JSON,
        content=("application/json", EVENT_STREAM), also={202: None})),
    Route("GET", "/mcp", get_mcp, "jsonrpc", GATEWAY, doc=op(
        "Opens no server stream here: 405 (POST the messages instead).", status=405, ok=obj())),
    Route("DELETE", "/mcp", delete_mcp, "jsonrpc", GATEWAY, doc=op(
        "End the MCP session named in Mcp-Session-Id (204).", status=204, content=())),
]
