"""The Settings page's section "Use your own app": the client id (and, for renewing tokens, the client secret) of
an app the user registered with a provider that signs in only that way (Hugging Face, GitHub), through
PUT /bench/connect/{provider}/app. With one set, the provider's entry on the Endpoints page signs in."""
from __future__ import annotations

from typing import Protocol

from ..api.connect import ProvidersParts, providers_view
from ..server.messages import Request
from .apicall import call
from .markup import Html, html, trusted
from .signin import own_origin
from .web import Done, Form, Frame
from .widgets import chip, csrf, external


class OwnAppsParts(ProvidersParts, Protocol):
    """The providers that need the user's own app, and the address a sign-in comes back to."""

    @property
    def url(self) -> str: ...


FLOWS = {"oauth": "sign-in in your browser, back to this service's callback",
         "device": "a code you approve on the provider's site (works from another machine too)"}


def read(req: Request, bench: OwnAppsParts) -> dict:
    providers = [p for p in providers_view(bench)["providers"] if p.get("app")]
    return {"providers": providers, "origin": own_origin(req, bench)}


INTRO = trusted('<p class="muted">Hugging Face and GitHub let an app sign in only once it is registered with them. '
                "Register your own (it stays yours; the client id is kept in the data folder, a client secret in "
                "keys.json), give its client id here, and the Endpoints page signs in with it.</p>")
APP_FORM = """<form method="post" action="/settings/apps/$pid" class="stack app-form" data-provider="$pid" \
autocomplete="off">$csrf<h3>$name $state</h3><p class="reason">$flow. $why $register</p>$callback\
<label for="app-$pid">Client id</label>\
<input id="app-$pid" name="client_id" type="text" spellcheck="false" value="$client_id">\
<label for="app-secret-$pid">Client secret <span class="muted">(only if renewing needs it; kept in keys.json, never \
shown)</span></label><input id="app-secret-$pid" name="client_secret" type="password" autocomplete="new-password">\
<div class="form-end"><button type="submit">Use this app</button> $forget</div></form>"""


def show(d: dict, frame: Frame) -> Html:
    return html("$intro$forms", intro=INTRO, forms=[app_form(p, d["origin"], frame) for p in d["providers"]])


def app_form(p: dict, origin: str, frame: Frame) -> Html:
    app, pid = p["app"], p["id"]
    callback = ""
    if app["flow"] == "oauth":
        callback = html('<p>Redirect URL to register: <code id="callback-$pid">$url</code> (the address you reach this '
                        "dashboard at).</p>", pid=pid, url=f"{origin}/connect/{pid}/callback")
    forget = trusted('<button type="submit" name="forget" value="1" class="secondary small">Forget this app</button>') \
        if app["client_id"] else ""
    return html(APP_FORM, pid=pid, csrf=csrf(frame), name=p["name"],
                state=chip("active", "set") if app["client_id"] else chip("none", "not set"),
                flow=FLOWS.get(app["flow"], app["flow"]), why=app["why"],
                register=external(app["page"], "Register an app"),
                callback=callback, client_id=frame.typed("client_id", app["client_id"] or ""), forget=forget)


def save(req: Request, bench: object, form: Form) -> Done:
    pid = req.params["provider"]
    body: dict[str, str | None] = {"client_id": None} if form.flag("forget") else \
        {"client_id": form.get("client_id").strip() or None}
    if form.get("client_secret").strip() and not form.flag("forget"):
        body["client_secret"] = form.get("client_secret").strip()
    d = call(req, "PUT", f"/bench/connect/{pid}/app", body)
    name = d["provider"]["name"]
    if not d["app"]["client_id"]:
        return Done(f"Forgot your {name} app: it is a pasted key again.", "/settings#apps", d)
    return Done(f"{name} now signs in with your app: use its Sign in button on the Endpoints page.",
                "/settings#apps", d)
