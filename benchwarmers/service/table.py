"""The route table: every path the service answers, in one list."""
from __future__ import annotations

from ..api import admin, gateway, mcp, status
from ..bench import Bench
from ..dashboard.routes import ROUTES as DASHBOARD
from ..server import openapi
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, PUBLIC, Route, RouteTable


def openapi_json(req: Request, bench):
    return Response.json(openapi.document(build_table(), bench.role))


STORE = obj(("ok",), ok={"type": "boolean"}, error=STRING, since={"type": "number"}, lost={"type": "integer"})


def build_routes() -> list[Route[Bench]]:
    routes: list[Route[Bench]] = [
        Route("GET", "/healthz", status.healthz, "bench", PUBLIC, doc=op(
            "Liveness: 200 while the records can be kept, 503 naming why not (a full disk).",
            ok=obj(("status", "version", "store"), status=STRING, version=STRING, store=STORE))),
        Route("HEAD", "/", status.head_root, "html", PUBLIC, doc=op(
            "A quick answer for clients that warm their connection.", content=("text/plain",))),
        Route("GET", "/openapi.json", openapi_json, "bench", PUBLIC, doc=op("This document.")),
        Route("GET", "/bench/status", status.status, "bench", ADMIN, doc=op(
            "What is running and where: version, role, URL, data folder, counts, config problems, the store.",
            ok=obj(("service", "version", "counts", "config_problems", "store"), store=STORE))),
    ]
    return routes + DASHBOARD + admin.ROUTES + gateway.routes() + mcp.ROUTES


def build_table() -> RouteTable:
    return RouteTable(build_routes())
