"""Admin API for endpoints and candidates: add (checked by listing models first; a hub's admin key by reading its
sources), list, remove, what they serve, and a hub's sources."""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from .. import hubs, keys
from ..baseurls import resolves_link_local
from ..catalog import Catalog
from ..errors import BadRequest, BenchError, ConfigError, Conflict, UpstreamFailed, key_env
from ..providers import Timeouts, make_provider
from ..redaction import key_problem, remember
from ..roster import health, healthrecord, onboard
from ..roster.limits.resting import Resting
from ..roster.registry import Endpoint, Registry, new_endpoint, refuse_link_local
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..signin import renewal
from ..store import Config, Database
from .parts import ProviderLookup

if TYPE_CHECKING:
    from ..bench import Bench


class EndpointViewParts(Protocol):
    """An endpoint as the API shows it: its config, its health record, what rests on its limits."""
    config: Config
    db: Database
    registry: Registry
    resting: Resting


class RegisterParts(EndpointViewParts, Protocol):
    """Adding an endpoint (a hub's sources checked first), as the API and a finished sign-in do."""

    def provider_at(self, base_url: str) -> str | None: ...


class CandidatesParts(Protocol):
    """What the endpoints serve, beside the catalog's facts."""
    catalog: Catalog
    registry: Registry


TRUE = ("1", "true", "yes", "on")


def key_source(endpoint: Endpoint) -> str:
    """Where the key comes from: environment, keys.json, none (local server) or missing; never the key."""
    if endpoint.no_key:
        return "none"
    return endpoint.key()[1] or "missing"


def endpoint_view(bench: EndpointViewParts, endpoint: Endpoint, flags: dict | None = None) -> dict:
    """An endpoint with its health: `state` says ok, key refused, or resting until T (`flags`: read once)."""
    reg = bench.registry
    on_bench = [m for m in reg.models().values() if m.endpoint == endpoint.name]
    extra = reg.endpoint_extra(endpoint.name)
    return {"name": endpoint.name, "base_url": endpoint.base_url, "api": endpoint.api, "no_key": endpoint.no_key,
            "key_source": key_source(endpoint), "key_env": key_env(endpoint.name), "hub": endpoint.hub,
            "admin_key_source": (keys.get(hubs.admin_name(endpoint.name))[1] or "missing") if endpoint.hub else None,
            "models": len(on_bench), "active_models": sum(1 for m in on_bench if m.active),
            "served_count": extra.get("served_count"), "checked": extra.get("checked"),
            "signin": renewal.view(bench.config, endpoint.name),
            **healthrecord.endpoint_state(bench.db, bench.resting, endpoint.name, flags)}


def endpoints_view(bench: EndpointViewParts) -> dict:
    """Every endpoint, by name, with where its key comes from (never the key) and its health flags."""
    reg, flags = bench.registry, healthrecord.flags(bench.db)
    return {"endpoints": [endpoint_view(bench, e, flags) for _, e in sorted(reg.endpoints().items())]}


def list_endpoints(req: Request, bench: EndpointViewParts) -> Response:
    return Response.json(endpoints_view(bench))


def endpoint_from(body: dict) -> Endpoint:
    """The endpoint a body asks for, checked; one at a link-local or cloud metadata address (as written, or as its
    name resolves now) only with allow_link_local: true."""
    allow = body.get("allow_link_local", False)
    if not isinstance(allow, bool):
        raise BadRequest("allow_link_local must be true or false.")
    endpoint = new_endpoint(body.get("name"), body.get("base_url"), body.get("api") or "openai",
                            bool(body.get("no_key")), hubs.check_kind(body.get("hub")), allow)
    if not allow:
        refuse_link_local(endpoint.base_url, resolves_link_local(endpoint.base_url))
    return endpoint


def admin_key_for(body: dict, endpoint: Endpoint) -> tuple[str | None, bool]:
    """(a hub's admin key, whether it is new and must be stored): from the body, else env or keys.json."""
    if not endpoint.hub:
        if body.get("admin_key"):
            raise BadRequest("An admin key is for a hub.", f"Add --hub {hubs.CHOICES}, or leave it out.")
        return None, False
    given = body.get("admin_key")
    if given is not None and not isinstance(given, str):
        raise BadRequest("admin_key must be a string.")
    given = (given or "").strip()
    if given:
        problem = key_problem(given)
        if problem:
            raise BadRequest(f"That admin key cannot be used: {problem}.", "Paste the key alone, on one line.")
        remember(given)
        return given, True
    existing = keys.get(hubs.admin_name(endpoint.name))[0]
    if existing:
        return existing, False
    raise BadRequest(f"Hub {endpoint.name!r} needs its admin key (apart from its API key).",
                     f"`bench endpoint add {endpoint.name} --base URL --hub {endpoint.hub}` prompts for it (or "
                     f"--admin-key-stdin); or set {key_env(hubs.admin_name(endpoint.name))}.")


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
        remember(given)   # from here on, redaction knows it
        return given, True
    existing, _ = keys.get(endpoint.name)
    if existing:
        return existing, False
    raise BadRequest(f"No key for endpoint {endpoint.name!r}.",
                     f"`bench endpoint add {endpoint.name} --base URL` prompts for one (or --key-stdin); set "
                     f"{key_env(endpoint.name)}; or pass --no-key for a local server.")


def keep_flag(body: dict) -> bool:
    keep = body.get("keep_key", False)
    if not isinstance(keep, bool):
        raise BadRequest("keep_key must be true or false.")
    return keep


def keep_stored_key(old: Endpoint | None, new: Endpoint, key: str | None, new_key: bool, keep: bool) -> None:
    """A stored key goes to a new base URL only when the caller says so: whoever may change the URL must not get the
    key sent to a server of their choosing by leaving the key out."""
    if old and key and not new_key and old.base_url != new.base_url and not keep:
        raise BadRequest(f"The base URL of {new.name!r} changes from {old.base_url} to {new.base_url}; its stored "
                         "key is not sent to a new URL unless you say so.",
                         f"Give the key again (`bench endpoint add {new.name} --base {new.base_url} --replace` "
                         "prompts for it), or confirm that this URL may have it with keep_key: true (--keep-key).")


def add_endpoint(req: Request, bench: RegisterParts) -> Response:
    body = req.json()
    endpoint = endpoint_from(body)
    reg = bench.registry
    old = reg.endpoints().get(endpoint.name)
    if old and not body.get("replace"):
        raise Conflict(f"Endpoint {endpoint.name!r} exists.",
                       "Add --replace to change its URL, protocol or key, or pick another name.")
    key, new_key = key_for(body, endpoint)
    admin = admin_key_for(body, endpoint)
    return Response.json({"endpoint": register(bench, endpoint, key, new_key, keep_flag(body), admin)}, 201)


def register(bench: RegisterParts, endpoint: Endpoint, key: str | None, new_key: bool, keep_key: bool = False,
             admin: tuple = (None, False)) -> dict:
    """Check the endpoint by listing its models with `key` (a hub's admin key by reading its sources), save it, and
    store a new key in keys.json; its view (never the key). Provider sign-in (api/connect.py) adds endpoints
    through this too: a changed base URL needs the key given again there as well, or `keep_key`."""
    reg = bench.registry
    problem = key_problem(key) if new_key else None    # pasted or got by a sign-in: both come through here
    if problem:
        raise BadRequest(f"That key cannot be used: {problem}.", "Give the key alone, on one line.")
    keep_stored_key(reg.endpoints().get(endpoint.name), endpoint, key, new_key, keep_key)
    if endpoint.hub:     # the admin key, like the key, goes to a new URL only when the caller says so
        keep_stored_key(reg.endpoints().get(endpoint.name), endpoint, admin[0], admin[1], keep_key)
    served = check_endpoint(endpoint, key)
    found = check_hub(bench, endpoint, admin[0]) if endpoint.hub else None
    extra = {"served_count": len(served), "checked": time.time()}
    reg.save_endpoint(endpoint, extra)
    reg.note_listing(endpoint, served)
    if found is not None:
        reg.note_sources(endpoint, [s.provider for s in found if s.provider])
    healthrecord.clear(bench.db, endpoint.name)   # its key was just accepted: a "key refused" flag is old news
    if new_key or admin[1]:
        try:
            if new_key and key is not None:    # (checked above: a new key is there)
                keys.store(endpoint.name, key)
            if admin[1]:
                keys.store(hubs.admin_name(endpoint.name), admin[0])
        except ConfigError:     # keys.json does not parse: nothing half-registered, and the error names its line
            reg.remove_endpoint(endpoint.name)
            raise
        except OSError as e:    # nothing half-registered: take the endpoint back out
            reg.remove_endpoint(endpoint.name)
            raise BadRequest(f"Could not write keys.json: {type(e).__name__}.",
                             f"Check {keys.keys_file()} is writable, or set {key_env(endpoint.name)}.") from None
    if new_key:     # a new key is no sign-in's token to renew (a sign-in keeps its grant after this)
        renewal.forget(bench.config, endpoint.name)
    view = endpoint_view(bench, endpoint)
    view["sample"] = [m.get("id") for m in served[:10]]
    if found is not None:
        view["sources"] = [s.to_dict() for s in found]
    return view


def check_hub(bench: ProviderLookup, endpoint: Endpoint, admin_key: str | None, doing: str = "was not added") -> list:
    """A hub's sources read with its admin key, before anything is saved: the key works and the kind is right."""
    try:
        return hubs.sources(hubs.adapter(endpoint, admin_key), bench.provider_at)
    except UpstreamFailed as e:
        raise UpstreamFailed(e.kind, f"Endpoint {endpoint.name!r} {doing}: {e.message}", e.hint,
                             upstream_status=e.upstream_status) from None


def hub_sources(req: Request, bench: RegisterParts) -> Response:
    """A hub endpoint's sources, read from its admin API now: the upstreams a new model can come from."""
    endpoint = bench.registry.endpoint(req.params["name"])
    if not endpoint.hub:
        raise BadRequest(f"Endpoint {endpoint.name!r} is not a hub.",
                         f"Add it again with --hub {hubs.CHOICES} (bench endpoint add {endpoint.name} "
                         f"--base {endpoint.base_url} --hub KIND --replace).")
    found = check_hub(bench, endpoint, None, "could not be read")
    bench.registry.note_sources(endpoint, [s.provider for s in found if s.provider])
    return Response.json({"endpoint": endpoint.name, "hub": endpoint.hub, "sources": [s.to_dict() for s in found]})


def check_endpoint(endpoint: Endpoint, key: str | None, doing: str = "was not added") -> list[dict]:
    """List its models with the key given, before anything is saved."""
    provider = make_provider(endpoint.api, endpoint.base_url, key, name=endpoint.name)
    try:
        return provider.list_models(timeouts=onboard.LIST_TIMEOUTS)
    except UpstreamFailed as e:
        raise health.explain(e, endpoint, f"Endpoint {endpoint.name!r} {doing}: listing its models failed") from None


def test_endpoint(req: Request, bench: EndpointViewParts) -> Response:
    """List an endpoint's models with its key now; the count and time are kept beside it."""
    reg = bench.registry
    endpoint = reg.endpoint(req.params["name"])
    key = endpoint.key()[0]
    if not endpoint.no_key and not key:
        raise BadRequest(f"No key for endpoint {endpoint.name!r}.",
                         f"Set {key_env(endpoint.name)}, or add it again with its key.")
    served = check_endpoint(endpoint, key, "failed its test")
    reg.save_endpoint(endpoint, {"served_count": len(served), "checked": time.time()})
    reg.note_listing(endpoint, served)
    view = endpoint_view(bench, endpoint)
    view["sample"] = [m.get("id") for m in served[:10]]
    return Response.json({"endpoint": view, "ok": True})


def ollama_base(host: str | None) -> str:
    """Where a local Ollama listens: OLLAMA_HOST as Ollama reads it (host, host:port or a URL), else its default."""
    host = (host or "").strip() or "127.0.0.1:11434"
    split = urlsplit(host if "://" in host else "http://" + host)
    name = split.hostname or "127.0.0.1"
    name = "127.0.0.1" if name in ("0.0.0.0", "localhost", "::", "") else name
    name = f"[{name}]" if ":" in name else name
    return f"{split.scheme or 'http'}://{name}:{split.port or 11434}"


def same_server(a: str, b: str) -> bool:
    def where(url: str):
        s = urlsplit(url)
        host = "127.0.0.1" if s.hostname in ("localhost", "0.0.0.0") else s.hostname
        return host, s.port or (443 if s.scheme == "https" else 80)
    return where(a) == where(b)


def local_servers_view(bench: EndpointViewParts) -> dict:
    """Model servers answering on this machine (a local Ollama), and the endpoint that already uses each."""
    base = ollama_base(os.environ.get("OLLAMA_HOST"))
    found = {"api": "ollama", "name": "ollama", "base_url": base, "answering": False, "models": None,
             "endpoint": next((e.name for e in bench.registry.endpoints().values()
                               if same_server(e.base_url, base)), None)}
    try:
        listed = make_provider("ollama", base, None).list_models(timeouts=Timeouts(connect=0.5, first_byte=2, idle=2))
        found.update(answering=True, models=len(listed))
    except BenchError:
        pass
    return {"servers": [found]}


def local_servers(req: Request, bench: EndpointViewParts) -> Response:
    return Response.json(local_servers_view(bench))


def remove_endpoint(req: Request, bench: EndpointViewParts) -> Response:
    """Its models are retired (restorable once it is back); its key stays in keys.json, shared with llm."""
    reg = bench.registry
    endpoint = reg.endpoint(req.params["name"])
    retired = [m.alias for m in list(reg.models().values()) if m.endpoint == endpoint.name and m.active]
    for alias in retired:
        health.retire(reg, alias, f"its endpoint {endpoint.name!r} was removed")
    reg.remove_endpoint(endpoint.name)
    healthrecord.clear(bench.db, endpoint.name)
    renewal.forget(bench.config, endpoint.name)
    forget_admin_key(endpoint.name)
    note = None
    if key_source(endpoint) == "keys.json":
        note = (f"Its key stays in {keys.keys_file()} (shared with the llm CLI); "
                f"remove it there (`llm keys`) if nothing else uses it.")
    return Response.json({"removed": endpoint.name, "retired": retired, "note": note})


def forget_admin_key(name: str) -> None:
    """A removed hub's admin key goes with it (it is this service's alone, unlike the key the llm CLI shares): an
    endpoint added later under that name, at another address, must not be sent it."""
    try:
        keys.delete(hubs.admin_name(name))
    except BenchError:      # keys.json does not parse: the removal stands, and status names the file
        pass


def candidates_view(bench: CandidatesParts, only_new: bool = False) -> dict:
    """What each endpoint serves, marked with the alias when it is already on the bench."""
    reg = bench.registry
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
            facts = onboard.facts_from(entry)
            pid, sourced = bench.catalog.lookup(reg.endpoint(name), str(entry.get("id") or ""), facts)
            rows.append({"endpoint": name, "served": entry.get("id"), "on_bench": alias, "facts": facts,
                         "catalog": {"provider": pid, "facts": sourced}})
    return {"candidates": rows, "errors": errors, "new_only": only_new}


def candidates(req: Request, bench: CandidatesParts) -> Response:
    return Response.json(candidates_view(bench, req.query.get("new", "").lower() in TRUE))


ENDPOINT = obj(("name", "base_url", "api", "key_source"), name=STRING, base_url=STRING, api=STRING,
               key_source=STRING)
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/endpoints", list_endpoints, "bench", ADMIN, doc=op(
        "Every endpoint, with where its key comes from (never the key).",
        ok=obj(("endpoints",), endpoints={"type": "array", "items": ENDPOINT}))),
    Route("POST", "/bench/endpoints", add_endpoint, "bench", ADMIN, doc=op(
        "Add (or with replace, change) an endpoint, checked by listing its models before anything is saved (a "
        "hub's admin key by reading its sources). A changed base URL needs the key again, or keep_key: true; one "
        "at a link-local or cloud metadata address needs allow_link_local: true.", status=201,
        body=obj(("name", "base_url"), name=STRING, base_url=STRING, api=STRING, key={"type": ["string", "null"]},
                 no_key={"type": "boolean"}, replace={"type": "boolean"}, keep_key={"type": "boolean"},
                 hub={"type": ["string", "null"]}, admin_key={"type": ["string", "null"]},
                 allow_link_local={"type": "boolean"}),
        ok=obj(("endpoint",), endpoint=ENDPOINT))),
    Route("DELETE", "/bench/endpoints/{name}", remove_endpoint, "bench", ADMIN, doc=op(
        "Remove an endpoint; its models are retired.", ok=obj(("removed", "retired"), removed=STRING))),
    Route("POST", "/bench/endpoints/{name}/test", test_endpoint, "bench", ADMIN, doc=op(
        "List an endpoint's models with its key now; the count and time are kept beside it.",
        ok=obj(("endpoint", "ok"), endpoint=ENDPOINT, ok={"type": "boolean"}))),
    Route("GET", "/bench/endpoints/{name}/hub", hub_sources, "bench", ADMIN, doc=op(
        "A hub endpoint's sources, read from its admin API now: the upstreams a new model can come from.",
        ok=obj(("endpoint", "hub", "sources"), endpoint=STRING, hub=STRING, sources={"type": "array"}))),
    Route("GET", "/bench/local-servers", local_servers, "bench", ADMIN, doc=op(
        "Model servers answering on this machine (a local Ollama), and the endpoint that already uses each.",
        ok=obj(("servers",), servers={"type": "array"}))),
    Route("GET", "/bench/candidates", candidates, "bench", ADMIN, doc=op(
        "What each endpoint serves, marked when already on the bench.", query={"new": STRING},
        ok=obj(("candidates", "errors"), candidates={"type": "array"}, errors={"type": "array"}))),
]
