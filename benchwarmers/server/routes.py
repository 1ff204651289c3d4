"""One route table: method + path pattern -> handler, the error shape of its API, and who may call it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .. import formats
from ..errors import MethodNotAllowed, NotFound

PUBLIC, GATEWAY, ADMIN = "public", "gateway", "admin"


@dataclass
class Route:
    """A route, classified: `auth` says who may call it (PUBLIC, GATEWAY or ADMIN; the security suite fails on a
    route left unclassified, and the app treats one as ADMIN), `dashboard_only` that the gateway-alone process does
    not serve it, and `doc` is its OpenAPI operation (server.openapi.op), which every route but the dashboard's
    pages brings."""
    method: str
    pattern: str
    handler: Callable
    shape: str = "bench"             # error shape: a format's SHAPE (openai, anthropic, ...), bench or html
    auth: str | None = None
    dashboard_only: bool = False     # not served by the gateway-alone process
    doc: dict | None = None

    def __post_init__(self):
        regex = re.sub(r"\{(\w+):path\}", r"(?P<\1>.+)", self.pattern)
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", regex)
        # a parameter may hold any character, a newline too; \Z, since $ would also match before a final newline
        self.regex = re.compile("^" + regex + r"\Z", re.DOTALL)


class RouteTable:
    """Matches a request to its route: 404 for an unknown path, 405 with Allow for a known path's wrong method."""

    def __init__(self, routes: list[Route]):
        self.routes = routes

    def match(self, method: str, path: str, role: str = "dashboard") -> tuple[Route, dict]:
        allowed = []
        for route in self.routes:
            if route.dashboard_only and role != "dashboard":
                continue
            m = route.regex.match(path)
            if not m:
                continue
            if route.method == method or (method == "HEAD" and route.method == "GET"):
                return route, m.groupdict()
            allowed.append(route.method)
        if allowed:
            allow = sorted(set(allowed) | ({"HEAD"} if "GET" in allowed else set()))
            raise MethodNotAllowed(f"{method} is not allowed on {path}; use {', '.join(allow)}.", allow)
        raise NotFound(f"No route for {method} {path}.", "See GATEWAY.md for the routes this service answers.")


def shape_for_path(path: str) -> str:
    """The API a path belongs to (the formats declare theirs), so even a 404 answers in the caller's own shape."""
    if path.startswith("/bench/") or path == "/healthz":
        return "bench"
    return formats.shape_of_path(path) or "html"
