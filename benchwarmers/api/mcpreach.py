"""The /mcp transport's way to the panel: inside the service, as the caller of the /mcp request (its key, its
collections), through the same route handlers a client's HTTP request reaches, and the panel itself for `ask` so
each seat can be reported as it finishes."""
from __future__ import annotations

import json
from typing import Protocol
from urllib.parse import quote

from ..core.panel import Panel
from ..errors import BenchError
from ..formats import FORMATS
from ..formats.base import RequestInfo
from ..mcp.tools import OnSeat, Reach, ToolError
from ..server.messages import Request
from ..server.routes import GATEWAY
from . import gateway
from .calls import CallsParts
from .collection import CollectionParts
from .points import PointsParts

ASK_PATH = "/v1/chat/completions"
ASK_FORMAT = FORMATS["openai_chat"]     # the format of ASK_PATH


class McpReachParts(gateway.ReachParts, CollectionParts, CallsParts, PointsParts, Protocol):
    """The routes the tools reach (collections, verdicts, points, pending), matched for the service's role, and
    the panel an ask starts once `gateway.admit` let it in."""
    panel: Panel
    role: str


class InProcessReach(Reach):
    def __init__(self, req: Request, bench: McpReachParts, session: str):
        self.req, self.session = req, session
        self.bench = bench      # for the methods, which Reach gives no bench: tests/test_parts.py reads them too

    def describe(self) -> str:
        return "this service, in process"

    def sub_request(self, method: str, path: str, body: dict | None = None, query: dict | None = None) -> Request:
        """A request as the /mcp request's caller: its key (already checked for this request) and its session."""
        sub = Request(method, path, query or {}, {"content-type": "application/json",
                                                  gateway.SESSION_HEADER: self.session},
                      json.dumps(body).encode() if body is not None else b"", self.req.client)
        sub.app, sub.caller, sub.is_admin = self.req.app, self.req.caller, self.req.is_admin
        return sub

    def route(self, method: str, path: str, body: dict | None = None, query: dict | None = None) -> dict:
        """The JSON answer of a gateway route, called in-process; a refusal is a ToolError in the route's words."""
        sub = self.sub_request(method, path, body, query)
        route, sub.params = self.req.app.table.match(method, path, self.bench.role)
        if route.auth != GATEWAY:      # the /mcp caller passed the gateway's check, and only that one
            raise ToolError(f"{method} {path} is not a gateway route.")
        try:
            return json.loads(route.handler(sub, self.bench).body)
        except BenchError as err:
            raise ToolError(str(err)) from None

    def collections(self) -> dict:
        return self.route("GET", "/bench/collections")

    def verdict(self, body: dict) -> dict:
        return self.route("POST", "/bench/verdict", body)

    def point_verdict(self, point: str, body: dict) -> dict:
        return self.route("POST", f"/bench/points/{quote(point, safe='')}/verdict", body)

    def pending(self, limit: int) -> dict:
        # a key names the caller; without one, the MCP session does
        query = {"limit": str(limit)} if self.req.caller else {"limit": str(limit), "session": self.session}
        return self.route("GET", "/bench/pending", query=query)

    def ask(self, body: dict, on_seat: OnSeat | None) -> tuple[dict, str]:
        """As POST /v1/chat/completions answers (the panel's `bench` data and its text), hearing each seat."""
        sub = self.sub_request("POST", ASK_PATH, body)
        try:
            (ask, _, _), asker = gateway.admit(ASK_FORMAT, sub, self.bench, RequestInfo(ASK_PATH, {}, sub.headers))
            run = self.bench.panel.start(ask, asker)
            done = []

            def heard(seat) -> None:
                assert on_seat is not None      # heard only with someone to tell
                done.append(seat)
                on_seat({"seat": seat.seat, "kind": seat.kind, "model": seat.model, "status": seat.status,
                         "call": seat.call}, len(done), len(run.seats))
            answer = self.bench.panel.whole(run, heard if on_seat else None)
        except BenchError as err:
            raise ToolError(str(err)) from None
        return run.bench(), answer.text
