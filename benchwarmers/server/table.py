"""The route table: every path the service answers, in one list."""
from __future__ import annotations

from ..api import admin, connect, gateway, status
from ..dashboard.pages import home, login
from ..dashboard.render import static
from ..errors import NotFound
from .routes import ADMIN, PUBLIC, Route, Router


def static_file(req, ctx):
    resp = static(req.params["name"])
    if resp is None:
        raise NotFound(f"No static file {req.params['name']!r}.")
    return resp


def build_routes() -> list[Route]:
    routes = [
        Route("GET", "/healthz", status.healthz, "bench", PUBLIC),
        Route("HEAD", "/", status.head_root, "html", PUBLIC),
        Route("GET", "/bench/status", status.status, "bench", ADMIN),
        # dashboard
        Route("GET", "/", home.view, "html", ADMIN, dashboard_only=True),
        Route("GET", "/.json", home.view, "bench", ADMIN, dashboard_only=True),
        Route("GET", "/login", login.show, "html", PUBLIC, dashboard_only=True),
        Route("POST", "/login", login.submit, "html", PUBLIC, dashboard_only=True),
        Route("POST", "/logout", login.logout, "html", PUBLIC, dashboard_only=True),
        Route("GET", "/static/{name}", static_file, "html", PUBLIC, dashboard_only=True),
    ]
    return routes + admin.ROUTES + connect.ROUTES + gateway.ROUTES


def build_router() -> Router:
    return Router(build_routes())
