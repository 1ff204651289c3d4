"""Admin API for the catalog: its copies and refresh, Discover, the providers whose free models work only in their
own app (with the user's switch), and a model's own facts, roles and price hold."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .. import hubs
from ..catalog import Catalog, overrides
from ..catalog.discover import discover
from ..catalog.vendors import APP_ONLY
from ..errors import BadRequest, BenchError, NotFound
from ..roster.registry import Registry
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import Config
from .endpoints import TRUE
from .models import ModelViewParts, view
from .parts import ProviderLookup

if TYPE_CHECKING:
    from ..bench import Bench


class DiscoverParts(ProviderLookup, Protocol):
    """Discover's list: the catalog's models, and the hubs among the endpoints."""
    catalog: Catalog
    registry: Registry


class CatalogParts(DiscoverParts, ModelViewParts, Protocol):
    config: Config


def status(req: Request, bench: CatalogParts) -> Response:
    return Response.json(bench.catalog.status())


def refresh(req: Request, bench: CatalogParts) -> Response:
    return Response.json(bench.catalog.refresh())


def _number(q: dict, name: str, default: int, low: int, high: int) -> int:
    raw = str(q.get(name) or "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(high)) or not low <= int(raw) <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}, not {raw!r}.")
    return int(raw)


def read_hubs(bench: DiscoverParts) -> list[dict]:
    """Read the sources of each hub endpoint not read since the service started (a hub that does not answer is
    asked again next time, and named in `hub_errors`)."""
    errors = []
    for endpoint in bench.registry.endpoints().values():
        if endpoint.hub and bench.registry.sources(endpoint) is None:
            try:
                found = hubs.sources(hubs.adapter(endpoint), bench.provider_at)
            except BenchError as e:
                errors.append({"endpoint": endpoint.name, "error": e.message})
                continue
            bench.registry.note_sources(endpoint, [s.provider for s in found if s.provider])
    return errors


def discover_view(bench: DiscoverParts, q: dict) -> dict:
    """The models worth adding, filtered by the query (free, tools, vision, reachable, min_context, find, limit)."""
    flag = lambda name: str(q.get(name) or "").lower() in TRUE   # noqa: E731
    hub_errors = read_hubs(bench)
    found = discover(bench.catalog, free=flag("free"), tools=flag("tools"), vision=flag("vision"),
                     min_context=_number(q, "min_context", 0, 0, 100_000_000), find=q.get("find") or "",
                     limit=_number(q, "limit", 100, 1, 1000), reachable=flag("reachable"))
    return {**found, "hub_errors": hub_errors}


def discover_models(req: Request, bench: CatalogParts) -> Response:
    return Response.json(discover_view(bench, req.query))


def app_only(req: Request, bench: CatalogParts) -> Response:
    return Response.json({"providers": bench.catalog.app_only()})


def set_app_only(req: Request, bench: CatalogParts) -> Response:
    """{"use_free": true}: Discover lists the provider's free models and explore seats may go to them."""
    provider = req.params["provider"]
    if provider not in APP_ONLY:
        raise NotFound(f"{provider!r} is not a provider whose free models work only in its own app.",
                       "GET /bench/catalog/app-only lists them: " + ", ".join(APP_ONLY) + ".")
    body = req.json()
    if "use_free" not in body:
        raise BadRequest("Send {\"use_free\": true} or {\"use_free\": false}.")
    overrides.save_use_free(bench.config, provider, body["use_free"])
    return Response.json(next(a for a in bench.catalog.app_only() if a["provider"] == provider))


def set_facts(req: Request, bench: CatalogParts) -> Response:
    model = bench.registry.model(req.params["alias"])
    overrides.save_facts(bench.config, model.alias, req.json())
    return Response.json({"model": view(bench, model)})


def set_roles(req: Request, bench: CatalogParts) -> Response:
    model = bench.registry.model(req.params["alias"])
    body = req.json()
    if "roles" not in body:
        raise BadRequest("Send {\"roles\": [...]}, or {\"roles\": null} to go back to the roles its facts give.")
    overrides.save_roles(bench.config, model.alias, body["roles"])
    return Response.json({"model": view(bench, model)})


def confirm(req: Request, bench: CatalogParts) -> Response:
    model = bench.registry.model(req.params["alias"])
    lifted = bench.catalog.confirm(model.alias)
    return Response.json({"confirmed": model.alias, "was": lifted, "model": view(bench, model)})


ONE_MODEL = obj(("model",), model={"type": "object"})
NUMBER = {"type": ["number", "null"]}
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/catalog", status, "bench", ADMIN, doc=op(
        "The catalog copies in use: each source, when it was fetched and how many models it lists.",
        ok=obj(("sources",), sources={"type": "array"}))),
    Route("POST", "/bench/catalog/refresh", refresh, "bench", ADMIN, doc=op(
        "Fetch the catalog's sources now; one that fails keeps its last copy.",
        ok=obj(("sources",), sources={"type": "object"}))),
    Route("GET", "/bench/discover", discover_models, "bench", ADMIN, doc=op(
        "Models worth adding, filtered, with this install's routes to each.",
        query={"free": STRING, "tools": STRING, "vision": STRING, "reachable": STRING,
               "min_context": {"type": "integer"}, "find": STRING, "limit": {"type": "integer"}},
        ok=obj(("models", "total"), models={"type": "array"}))),
    Route("GET", "/bench/catalog/app-only", app_only, "bench", ADMIN, doc=op(
        "Providers whose free models work only in their own app, with your switch for each.",
        ok=obj(("providers",), providers={"type": "array"}))),
    Route("PUT", "/bench/catalog/app-only/{provider}", set_app_only, "bench", ADMIN, doc=op(
        "Switch whether a provider's app-only free models are listed and may take explore seats.",
        body=obj(("use_free",), use_free={"type": "boolean"}), ok=obj(("provider",), provider=STRING))),
    Route("PUT", "/bench/models/{alias}/facts", set_facts, "bench", ADMIN, doc=op(
        "Set a model's own facts (null clears one); they win over every other source.",
        body=obj(context_window=NUMBER, max_output=NUMBER, vision={"type": ["boolean", "null"]},
                 tools={"type": ["boolean", "null"]}, reasoning={"type": ["boolean", "null"]}, price_in=NUMBER,
                 price_out=NUMBER), ok=ONE_MODEL)),
    Route("PUT", "/bench/models/{alias}/roles", set_roles, "bench", ADMIN, doc=op(
        "Set a model's roles (null: the roles its facts give).",
        body=obj(("roles",), roles={"type": ["array", "null"], "items": STRING}), ok=ONE_MODEL)),
    Route("POST", "/bench/models/{alias}/confirm", confirm, "bench", ADMIN, doc=op(
        "Accept the new price of a held model (a free one that turned paid), so seats may go to it again.",
        ok=obj(("confirmed", "model"), confirmed=STRING, model={"type": "object"}))),
]
