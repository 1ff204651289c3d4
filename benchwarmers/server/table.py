"""The route table: every path the service answers, in one list."""
from __future__ import annotations

from ..api import admin, gateway, mcp, status
from ..dashboard.routes import ROUTES as DASHBOARD
from .routes import ADMIN, PUBLIC, Route, RouteTable


def build_routes() -> list[Route]:
    routes = [
        Route("GET", "/healthz", status.healthz, "bench", PUBLIC),
        Route("HEAD", "/", status.head_root, "html", PUBLIC),
        Route("GET", "/bench/status", status.status, "bench", ADMIN),
    ]
    return routes + DASHBOARD + admin.ROUTES + gateway.routes() + mcp.ROUTES


def build_table() -> RouteTable:
    return RouteTable(build_routes())
