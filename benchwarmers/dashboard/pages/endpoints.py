"""Endpoints: the list (where each key comes from, never the key), add one by signing in or pasting a key, test,
remove.

The add area is a row of cards (ADD_CARDS): the providers (sign in, a local server found on this machine, or
where to make a key to paste), and the paste form. Another way to add an endpoint is one more card function here.
`?signin=ID` shows how a provider sign-in went (its callback lands here); `?paste=PROVIDER` (an id from
GET /bench/connect) fills the paste form for that provider and says why it has no sign-in, and `?name=`,
`?base_url=` and `?api=` fill the form's fields (Discover links here for a provider with no route yet).
"""
from __future__ import annotations

import json
from typing import Protocol

from ...api.connect import providers_view
from ...api.endpoints import EndpointViewParts, endpoints_view, local_servers_view
from ...hubs import KINDS as HUB_KINDS
from ...providers import PROVIDERS
from ...server.messages import Request
from ...signin.flows import Flows
from ...words import plural
from ..apicall import call, post
from ..contract import stays
from ..markup import Html, card, flag, html, options, table, trusted
from ..render import when
from ..web import Done, Form, Frame
from ..widgets import chip, confirm, csrf, external, hidden, muted, post_button


class EndpointsPageParts(EndpointViewParts, Protocol):
    """The endpoints, the local servers found, the providers to connect."""
    signins: Flows


APIS = [(api, cls.title) for api, cls in PROVIDERS.items()]     # the protocols an endpoint may speak, as named
KINDS = {"sign-in": ("active", "sign in"), "local": ("probing", "on this machine"), "paste": ("none", "paste a key")}
HUBS = [(kind, cls.title) for kind, cls in HUB_KINDS.items()]     # the kinds of hub, as named
KEY_SOURCES = {"environment": "environment variable", "keys.json": "keys.json", "none": "no key (local)",
               "missing": "missing"}


def data(req: Request, bench: EndpointsPageParts) -> dict:
    connect = providers_view(bench, req.query.get("signin"))
    return {"endpoints": endpoints_view(bench)["endpoints"],
            "local_servers": local_servers_view(bench)["servers"],
            "providers": connect["providers"], "signin": signin_result(req, connect),
            "prefill": prefill(req.query, connect["providers"]),
            "apis": [{"api": api, "label": label, "default_base": PROVIDERS[api].default_base} for api, label in APIS],
            "models": len(bench.registry.models())}


def signin_result(req: Request, connect: dict) -> dict | None:
    """How the sign-in the callback sent the browser here for went; a result kept no longer says so."""
    if "signin" not in req.query:
        return None
    return connect.get("result") or {"ok": False, "provider": None, "endpoint": None,
                                     "message": "This sign-in's result is no longer kept (results last 10 minutes): "
                                                "the list of endpoints shows whether it was added."}


def prefill(query: dict, providers: list[dict]) -> dict:
    """What the paste form starts with: a provider entry's values (?paste=ID), then ?name=, ?base_url=, ?api=."""
    entry = next((p for p in providers if p["id"] == query.get("paste") and p["kind"] == "paste"), None)
    out = {"provider": entry, "name": entry["id"] if entry else "", "base_url": entry["base_url"] if entry else "",
           "api": entry["api"] if entry else "openai"}
    out.update({k: query[k].strip()[:300] for k in ("name", "base_url") if query.get(k)})
    if query.get("api") in dict(APIS):
        out["api"] = query["api"]
    return out


START = trusted('<p class="lead">Start here: an endpoint is a base URL and a protocol, such as OpenRouter, a '
                "provider's own API or a local Ollama. Sign in with a provider below, or paste a base URL and key: a "
                "key is checked by listing the models before anything is saved.</p>")
NEXT = trusted('<p class="lead callout">Next: <a href="/onboard">onboard models</a> from your endpoints.</p>')


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    parts = [result_flash(d["signin"])]
    if not d["endpoints"]:
        parts.append(START)
    elif not d["models"]:
        parts.append(NEXT)
    if d["endpoints"]:
        parts.append(card("Your endpoints", endpoint_table(d["endpoints"], frame)))
    parts.append(html('<div class="add-row">$cards</div>', cards=[c(d, frame) for c in ADD_CARDS]))
    return "Endpoints", html("$parts", parts=parts)


def endpoint_table(endpoints: list[dict], frame: Frame) -> Html:
    rows = []
    for x in endpoints:
        source = x["key_source"]
        key = html('$chip <span class="muted">set $env</span>', chip=chip("failed", "missing"), env=x["key_env"]) \
            if source == "missing" else KEY_SOURCES.get(source, source)
        served = html('$n <span class="muted">· $when</span>', n=x["served_count"], when=when(x["checked"])) \
            if x.get("served_count") is not None else muted("not checked")
        actions = [post_button(frame, f"/endpoints/{x['name']}/test", "Test"),
                   confirm(frame, f"/endpoints/{x['name']}/remove", "Remove",
                           f"Remove endpoint {x['name']}?" + (f" Its {x['active_models']} active models are retired "
                                                               "(restorable once it is back)."
                                                               if x["active_models"] else ""))]
        hub = html(' <span class="muted">· hub: $h</span>', h=dict(HUBS).get(x["hub"], x["hub"])) if x.get("hub") \
            else ""
        rows.append([html("<strong>$name</strong>$hub", name=x["name"], hub=hub), dict(APIS).get(x["api"], x["api"]),
                     html("<code>$u</code>", u=x["base_url"]), key, f'{x["models"]} on the bench', served,
                     html('<div class="actions">$a</div>', a=actions)])
    return table(["Name", "API", "Base URL", "Key from", "Models", "Serves (checked)", ""], rows)


def result_flash(result: dict | None) -> Html:
    if not result:
        return Html("")
    kind, role = ("ok", "status") if result["ok"] else ("error", "alert")
    return html('<div class="flash flash-$kind" role="$role" id="signin-result">$m</div>', kind=kind, role=role,
                m=result["message"])


def signin_card(d: dict, frame: Frame) -> Html:
    """Every provider entry: a sign-in button, the local server's one-click add, or where to make a key."""
    return card("Sign in with a provider", html(
        '<p class="muted">Where a provider lets this service sign in, it gets the key for you: your browser goes to '
        "the provider and comes back here. For the others, make a key on their site and paste it.</p>"
        '<ul class="providers plain-list">$rows</ul>', rows=[provider_row(p, d, frame) for p in d["providers"]]),
        "add-card", anchor="signin")


def reason(text) -> Html:
    return html('<span class="reason">$t</span>', t=text)


def provider_row(p: dict, d: dict, frame: Frame) -> Html:
    head = html('<div class="provider-head"><strong>$name</strong> $chip</div>', name=p["name"],
                chip=chip(*KINDS[p["kind"]]))
    why = reason(html("$why $docs", why=p["why"], docs=external(p["doc"], "Their docs")))
    if p["kind"] == "sign-in":
        act = html('<form method="post" action="$start" class="inline">$csrf<button type="submit" class="small">'
                   "Sign in with $name</button></form>", start=p["start"], csrf=csrf(frame), name=p["name"])
        why = reason(p["note"]) if p["note"] else Html("")
    elif p["kind"] == "local":
        act, s = local_action(d, frame), d["local_servers"][0]
        if not s["answering"] and not s["endpoint"]:
            why = reason(html("Nothing answers at <code>$base</code>: start Ollama, then reload this page. $why",
                              base=s["base_url"], why=p["why"]))
    else:
        act = html('<a class="button secondary small" href="$href" target="_blank" rel="noopener noreferrer">Make a '
                   'key</a> <a href="/endpoints?paste=$id#add">then paste it</a>$app', href=p["key_page"], id=p["id"],
                   app=html(' · <a href="$s">or sign in with your own app</a>', s=p["app"]["settings"])
                   if p.get("app") else "")
    return html('<li data-provider="$id">$head<div class="actions">$act</div>$why</li>', id=p["id"], head=head, act=act,
                why=why)


def local_action(d: dict, frame: Frame) -> Html:
    """The local Ollama in one click while it answers (added like any endpoint: its models listed first)."""
    s = d["local_servers"][0]
    if s["endpoint"]:
        return muted(f"added as {s['endpoint']}")
    if not s["answering"]:
        return chip("none", "not answering")
    taken = {x["name"] for x in d["endpoints"]}
    name = next(n for n in (s["name"], "local", "ollama-local", "ollama-2") if n not in taken)
    fields = [hidden(k, v) for k, v in (("api", s["api"]), ("name", name), ("base_url", s["base_url"]),
                                        ("no_key", "1"))]
    return html('<form method="post" action="/endpoints/add" class="inline">$csrf$fields<button type="submit" '
                'class="small">Add it as “$name” ($models)</button></form>', csrf=csrf(frame), fields=fields,
                name=name, models=plural(s["models"], "model"))


LINK_LOCAL_CONFIRM = ("Send this endpoint's key and requests to a link-local or cloud metadata address? Such an "
                      "address answers on the machine the service runs on (a cloud machine's metadata service hands "
                      "out its credentials there). Add it only if you run a model server there yourself.")
PASTE = """$why
<form method="post" action="/endpoints/add" class="stack" autocomplete="off">$csrf
<label for="ep-api">API</label>
<select id="ep-api" name="api" data-bases="$bases">$apis</select>
<label for="ep-name">Name <span class="muted">(what you will call it: letters, digits, . _ -)</span></label>
<input id="ep-name" name="name" type="text" autocomplete="off" required placeholder="openrouter"
 pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}" value="$name">
<label for="ep-base">Base URL</label>
<input id="ep-base" name="base_url" type="url" autocomplete="off" required placeholder="https://openrouter.ai/api/v1"
 value="$base_url">
<label for="ep-key">Key
 <span class="muted">(checked by listing the models, kept in keys.json, never shown again)</span></label>
<input id="ep-key" name="key" type="password" autocomplete="new-password" spellcheck="false">
<label class="choice"><input type="checkbox" name="no_key" value="1"$no_key>
 No key: a local server</label>
<label class="choice"><input type="checkbox" name="allow_link_local" value="1"$link_local data-confirm="$confirm">
 Allow a link-local or cloud metadata address <span class="muted">(169.254.x.x, fe80::, fd00:ec2::254: refused
 otherwise, as this endpoint's key and requests would go there)</span></label>
<details class="hint" id="ep-hub-box"$hub_open><summary>A hub ($hub_titles) that can take new
 models</summary>
<label for="ep-hub">Hub</label>
<select id="ep-hub" name="hub">$hubs</select>
<label for="ep-admin">Admin key <span class="muted">(the hub's admin or management key, apart from the API key; kept
 in keys.json as NAME.admin)</span></label>
<input id="ep-admin" name="admin_key" type="password" autocomplete="new-password" spellcheck="false">
<p class="muted">Discover and the onboarding queue then add a model the hub does not list yet through its admin
 API, and onboard it.</p></details>
<div class="form-end"><button type="submit">Add endpoint</button></div>
</form><details class="hint"><summary>Base URLs by API</summary><ul>$hints</ul>
<p class="muted">The key goes to the llm CLI's keys.json (or set BENCHWARMERS_KEY_NAME in the service's
environment and leave it empty here); it never enters the data folder, a page or a log.</p></details>"""


def paste_card(d: dict, frame: Frame) -> Html:
    bases = {a["api"]: a["default_base"] for a in d["apis"]}
    pre = d["prefill"]
    hints = [html("<li><strong>$label</strong>: e.g. <code>$eg</code></li>", label=a["label"], eg=eg)
             for a, eg in ((a, "https://openrouter.ai/api/v1" if a["api"] == "openai" else a["default_base"])
                           for a in d["apis"])]
    why = ""
    if pre["provider"]:
        p = pre["provider"]
        why = html('<p class="callout">$name has no sign-in here: $why Make a key at $link and paste it below.</p>',
                   name=p["name"], why=p["why"], link=external(p["key_page"], p["key_page"]))
    return card("Add an endpoint", html(
        PASTE, why=why, csrf=csrf(frame), bases=json.dumps(bases), apis=options(APIS, frame.typed("api", pre["api"])),
        name=frame.typed("name", pre["name"]), base_url=frame.typed("base_url", pre["base_url"]),
        no_key=flag("checked", frame.typed("no_key")), link_local=flag("checked", frame.typed("allow_link_local")),
        confirm=LINK_LOCAL_CONFIRM, hub_open=flag("open", frame.typed("hub")),
        hub_titles=", ".join(t for _, t in HUBS), hubs=options([("", "not a hub"), *HUBS], frame.typed("hub", "")),
        hints=hints), "add-card", anchor="add")


ADD_CARDS = [signin_card, paste_card]


# ---- actions -----------------------------------------------------------------------------------

def add(req: Request, bench: object, form: Form) -> Done:
    body = {"name": form.get("name").strip(), "base_url": form.get("base_url").strip(), "api": form.get("api"),
            "no_key": form.flag("no_key"), "allow_link_local": form.flag("allow_link_local")}
    if form.get("key").strip():
        body["key"] = form.get("key").strip()
    if form.get("hub"):
        body["hub"] = form.get("hub")
        if form.get("admin_key").strip():
            body["admin_key"] = form.get("admin_key").strip()
    added = post(req, "/bench/endpoints", body)["endpoint"]
    key = {"keys.json": "its key is kept in keys.json", "environment": "its key comes from the environment",
           "none": "no key"}.get(added["key_source"], "")
    return Done(f"Added endpoint {added['name']}: it serves {plural(added['served_count'], 'model')}; {key}.",
                "/endpoints", {"endpoint": added})


def test(req: Request, bench: object, form: Form) -> Done:
    d = post(req, f"/bench/endpoints/{req.params['name']}/test")["endpoint"]
    return Done(f"Endpoint {d['name']} answers: it serves {plural(d['served_count'], 'model')}.", "/endpoints",
                {"endpoint": d})


def remove(req: Request, bench: object, form: Form) -> Done:
    d = call(req, "DELETE", f"/bench/endpoints/{req.params['name']}")
    retired = f" Retired: {', '.join(d['retired'])}." if d["retired"] else ""
    return Done(f"Removed endpoint {d['removed']}.{retired}" + (f" {d['note']}" if d.get("note") else ""),
                "/endpoints", d)


ACTIONS = [("/endpoints/add", add, "/endpoints"), ("/endpoints/{name}/test", test, "/endpoints"),
           ("/endpoints/{name}/remove", remove, "/endpoints")]


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
