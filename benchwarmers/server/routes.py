"""One route table: method + path pattern -> handler, the error shape of its API, and who may call it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from .. import formats
from ..errors import MethodNotAllowed, NotFound, WrongBaseURL
from .messages import Request, Response

PUBLIC, GATEWAY, ADMIN = "public", "gateway", "admin"
BENCH_SHAPE = "openai"   # the admin API's errors (shape "bench") take the OpenAI shape
# what a route's handler is given: the Bench, or a Protocol naming the parts of it the handler uses. A table of
# Route[Bench] (the service's) takes a handler of any such Protocol the Bench meets, and the type checker proves it.
Parts = TypeVar("Parts", contravariant=True)


@dataclass
class Route(Generic[Parts]):
    """A route, classified: `auth` says who may call it (PUBLIC, GATEWAY or ADMIN; the security suite fails on a
    route left unclassified, and the app treats one as ADMIN), `dashboard_only` that the gateway-alone process does
    not serve it, and `doc` is its OpenAPI operation (server.openapi.op), which every route but the dashboard's
    pages brings."""
    method: str
    pattern: str
    handler: Callable[[Request, Parts], Response]
    shape: str = "bench"             # error shape: a format's SHAPE (openai, anthropic, ...), bench, html or
    #                                  jsonrpc (MCP's transport: a JSON-RPC error with no id)
    auth: str | None = None
    dashboard_only: bool = False     # not served by the gateway-alone process
    doc: dict | None = None

    def __post_init__(self):
        pieces = re.split(r"(\{\w+(?::path)?\})", self.pattern)      # literal text is escaped: "." is a dot
        regex = "".join(re.escape(p) if not p.startswith("{") else
                        f"(?P<{p[1:-6]}>.+)" if p.endswith(":path}") else f"(?P<{p[1:-1]}>[^/]+)" for p in pieces)
        # a parameter may hold any character, a newline too; \Z, since $ would also match before a final newline
        self.regex = re.compile("^" + regex + r"\Z", re.DOTALL)


SEEN = 2048   # paths whose candidate routes are kept


class RouteTable:
    """Matches a request to its route: 404 for an unknown path, 405 with Allow for a known path's wrong method."""

    def __init__(self, routes: list[Route]):
        self.routes = routes
        # A path is tried only against the routes it could match: those of its own literal pattern, and those
        # with parameters whose literal start it begins with; in table order, as a walk of the whole table would.
        self._literal: dict[str, list[tuple[int, Route]]] = {}
        self._patterned: list[tuple[int, str, Route]] = []
        for i, route in enumerate(routes):
            if "{" in route.pattern:
                self._patterned.append((i, route.pattern.split("{", 1)[0], route))
            else:
                self._literal.setdefault(route.pattern, []).append((i, route))
        self._seen: dict[str, list[Route]] = {}   # path -> its candidates, worked out once

    def candidates(self, path: str) -> list[Route]:
        hit = self._seen.get(path)
        if hit is None:
            found = self._literal.get(path, []) + [(i, r) for i, start, r in self._patterned if path.startswith(start)]
            found.sort(key=lambda pair: pair[0])
            hit = [route for _, route in found]
            if len(self._seen) < SEEN:   # the paths clients ask again and again; beyond that (ids in paths), not kept
                self._seen[path] = hit
        return hit

    def match(self, method: str, path: str, role: str = "dashboard", origin: str = "") -> tuple[Route, dict]:
        """`origin` (scheme and host the client used) names the base URL to use when a client's is off."""
        allowed, dashboard = [], False
        for route in self.candidates(path):
            m = route.regex.match(path)
            if not m:
                continue
            if route.dashboard_only and role != "dashboard":
                dashboard = dashboard or route.method in (method, "GET" if method == "HEAD" else method)
                continue
            if route.method == method or (method == "HEAD" and route.method == "GET"):
                return route, m.groupdict()
            allowed.append(route.method)
        if dashboard:   # a dashboard page's path; an API client whose base URL lacks its prefix is told that first
            self._misplaced(method, path, role, origin)
            raise NotFound("No dashboard here: this process is the gateway alone (`benchwarmers gateway`, "
                           "`python gateway.py`), which answers the API routes only.",
                           "The dashboard is served by `benchwarmers` (`python serve.py`), on port 8122 by default.")
        if allowed:
            allow = sorted(set(allowed) | ({"HEAD"} if "GET" in allowed else set()))
            raise MethodNotAllowed(f"{method} is not allowed on {path}; use {', '.join(allow)}.", allow)
        self._misplaced(method, path, role, origin)
        raise NotFound(f"No route for {method} {path}.", "See GATEWAY.md for the routes this service answers.")

    def _find(self, method: str, path: str, role: str, shape: str) -> Route | None:
        for route in self.routes:
            if route.shape == shape and not (route.dashboard_only and role != "dashboard") and \
                    route.method in (method, "GET" if method == "HEAD" else method) and route.regex.match(path):
                return route
        return None

    def _misplaced(self, method: str, path: str, role: str, origin: str) -> None:
        """A client whose base URL lacks its API's prefix (`/chat/completions`, `/messages`,
        `/models/x:generateContent`), has it twice (`/v1/v1/messages`) or glued on (`/v1chat/completions`) gets
        the path it meant and the base URL to use, in that API's shape."""
        for prefix, shape in formats.PREFIXES:
            if path.startswith(prefix + prefix + "/"):
                meant, base, why = path[len(prefix):], origin, f"the path has {prefix} twice"
            elif path.startswith(prefix) and not path.startswith(prefix + "/"):   # a client that adds no slash
                meant, base, why = prefix + "/" + path[len(prefix):], origin + prefix + "/", f"no / after {prefix}"
            elif not path.startswith(prefix + "/"):
                meant, base, why = prefix + path, origin + prefix, f"the path lacks {prefix}"
            else:
                continue
            if self._find(method, meant, role, shape):
                raise WrongBaseURL(f"No route for {method} {path}: {why}; the route is {method} {meant}.",
                                   f"Set your client's base URL to {base or '/'}.", shape)


def shape_for_path(path: str) -> str:
    """The API a path belongs to (the formats declare theirs), so even a 404 answers in the caller's own shape."""
    if path.startswith("/bench/") or path == "/healthz":
        return "bench"
    if path == "/mcp":
        return "jsonrpc"
    return formats.shape_of_path(path) or "html"
