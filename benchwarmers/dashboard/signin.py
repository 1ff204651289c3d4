"""Provider sign-in in the browser: POST /connect/{provider} starts it, the provider's callback (or the device
sign-in's wait page) finishes it, and the browser lands on /endpoints?signin=ID, where the result shows. A sign-in
with the user's own app (signin/appflow.py) comes back to the one fixed callback the user registered, with `state` in
its query (dashboard/appsignin.py).

These routes call the sign-in flows (signin/flows.py) and api/connect.py directly, not the admin API: the callback
arrives from the provider's site, so the SameSite=Strict session cookie is not sent and an in-process API call
would be refused. The single-use `state` (made by an admin's start request, 10 minutes at most) and the binding
cookie of the browser that started the flow stand in for the login there, and nothing else is reachable.
The landing page moves on by a Refresh from this service's own page rather than a redirect: a redirect would
still count as the provider's navigation, and the browser would leave the session cookie off /endpoints too.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote, urlsplit

from ..api.connect import ConnectParts, can_sign_in, endpoint_name, failure, finish, known, record
from ..errors import BenchError, SigninRefused
from ..redaction import redact
from ..server.messages import Request, Response
from ..server.routes import ADMIN, PUBLIC, Route
from ..signin import appflow, flows
from ..signin.vendors import DEVICE, HANDOFF, OAUTH, Vendor
from ..words import plural
from .markup import html
from .parts import Address
from .render import page
from .web import Done, Form, Frame, FrameParts, frame
from .widgets import external

if TYPE_CHECKING:
    from ..bench import Bench


class SigninParts(ConnectParts, FrameParts, Address, Protocol):
    """A sign-in from start to end: the provider, the flows under way, the endpoint added, the pages shown."""
    version: str


COOKIE = "bw_signin"      # binds a flow to the browser that started it; sent only to that flow's landing path
RESULT_PAGE = "/endpoints"


def start(req: Request, bench: SigninParts, form: Form) -> Done:
    """POST /connect/{provider} (a dashboard form, CSRF checked; optional field `name`): off to the provider's
    sign-in page, or to this service's wait page for a device sign-in."""
    provider = known(req.params["provider"], bench)
    can_sign_in(provider)
    assert provider.flow is not None     # a sign-in entry (can_sign_in): its flow is named
    name, replace = endpoint_name(bench, provider, form.get("name"))
    flow, origin = flows.Flow(provider.id, provider.flow, name, replace), own_origin(req, bench)
    if provider.flow == DEVICE:
        (appflow.device_start if provider.own_app else flows.device_start)(provider, flow)
        location = flow.landing
    elif provider.flow == OAUTH:
        flow.redirect = origin + flow.landing
        location = appflow.authorize_url(provider, flow)
    else:
        location = flows.auth_redirect(provider, flow, origin)
    bench.signins.add(flow)
    secure = "; Secure" if origin.startswith("https:") else ""
    cookie = (f"{COOKIE}={flow.binding}; Path={flow.landing}; Max-Age={int(flow.expires - time.time()) + 1}; "
              f"HttpOnly; SameSite=Lax{secure}")   # Lax: sent when the provider sends the browser back
    return Done("", location, {"location": location}, headers={"Set-Cookie": cookie, "Cache-Control": "no-store"})


def own_origin(req: Request, bench: Address) -> str:
    """The origin the browser uses for this service (the guard checked it is ours): the callback goes there."""
    origin = (req.headers.get("origin") or "").rstrip("/")
    if urlsplit(origin).scheme in ("http", "https") and urlsplit(origin).netloc:
        return origin
    host = req.headers.get("host")
    return f"http://{host}" if host else bench.url


def callback(req: Request, bench: SigninParts) -> Response:
    """GET /connect/{provider}/callback/{state}?code=...: public (see the module docstring)."""
    provider = known(req.params["provider"], bench)
    flow = claim(req, bench, provider, HANDOFF)
    if provider.echoes_state and req.query.get("state", flow.state) != flow.state:
        raise SigninRefused("The state sent back does not match this sign-in.", "Start the sign-in again.")
    if req.query.get("error") or not req.query.get("code"):
        why = req.query.get("error_description") or req.query.get("error") or "it sent no code back"
        return landing(bench, flow, record(bench, failure(
            provider, f"{provider.name} did not approve the sign-in: {redact(why[:200])}.")))
    try:
        key = flows.exchange_code(provider, req.query["code"], flow.verifier)
    except BenchError as err:
        return landing(bench, flow, record(bench, failure(provider, str(err))))
    return landing(bench, flow, finish(bench, provider, flow.endpoint, key, flow.replace))


def wait(req: Request, bench: SigninParts) -> Response:
    """GET /connect/{provider}/wait/{state}: a device sign-in; each visit asks the provider (no more often than
    it allows) and the page reloads itself until the user approved, denied, or the flow expired."""
    provider = known(req.params["provider"], bench)
    flow = claim(req, bench, provider, DEVICE)
    key = grant = None
    if time.time() - flow.polled >= flow.device["interval"]:
        try:
            if provider.own_app:
                grant = appflow.device_poll(provider, flow)
                key = grant.token if grant else None
            else:
                key = flows.device_poll(provider, flow)
        except BenchError as err:
            return landing(bench, flow, record(bench, failure(provider, str(err))))
    if key:
        return landing(bench, flow, finish(bench, provider, flow.endpoint, key, flow.replace, grant))
    bench.signins.put_back(flow)
    return waiting_page(req, bench, provider, flow)


def claim(req: Request, bench: SigninParts, provider: Vendor, kind: str, state: str | None = None) -> flows.Flow:
    """The flow this state (the path's, unless given) names, taken out so it works once; refused unless this service
    started it for this provider, it has not expired, and this is the browser that started it."""
    flow = bench.signins.take(req.params["state"] if state is None else state)
    again = "Start the sign-in again from the Endpoints page."
    if flow is None or flow.provider != provider.id or flow.kind != kind:
        raise SigninRefused("This sign-in was not started by this service, or it has already finished.", again)
    if flow.expired:
        raise SigninRefused(f"This sign-in expired: it has to finish within {flows.FLOW_SECONDS // 60} minutes.",
                            again)
    if not flow.bound_to(req.cookie(COOKIE)):
        bench.signins.put_back(flow)
        raise SigninRefused("This sign-in was started in another browser.", again)
    return flow


def landing(bench: SigninParts, flow: flows.Flow, rid: str) -> Response:
    """A page of this service that moves on to the result by itself (see the module docstring)."""
    to = f"{RESULT_PAGE}?signin={quote(rid)}"
    body = html('<p>The sign-in has finished. <a href="$to">See how it went</a>.</p>', to=to)
    quiet = Frame(flow.landing, "", signed_in=False)    # no session here, and no new CSRF cookie either
    resp = page("Sign-in finished", body, quiet, nav_items=[], nav="", version=bench.version, json_link="")
    resp.headers.update({"Refresh": f"0; url={to}", "Cache-Control": "no-store",
                         "Set-Cookie": f"{COOKIE}=; Path={flow.landing}; Max-Age=0; HttpOnly; SameSite=Lax"})
    return resp


def waiting_page(req: Request, bench: SigninParts, provider: Vendor, flow: flows.Flow) -> Response:
    d = flow.device
    body = html('<section class="card"><p>Approve this sign-in at $name: open $link and check that it shows the code '
                "<strong><code>$code</code></strong>.</p><p>This page checks again every $every and moves on once you "
                'have approved (for up to $minutes minutes). <a href="$landing">Check now</a> · <a href="$cancel">'
                "Cancel</a></p></section>", name=provider.name, link=external(d["verify_url"], d["verify_url"]),
                code=d["user_code"], every=plural(d["interval"], "second"), minutes=flows.FLOW_SECONDS // 60,
                landing=flow.landing, cancel=RESULT_PAGE)
    resp = page(f"Sign in to {provider.name}", body, frame(req, bench), nav_items=[], nav="",
                version=bench.version, json_link="")
    resp.headers.update({"Refresh": str(d["interval"]), "Cache-Control": "no-store"})
    return resp


ACTIONS = [("/connect/{provider}", start, RESULT_PAGE)]
ROUTES: list[Route[Bench]] = [
    Route("GET", "/connect/{provider}/callback/{state}", callback, "html", PUBLIC, dashboard_only=True),
    Route("GET", "/connect/{provider}/wait/{state}", wait, "html", ADMIN, dashboard_only=True)]
