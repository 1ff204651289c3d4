"""Admin API for endpoints and candidates: add (checked by listing models first), list, remove, what they serve."""
from __future__ import annotations

import time
from urllib.parse import urlsplit

from .. import health, keys, onboard
from ..errors import BadRequest, Conflict, UpstreamFailed
from ..registry import APIS, Endpoint, check_name
from ..server.context import Context
from ..server.messages import Request, Response
from ..server.routes import ADMIN, Route

TRUE = ("1", "true", "yes", "on")


def key_source(endpoint: Endpoint) -> str:
    """Where the key comes from: environment, keys.json, none (local server) or missing; never the key."""
    if endpoint.no_key:
        return "none"
    return endpoint.key()[1] or "missing"


def endpoint_view(ctx: Context, endpoint: Endpoint) -> dict:
    reg = health.registry(ctx)
    on_bench = [m for m in reg.models().values() if m.endpoint == endpoint.name]
    extra = reg.endpoint_extra(endpoint.name)
    return {"name": endpoint.name, "base_url": endpoint.base_url, "api": endpoint.api, "no_key": endpoint.no_key,
            "key_source": key_source(endpoint), "key_env": keys.env_name(endpoint.name),
            "models": len(on_bench), "active_models": sum(1 for m in on_bench if m.active),
            "served_count": extra.get("served_count"), "checked": extra.get("checked")}


def list_endpoints(req: Request, ctx: Context) -> Response:
    reg = health.registry(ctx)
    return Response.json({"endpoints": [endpoint_view(ctx, e) for _, e in sorted(reg.endpoints().items())]})


def check_base(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequest("base_url is required.", "e.g. --base https://openrouter.ai/api/v1")
    value = value.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.username or parts.password:
        raise BadRequest(f"{value!r} is not a usable base URL.",
                         "Give an http:// or https:// URL without credentials in it, e.g. http://localhost:11434.")
    return value


def endpoint_from(body: dict) -> Endpoint:
    name = check_name(body.get("name"), "Endpoint name")
    api = body.get("api") or "openai"
    if api not in APIS:
        raise BadRequest(f"Unknown api {api!r}.", "Use one of: " + ", ".join(APIS) + ".")
    return Endpoint(name, check_base(body.get("base_url")), api, bool(body.get("no_key")))


def key_for(body: dict, endpoint: Endpoint) -> tuple[str | None, bool]:
    """(key to check with, whether it is new and must be stored): from the body, else env or keys.json."""
    given = body.get("key")
    if given is not None and not isinstance(given, str):
        raise BadRequest("key must be a string.")
    given = (given or "").strip()
    if endpoint.no_key:
        if given:
            raise BadRequest("Give a key or no_key, not both.", "Local servers take --no-key; others a key.")
        return None, False
    if given:
        if any(ord(c) < 32 or c.isspace() for c in given):
            raise BadRequest("The key holds spaces or control characters.", "Paste the key alone, on one line.")
        keys.remember(given)   # from here on, redaction knows it
        return given, True
    existing, _ = keys.get(endpoint.name)
    if existing:
        return existing, False
    raise BadRequest(f"No key for endpoint {endpoint.name!r}.",
                     f"`bench endpoint add {endpoint.name} --base URL` prompts for one (or --key-stdin); set "
                     f"{keys.env_name(endpoint.name)}; or pass --no-key for a local server.")


def add_endpoint(req: Request, ctx: Context) -> Response:
    body = req.json()
    endpoint = endpoint_from(body)
    reg = health.registry(ctx)
    if endpoint.name in reg.endpoints() and not body.get("replace"):
        raise Conflict(f"Endpoint {endpoint.name!r} exists.",
                       "Add --replace to change its URL, protocol or key, or pick another name.")
    key, new_key = key_for(body, endpoint)
    return Response.json({"endpoint": register(ctx, endpoint, key, new_key)}, 201)


def register(ctx: Context, endpoint: Endpoint, key: str | None, new_key: bool) -> dict:
    """Check the endpoint by listing its models with `key`, save it, and store a new key in keys.json;
    its view (never the key). Provider sign-in (api/connect.py) adds endpoints through this too."""
    reg = health.registry(ctx)
    served = check_endpoint(endpoint, key)
    extra = {"served_count": len(served), "checked": time.time()}
    reg.save_endpoint(endpoint, extra)
    if new_key:
        try:
            keys.store(endpoint.name, key)
        except OSError as e:    # nothing half-registered: take the endpoint back out
            reg.remove_endpoint(endpoint.name)
            raise BadRequest(f"Could not write keys.json: {type(e).__name__}.",
                             f"Check {keys.keys_file()} is writable, or set {keys.env_name(endpoint.name)}.") from None
    view = endpoint_view(ctx, endpoint)
    view["sample"] = [m.get("id") for m in served[:10]]
    return view


def check_endpoint(endpoint: Endpoint, key: str | None) -> list[dict]:
    """List its models with the key given, before anything is saved."""
    from ..providers import make_provider
    provider = make_provider(endpoint.api, endpoint.base_url, key, name=endpoint.name)
    try:
        return provider.list_models(timeouts=onboard.list_timeouts())
    except UpstreamFailed as e:
        raise health.explain(e, endpoint, f"Endpoint {endpoint.name!r} was not added: listing its models failed"
                             ) from None


def remove_endpoint(req: Request, ctx: Context) -> Response:
    """Its models are retired (restorable once it is back); its key stays in keys.json, shared with llm."""
    reg = health.registry(ctx)
    endpoint = reg.endpoint(req.params["name"])
    retired = [m.alias for m in list(reg.models().values()) if m.endpoint == endpoint.name and m.active]
    for alias in retired:
        health.retire(reg, alias, f"its endpoint {endpoint.name!r} was removed")
    reg.remove_endpoint(endpoint.name)
    note = None
    if key_source(endpoint) == "keys.json":
        note = (f"Its key stays in {keys.keys_file()} (shared with the llm CLI); "
                f"remove it there (`llm keys`) if nothing else uses it.")
    return Response.json({"removed": endpoint.name, "retired": retired, "note": note})


def candidates(req: Request, ctx: Context) -> Response:
    """What each endpoint serves, marked with the alias when it is already on the bench."""
    only_new = req.query.get("new", "").lower() in TRUE
    reg = health.registry(ctx)
    on_bench = {(m.endpoint, m.served): m.alias for m in reg.models().values()}
    rows, errors = [], []
    for name, found in sorted(onboard.listings(reg).items()):
        if "error" in found:
            errors.append({"endpoint": name, "error": found["error"]})
            continue
        for entry in found["models"]:
            alias = on_bench.get((name, entry.get("id")))
            if only_new and alias:
                continue
            rows.append({"endpoint": name, "served": entry.get("id"), "on_bench": alias,
                         "facts": onboard.facts_from(entry)})
    return Response.json({"candidates": rows, "errors": errors, "new_only": only_new})


ROUTES = [
    Route("GET", "/bench/endpoints", list_endpoints, "bench", ADMIN),
    Route("POST", "/bench/endpoints", add_endpoint, "bench", ADMIN),
    Route("DELETE", "/bench/endpoints/{name}", remove_endpoint, "bench", ADMIN),
    Route("GET", "/bench/candidates", candidates, "bench", ADMIN),
]
