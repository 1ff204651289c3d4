"""GET /bench/connect: the providers to sign in to or paste a key for, and how a finished sign-in went;
PUT /bench/connect/{provider}/app: the user's own app for a provider that needs one; the steps the browser's
sign-in routes (dashboard/signin.py) share: the provider, the endpoint name, adding the endpoint."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from ..errors import BadRequest, BenchError, Conflict, NotFound, key_env
from ..redaction import redact
from ..roster.registry import Endpoint, check_endpoint_name
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..signin import ownapps, renewal, vendors
from ..signin.appflow import Grant
from ..signin.flows import Flows
from ..signin.vendors import LOCAL, PASTE, Vendor
from ..store import Config
from ..words import plural
from .endpoints import EndpointViewParts, RegisterParts, register

if TYPE_CHECKING:
    from ..bench import Bench


class ProvidersParts(Protocol):
    """The providers to sign in to (a user's own app is in config), and the sign-ins under way."""
    config: Config
    signins: Flows


class ConnectParts(RegisterParts, Protocol):
    """A sign-in's end: the provider, the endpoint's name, the endpoint added."""
    signins: Flows


log = logging.getLogger("benchwarmers.signin.flows")


def providers_view(bench: ProvidersParts, result: str | None = None) -> dict:
    """Every provider entry; with a sign-in's `result` id also how that sign-in went (null once forgotten)."""
    d: dict = {"providers": vendors.entries(ownapps.client_ids(bench.config))}
    if result is not None:
        d["result"] = bench.signins.result(result)
    return d


def list_providers(req: Request, bench: ProvidersParts) -> Response:
    return Response.json(providers_view(bench, req.query.get("result")))


def put_app(req: Request, bench: ProvidersParts) -> Response:
    """Keep the client id (and, for renewing, the client secret) of the user's app for a provider; a null or
    empty client_id forgets it. The provider's entry then signs in with it."""
    body = req.json()
    extra = sorted(set(body) - {"client_id", "client_secret"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "Send client_id and, if the app has one, "
                                                                   "client_secret.")
    app = ownapps.set_app(bench.config, req.params["provider"], body.get("client_id"), body.get("client_secret"))
    return Response.json({"app": app, "provider": known(req.params["provider"], bench).entry()})


def known(provider_id: str, bench: ProvidersParts | None = None) -> Vendor:
    provider = vendors.get(provider_id, ownapps.client_ids(bench.config) if bench else None)
    if provider is None:
        raise NotFound(f"No provider {provider_id!r}.",
                       "GET /bench/connect lists them: " + ", ".join(p["id"] for p in vendors.entries()) + ".")
    return provider


def can_sign_in(provider: Vendor) -> None:
    """A paste or local entry has no sign-in: the refusal says how to add it instead."""
    if provider.kind == PASTE and provider.own_app:
        raise BadRequest(f"{provider.name} signs in only with your own app: {provider.why}",
                         f"Register one ({provider.app_page}) and give its client id in Settings, \"Use your own "
                         f"app\" (or PUT /bench/connect/{provider.id}/app); or make a key at {provider.key_page} "
                         f"and add it: bench endpoint add {provider.id} --base {provider.base_url}")
    if provider.kind == PASTE:
        raise BadRequest(f"{provider.name} has no sign-in this service can use: {provider.why}",
                         f"Make a key at {provider.key_page} and add it: bench endpoint add {provider.id} "
                         f"--base {provider.base_url} --api {provider.api}")
    if provider.kind == LOCAL:
        raise BadRequest(f"{provider.name} takes no sign-in: it needs no key.",
                         "The Endpoints page adds it in one click while it answers (or: bench endpoint add "
                         f"{provider.id} --base {provider.base_url} --api {provider.api} --no-key).")


def endpoint_name(bench: EndpointViewParts, provider: Vendor, given: str | None) -> tuple[str, bool]:
    """(the endpoint name, whether an endpoint of that name for this same provider gets its key replaced);
    a name taken by an endpoint elsewhere is a conflict."""
    name = check_endpoint_name((given or "").strip() or provider.id)
    found = bench.registry.endpoints().get(name)
    if found is None:
        return name, False
    if found.base_url.rstrip("/") == provider.base_url.rstrip("/") and found.api == provider.api:
        return name, True
    raise Conflict(f"Endpoint {name!r} exists and points at {found.base_url}.",
                   "Give this sign-in another endpoint name, or remove that endpoint first.")


def finish(bench: ConnectParts, provider: Vendor, name: str, key: str, replace: bool,
           grant: Grant | None = None) -> str:
    """Add the endpoint with the key a sign-in got (checked by listing its models, the key to keys.json; a
    grant's refresh token beside it and its expiry in signins.json); the id of the result kept for the page the
    browser lands on."""
    try:
        if not replace and name in bench.registry.endpoints():
            raise Conflict(f"Endpoint {name!r} was added while the sign-in ran.",
                           "Sign in again under another endpoint name.")
        view = register(bench, Endpoint(name, provider.base_url, provider.api), key, new_key=True)
        if grant is not None:      # register forgot any earlier sign-in of this endpoint: this one's grant now
            renewal.keep(bench.config, name, provider.id, grant)
    except BenchError as err:
        return record(bench, failure(provider, str(err)))
    message = f"{provider.name} connected: endpoint {name} serves {plural(view.get('served_count'), 'model')}."
    if view.get("key_source") == "environment":
        message += (f" {key_env(name)} is set in this service's environment, so that key is used, "
                    "not the new one in keys.json.")
    if provider.note:
        message += " " + provider.note
    return record(bench, {"ok": True, "provider": provider.id, "endpoint": name, "message": message})


def failure(provider: Vendor, message: str) -> dict:
    return {"ok": False, "provider": provider.id, "endpoint": None, "message": redact(message)}


def record(bench: ProvidersParts, result: dict) -> str:
    log.info("sign-in to %s %s", result["provider"], "succeeded" if result["ok"] else "failed")
    return bench.signins.finish(result)


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/connect", list_providers, "bench", ADMIN, dashboard_only=True, doc=op(
        "The providers one can sign in to or paste a key for, and a finished sign-in's result (`result`).",
        query={"result": STRING}, ok=obj(("providers",), providers={"type": "array"}))),
    Route("PUT", "/bench/connect/{provider}/app", put_app, "bench", ADMIN, dashboard_only=True, doc=op(
        "Set (or with a null client_id, forget) the client id of your own app for a provider that signs in "
        "only with one (Hugging Face, GitHub); a client secret goes to keys.json.",
        body=obj((), client_id={"type": ["string", "null"]}, client_secret={"type": ["string", "null"]}),
        ok=obj(("app", "provider"), app={"type": "object"}, provider={"type": "object"})))]
