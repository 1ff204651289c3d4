"""The dashboard's routes: each page at its path and as JSON at path + ".json", its form actions, login, static."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from ..bench import Bench
from ..errors import NotFound
from ..server.messages import Request, Response
from ..server.routes import ADMIN, PUBLIC, Route
from . import appsignin, askstream, signin, web
from .contract import Action, PageContract
from .pages import (ask, call, calls, collection, collectionlist, discover, endpoints, home, jobrun, login, model,
                    models, onboard, quotas, settings, suite, suiterun)
from .render import page, static


@dataclass
class Page:
    path: str
    module: PageContract
    nav: str | None = None        # its label in the top bar
    section: str | None = None    # the top-bar entry it belongs under (default: its own path)


PAGES = [
    Page("/", home, "Home"),
    Page("/ask", ask, "Ask"),
    Page("/calls", calls, "Calls"),
    Page("/calls/{id}", call, section="/calls"),
    Page("/models", models, "Models"),
    Page("/models/{alias}", model, section="/models"),
    Page("/onboard", onboard, section="/models"),
    Page("/discover", discover, "Discover"),
    Page("/collections", collectionlist, "Collections"),
    Page("/collections/{name}", collection, section="/collections"),
    Page("/suite", suite, "Suite"),
    Page("/suite/runs/{id}", suiterun, section="/suite"),
    Page("/endpoints", endpoints, "Endpoints"),
    Page("/quotas", quotas, "Quotas"),
    Page("/settings", settings, "Settings"),
    Page("/settings/jobs/{id}", jobrun, section="/settings"),
]
NAV = [(p.path, p.nav) for p in PAGES if p.nav]


def json_path(path: str) -> str:
    return "/.json" if path == "/" else path.rstrip("/") + ".json"


def views(p: Page):
    """The page's two faces: the dict as JSON, and the dict rendered into the layout."""
    module = p.module

    def as_json(req: Request, bench: Bench) -> Response:
        return Response.json(module.data(req, bench))

    def as_html(req: Request, bench: Bench) -> Response:
        if web.wants_json(req):
            return as_json(req, bench)
        frame = web.frame(req, bench)
        d = module.data(req, bench)
        to = module.redirect(d)
        if to:
            return Response.redirect(to)
        title, body = module.render(d, frame)
        link = json_path(req.path) + ("?" + urlencode(req.query) if req.query else "")
        return page(title, body, frame, nav_items=NAV, nav=p.section or p.path, version=bench.version,
                    json_link=link, scripts=module.SCRIPTS)
    as_json.__name__ = as_html.__name__ = f"page_{module.__name__.rsplit('.', 1)[-1]}"
    return as_json, as_html


def static_file(req: Request, bench: Bench) -> Response:
    resp = static(req.params["name"])
    if resp is None:
        raise NotFound(f"No static file {req.params['name']!r}.")
    return resp


def actions(posts: Sequence[Action]) -> list[Route[Bench]]:
    """A module's form posts (its ACTIONS), each behind the CSRF check."""
    return [Route("POST", path, web.action(fn, back), "html", ADMIN, dashboard_only=True)
            for path, fn, back in posts]


def build() -> list[Route[Bench]]:
    routes: list[Route[Bench]] = []
    for p in PAGES:
        as_json, as_html = views(p)
        routes += [Route("GET", json_path(p.path), as_json, "bench", ADMIN, dashboard_only=True),
                   Route("GET", p.path, as_html, "html", ADMIN, dashboard_only=True), *actions(p.module.ACTIONS)]
    return routes + actions(signin.ACTIONS) + signin.ROUTES + appsignin.ROUTES + [
        Route("POST", "/ask/stream", askstream.ask_stream, "bench", ADMIN, dashboard_only=True),
        Route("POST", "/ask/estimate", askstream.ask_estimate, "bench", ADMIN, dashboard_only=True),
        Route("POST", "/ask/stop", askstream.ask_stop, "bench", ADMIN, dashboard_only=True),
        Route("POST", "/ask/retry", askstream.ask_retry, "bench", ADMIN, dashboard_only=True),
        Route("GET", "/login", login.show, "html", PUBLIC, dashboard_only=True),
        Route("POST", "/login", login.submit, "html", PUBLIC, dashboard_only=True),
        Route("POST", "/logout", login.logout, "html", PUBLIC, dashboard_only=True),
        Route("GET", "/static/{name}", static_file, "html", PUBLIC, dashboard_only=True),
    ]


ROUTES = build()
