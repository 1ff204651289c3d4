"""The Settings page's section "Use your own app": the client id (and, for renewing tokens, the client secret) of
an app the user registered with a provider that signs in only that way (Hugging Face, GitHub), through
PUT /bench/connect/{provider}/app. With one set, the provider's entry on the Endpoints page signs in."""
from __future__ import annotations

from ..api.connect import providers_view
from .apicall import call
from .render import e
from .signin import own_origin
from .web import Done
from .widgets import chip, csrf

EXTERNAL = 'target="_blank" rel="noopener noreferrer"'
FLOWS = {"oauth": "sign-in in your browser, back to this service's callback",
         "device": "a code you approve on the provider's site (works from another machine too)"}


def read(req, bench) -> dict:
    providers = [p for p in providers_view(bench)["providers"] if p.get("app")]
    return {"providers": providers, "origin": own_origin(req, bench)}


def show(d: dict, frame) -> str:
    return ('<p class="muted">Hugging Face and GitHub let an app sign in only once it is registered with them. '
            'Register your own (it stays yours; the client id is kept in the data folder, a client secret in '
            'keys.json), give its client id here, and the Endpoints page signs in with it.</p>'
            + "".join(app_form(p, d["origin"], frame) for p in d["providers"]))


def app_form(p: dict, origin: str, frame) -> str:
    app, pid = p["app"], p["id"]
    state = chip("active", "set") if app["client_id"] else chip("none", "not set")
    callback = ""
    if app["flow"] == "oauth":
        url = f"{origin}/connect/{pid}/callback"
        callback = (f'<p>Redirect URL to register: <code id="callback-{e(pid)}">{e(url)}</code> (the address you '
                    'reach this dashboard at).</p>')
    forget = (f'<button type="submit" name="forget" value="1" class="secondary small">Forget this app</button>'
              if app["client_id"] else "")
    return (f'<form method="post" action="/settings/apps/{e(pid)}" class="stack app-form" data-provider="{e(pid)}"'
            f' autocomplete="off">{csrf(frame)}<h3>{e(p["name"])} {state}</h3>'
            f'<p class="reason">{e(FLOWS.get(app["flow"], app["flow"]))}. {e(app["why"])} '
            f'<a href="{e(app["page"])}" {EXTERNAL}>Register an app</a></p>{callback}'
            f'<label for="app-{e(pid)}">Client id</label>'
            f'<input id="app-{e(pid)}" name="client_id" type="text" spellcheck="false" '
            f'value="{e(frame.typed("client_id", app["client_id"] or ""))}">'
            f'<label for="app-secret-{e(pid)}">Client secret <span class="muted">(only if renewing needs it; kept in '
            f'keys.json, never shown)</span></label>'
            f'<input id="app-secret-{e(pid)}" name="client_secret" type="password" autocomplete="new-password">'
            f'<div class="form-end"><button type="submit">Use this app</button> {forget}</div></form>')


def save(req, bench, form) -> Done:
    pid = req.params["provider"]
    body = {"client_id": None} if form.flag("forget") else {"client_id": form.get("client_id").strip() or None}
    if form.get("client_secret").strip() and not form.flag("forget"):
        body["client_secret"] = form.get("client_secret").strip()
    d = call(req, "PUT", f"/bench/connect/{pid}/app", body)
    name = d["provider"]["name"]
    if not d["app"]["client_id"]:
        return Done(f"Forgot your {name} app: it is a pasted key again.", "/settings#apps", d)
    return Done(f"{name} now signs in with your app: use its Sign in button on the Endpoints page.",
                "/settings#apps", d)
