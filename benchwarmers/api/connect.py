"""Provider sign-in routes: start a flow, take the provider's callback (or wait on a device approval), add the endpoint."""
from __future__ import annotations

import logging
import time
from urllib.parse import quote, urlsplit

from .. import connect, keys, signin
from ..connect import DEVICE, HANDOFF, LOCAL, PASTE, Provider
from ..dashboard.render import e, page
from ..errors import BadRequest, BenchError, Conflict, NotFound
from ..health import registry
from ..registry import Endpoint, check_name
from ..server.context import Context
from ..server.messages import Request, Response
from ..server.routes import ADMIN, PUBLIC, Route
from .endpoints import register

log = logging.getLogger("benchwarmers.signin")
COOKIE = "bw_signin"      # binds a flow to the browser that started it; sent only to that flow's landing path


def list_providers(req: Request, ctx: Context) -> Response:
    """Every provider entry; with ?result=ID also how that finished sign-in went (the callback's redirect)."""
    d = {"providers": connect.entries()}
    if "result" in req.query:
        d["result"] = signin.flows(ctx).result(req.query["result"])
    return Response.json(d)


def known(provider_id: str) -> Provider:
    provider = connect.get(provider_id)
    if provider is None:
        raise NotFound(f"No provider {provider_id!r}.",
                       "GET /bench/connect lists them: " + ", ".join(p["id"] for p in connect.entries()) + ".")
    return provider


# ---- start ------------------------------------------------------------------------------------------------

def start(req: Request, ctx: Context) -> Response:
    """POST /connect/{provider} (a form; optional field `name`): off to the provider, or straight in for a local one."""
    provider = known(req.params["provider"])
    if provider.kind == PASTE:
        raise BadRequest(f"{provider.name} has no sign-in this service can use: {provider.why}",
                         f"Make a key at {provider.key_page} and add it: bench endpoint add {provider.id} "
                         f"--base {provider.base_url} --api {provider.api}")
    name = check_name((req.form().get("name") or "").strip() or provider.id, "Endpoint name")
    replace = reusable(ctx, provider, name)
    if provider.kind == LOCAL:
        return finish(ctx, provider, name, None, None)
    flow, origin = signin.Flow(provider.id, provider.flow, name, replace), own_origin(req, ctx)
    if provider.flow == DEVICE:
        signin.device_start(provider, flow)
        location = flow.landing
    else:
        location = signin.auth_redirect(provider, flow, origin)
    signin.flows(ctx).add(flow)
    log.info("sign-in to %s started for endpoint %s", provider.id, name)
    secure = "; Secure" if origin.startswith("https:") else ""
    cookie = (f"{COOKIE}={flow.binding}; Path={flow.landing}; Max-Age={int(flow.expires - time.time()) + 1}; "
              f"HttpOnly; SameSite=Lax{secure}")   # Lax: sent when the provider sends the browser back
    return Response(303, b"", {"Location": location, "Set-Cookie": cookie, "Cache-Control": "no-store"})


def reusable(ctx: Context, provider: Provider, name: str) -> bool:
    """Whether an endpoint of that name exists for this same provider (signing in again replaces its key);
    a name taken by another endpoint is a conflict."""
    found = registry(ctx).endpoints().get(name)
    if found is None:
        return False
    if found.base_url.rstrip("/") == provider.base_url.rstrip("/") and found.api == provider.api:
        return True
    raise Conflict(f"Endpoint {name!r} exists and points at {found.base_url}.",
                   "Give this sign-in another endpoint name, or remove that endpoint first.")


def own_origin(req: Request, ctx: Context) -> str:
    """The origin the browser uses for this service (the guard checked it is ours): the callback goes there."""
    origin = (req.headers.get("origin") or "").rstrip("/")
    if urlsplit(origin).scheme in ("http", "https") and urlsplit(origin).netloc:
        return origin
    host = req.headers.get("host")
    return f"http://{host}" if host else ctx.url


# ---- the way back -----------------------------------------------------------------------------------------

def callback(req: Request, ctx: Context) -> Response:
    """GET /connect/{provider}/callback/{state}?code=...: public, because the browser arrives from the provider's
    site and SameSite=Strict keeps the session cookie off that request; the unguessable state (made by an
    admin's start request, used once) and the binding cookie of the browser that started it stand in for it."""
    provider = known(req.params["provider"])
    flow = claim(req, ctx, provider, HANDOFF)
    if provider.echoes_state and req.query.get("state", flow.state) != flow.state:
        raise refused("The state sent back does not match this sign-in.")
    if req.query.get("error") or not req.query.get("code"):
        why = req.query.get("error_description") or req.query.get("error") or "it sent no code back"
        return done(ctx, flow, failure(provider, f"{provider.name} did not approve the sign-in: "
                                                 f"{keys.redact(why[:200])}."))
    try:
        key = signin.exchange_code(provider, req.query["code"], flow.verifier)
    except BenchError as err:
        return done(ctx, flow, failure(provider, str(err)))
    return finish(ctx, provider, flow.endpoint, key, flow)


def wait(req: Request, ctx: Context) -> Response:
    """GET /connect/{provider}/wait/{state}: a device sign-in; each visit asks the provider (no more often than
    it allows) and the page reloads itself until the user approved, denied, or the flow expired."""
    provider = known(req.params["provider"])
    flow = claim(req, ctx, provider, DEVICE)
    key = None
    if time.time() - flow.polled >= flow.device["interval"]:
        try:
            key = signin.device_poll(provider, flow)
        except BenchError as err:
            return done(ctx, flow, failure(provider, str(err)))
    if key:
        return finish(ctx, provider, flow.endpoint, key, flow)
    signin.flows(ctx).put_back(flow)
    return waiting_page(req, ctx, provider, flow)


def claim(req: Request, ctx: Context, provider: Provider, kind: str) -> signin.Flow:
    """The flow this state names, taken out so it works once; refused unless this service started it for this
    provider, it has not expired, and this is the browser that started it."""
    flows = signin.flows(ctx)
    flow = flows.take(req.params["state"])
    if flow is None or flow.provider != provider.id or flow.kind != kind:
        raise refused("This sign-in was not started by this service, or it has already finished.")
    if flow.expired:
        raise refused(f"This sign-in expired: it has to finish within {signin.FLOW_SECONDS // 60} minutes.")
    if not flow.bound_to(req.cookie(COOKIE)):
        flows.put_back(flow)
        raise refused("This sign-in was started in another browser.")
    return flow


def refused(why: str) -> BadRequest:
    return BadRequest(why, "Start the sign-in again from the dashboard.", code="signin_refused")


def finish(ctx: Context, provider: Provider, name: str, key: str | None, flow: signin.Flow | None) -> Response:
    """Add the endpoint (checked by listing its models, the key to keys.json) and go home with the result."""
    endpoint = Endpoint(name, provider.base_url, provider.api, no_key=provider.kind == LOCAL)
    try:
        if flow is not None and not flow.replace and name in registry(ctx).endpoints():
            raise Conflict(f"Endpoint {name!r} was added while the sign-in ran.",
                           "Sign in again under another endpoint name.")
        view = register(ctx, endpoint, key, new_key=key is not None)
    except BenchError as err:
        return done(ctx, flow, failure(provider, str(err)))
    message = f"{provider.name} connected: endpoint {name} serves {view.get('served_count')} models."
    if view.get("key_source") == "environment":
        message += (f" {keys.env_name(name)} is set in this service's environment, so that key is used, "
                    "not the new one in keys.json.")
    if provider.note:
        message += " " + provider.note
    return done(ctx, flow, {"ok": True, "provider": provider.id, "endpoint": name, "message": message})


def failure(provider: Provider, message: str) -> dict:
    return {"ok": False, "provider": provider.id, "endpoint": None, "message": keys.redact(message)}


def done(ctx: Context, flow: signin.Flow | None, result: dict) -> Response:
    """303 to / with the result's id (the page shows it; GET /bench/connect?result=ID gives it as JSON)."""
    log.info("sign-in to %s %s", result["provider"], "succeeded" if result["ok"] else "failed")
    rid = signin.flows(ctx).finish(result)
    headers = {"Location": "/?signin=" + quote(rid), "Cache-Control": "no-store"}
    if flow is not None:
        headers["Set-Cookie"] = f"{COOKIE}=; Path={flow.landing}; Max-Age=0; HttpOnly; SameSite=Lax"
    return Response(303, b"", headers)


def waiting_page(req: Request, ctx: Context, provider: Provider, flow: signin.Flow) -> Response:
    d = flow.device
    body = (f'<section class="card"><p>Approve this sign-in at {e(provider.name)}: open '
            f'<a href="{e(d["verify_url"])}" target="_blank" rel="noopener noreferrer">{e(d["verify_url"])}</a> '
            f'and check that it shows the code <strong><code>{e(d["user_code"])}</code></strong>.</p>'
            f'<p>This page checks again every {d["interval"]} seconds and moves on once you have approved '
            f'(for up to {signin.FLOW_SECONDS // 60} minutes). <a href="{e(flow.landing)}">Check now</a> · '
            f'<a href="/">Cancel</a></p></section>')
    resp = page(f"Sign in to {provider.name}", body, version=ctx.version, path="/",
                show_logout=bool(ctx.admin_token))
    resp.headers.update({"Refresh": str(d["interval"]), "Cache-Control": "no-store"})
    return resp


ROUTES = [
    Route("GET", "/bench/connect", list_providers, "bench", ADMIN, dashboard_only=True),
    Route("POST", "/connect/{provider}", start, "html", ADMIN, dashboard_only=True),
    Route("GET", "/connect/{provider}/callback/{state}", callback, "html", PUBLIC, dashboard_only=True),
    Route("GET", "/connect/{provider}/wait/{state}", wait, "html", ADMIN, dashboard_only=True),
]
