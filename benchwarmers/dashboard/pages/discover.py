"""Discover: the models worth adding, filtered, each with its routes (which endpoints serve it, under which served
name) or the provider to add; one click puts a routed model on the onboarding queue, its progress beside it."""
from __future__ import annotations

from typing import Protocol
from urllib.parse import urlencode

from ...api.catalog import DiscoverParts, discover_view
from ...api.connect import providers_view
from ...errors import BadRequest
from ...roster.onboardqueue import OnboardQueue
from ...server.messages import Request
from ...signin.flows import Flows
from ...store import Config
from ...words import plural
from ..apicall import post
from ..contract import stays
from ..markup import Html, attrs, card, flag, html, join, link, table, trusted
from ..web import Done, Form, Frame, safe_local
from ..widgets import chip, csrf, hidden, muted
from .onboard import latest_items, state_cell


class DiscoverPageParts(DiscoverParts, Protocol):
    """Discover's list, the providers to connect, the onboarding queue's latest items."""
    config: Config
    onboard_queue: OnboardQueue
    signins: Flows


FLAGS = (("free", "Free"), ("tools", "Calls tools"), ("vision", "Reads images"),
         ("reachable", "Only models I can reach"))
TRUE = ("1", "on", "yes", "true")
CAN = ("tools", "vision", "reasoning")


def data(req: Request, bench: DiscoverPageParts) -> dict:
    q = req.query
    filters: dict[str, bool | str | int | None] = {name: (q.get(name) or "").lower() in TRUE for name, _ in FLAGS}
    filters["find"] = (q.get("find") or "").strip()[:200]
    raw = (q.get("min_context") or "").strip()
    usable = raw.isascii() and raw.isdigit() and len(raw) <= 9   # int() refuses thousands of digits
    filters["min_context"] = int(raw) if usable and int(raw) <= 100_000_000 else None
    problem = None if not raw or filters["min_context"] is not None else \
        f"Min context must be a whole number of tokens, not {raw!r}: it was left out."
    found = discover_view(bench, {"limit": 200, "find": filters["find"], "min_context": filters["min_context"],
                                  **{k: "1" for k, _ in FLAGS if filters[k]}})
    routes = [r for m in found["models"] for r in m["routes"]]
    latest = latest_items(bench.onboard_queue.items(200, None), routes,
                          {a: m.endpoint for a, m in bench.registry.models().items()})
    providers = providers_view(bench)["providers"]
    for m in found["models"]:
        for r in m["routes"]:
            r["item"] = latest.get((r["endpoint"], r["served"]))
        m["add"] = None if m["routes"] else how_to_add(m["no_route"], providers)
    return {"filters": filters, "problem": problem, "models": found["models"], "total": found["total"],
            "app_only": found["app_only"], "rules": found["rules"], "since": found["since"],
            "hub_errors": found.get("hub_errors") or [],
            "endpoints": len(bench.registry.endpoints())}


def how_to_add(provider: dict, providers: list[dict]) -> dict:
    """A sign-in when the provider has one here, else the Endpoints page's paste form filled for it."""
    entry = next((p for p in providers if p["catalog"] == provider["provider"]), None)
    if entry and entry["kind"] == "sign-in":
        return {"how": "sign-in", "name": entry["name"], "start": entry["start"]}
    if entry:
        return {"how": "paste", "name": entry["name"], "href": f"/endpoints?paste={entry['id']}#add"}
    if not provider.get("base_url"):
        return {"how": "none", "name": provider["name"], "href": None}
    fill = {"name": provider["provider"], "base_url": provider["base_url"], "api": provider.get("api") or "openai"}
    return {"how": "paste", "name": provider["name"], "href": "/endpoints?" + urlencode(fill) + "#add"}


LEAD = """<p class="lead">Models that are free or cheap (at most $$$cheap_in in and $$$cheap_out out per million \
tokens), hold at least ${context}k tokens, and came out since $since, from models.dev and FreeLLMAPI. Those your \
endpoints serve come first: “Onboard” queues one (Quick: probed now, it owes the suite) and its progress shows \
beside it; $onboard shows the whole queue.</p>"""


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    r = d["rules"]
    lead = html(LEAD, cheap_in=f'{r["cheap_in"]:g}', cheap_out=f'{r["cheap_out"]:g}', context=r["min_context"] // 1000,
                since=d["since"], onboard=link("/onboard", "the Onboard page"))
    notes = [html('<div class="flash flash-error" role="alert">$x</div>', x=x) for x in [d["problem"]] if x]
    notes += [html('<p class="callout">$n of $name left out: they work only in $app. $link if your endpoint reaches '
                   "them through that app.</p>", n=plural(a["models"], "free model"), name=a["name"], app=a["app"],
                   link=link("/settings#app_only", "Switch it on in Settings")) for a in d["app_only"]]
    notes += [html('<p class="callout">Hub $endpoint offers no routes now: $error</p>', endpoint=h["endpoint"],
                   error=h["error"]) for h in d["hub_errors"]]
    shown = html('<p class="muted" role="status">$n of $total shown.</p>', n=len(d["models"]), total=d["total"]) \
        if d["models"] else ""
    return "Discover", html("$lead$notes$form$card", lead=lead, notes=notes, form=filter_form(d["filters"]),
                            card=card("", html("$shown$table", shown=shown, table=models_table(d, frame))))


FILTERS = """<form method="get" action="/discover" class="search" role="search" id="discover-filters">\
<div class="choices">$boxes</div>\
<label for="d-context">Min context</label><input id="d-context" name="min_context" type="number" \
min="0" step="1000" value="$context" placeholder="tokens">\
<label for="d-find">Find</label><input id="d-find" name="find" type="search" value="$find" \
placeholder="name or provider"><button type="submit" class="secondary">Filter</button>$clear</form>"""


def filter_form(f: dict) -> Html:
    boxes = [html('<label class="choice"><input type="checkbox" name="$name" value="1"$on> $label</label>', name=name,
                  on=flag("checked", f[name]), label=label) for name, label in FLAGS]
    return html(FILTERS, boxes=boxes, context=f["min_context"] or "", find=f["find"], clear=link("/discover", "Clear"))


def models_table(d: dict, frame: Frame) -> Html:
    if not d["models"]:
        return trusted('<p class="empty">Nothing matches: fewer filters, or a newer catalog (bench catalog refresh).'
                       "</p>")
    back = "/discover?" + urlencode({k: v for k, v in d["filters"].items() if v not in (None, "", False)})
    rows = []
    for m in d["models"]:
        f = m["facts"]
        name = html('<strong>$name</strong><br><span class="served">$model</span>', name=m["name"], model=m["model"])
        price = chip("active", "free") if m["free"] else f"${f.get('price_in', 0):g} / ${f.get('price_out', 0):g}"
        tier = m.get("free_tier") or {}
        limits = ", ".join(f"{tier[k]} {k}" for k in ("rpm", "rpd") if tier.get(k))
        can = " · ".join(k for k in CAN if f.get(k)) or muted("text")
        context = f'{f["context_window"]:,}' if f.get("context_window") else muted("?")
        per = html('<br><span class="muted">$l</span>', l=limits) if limits else ""
        rows.append([name, m["provider_name"], html("$price$per", price=price, per=per), context, can,
                     routes_cell(m, frame, back)])
    return html('<div id="discovered">$t</div>', t=table(["Model", "Provider", "Price $/M", "Context", "Can", "Routes"],
                                                          rows))


def routes_cell(m: dict, frame: Frame, back: str) -> Html:
    if not m["routes"] and m.get("unlisted"):
        return html('<span class="muted">no route: your endpoint $names does not list it</span>',
                    names=", ".join(m["unlisted"]))
    if not m["routes"]:
        return no_route(m["add"], frame)
    return join(route_line(m, r, frame, back) for r in m["routes"])


ONBOARD = """<form method="post" action="/discover/onboard" class="inline" data-onboard data-once>$csrf$pick$back\
<button type="submit" class="small" aria-label="Onboard $served from $endpoint">$label</button>\
<span class="status-text" data-status role="status"></span></form>"""


def route_line(m: dict, r: dict, frame: Frame, back: str) -> Html:
    key, item = f'{r["endpoint"]}|{r["served"]}', r["item"]
    pick = key + (f'|{r["via"]}' if r.get("via") else "")    # through a hub: the source it is added from
    where = html('<span class="route-name">$e</span> <span class="served">$s</span>', e=r["endpoint"], s=r["served"])
    if r["on_bench"] and not item:
        return html('<div class="route">$where $chip as $link</div>', where=where, chip=chip("active", "on the bench"),
                    link=link("/models/" + r["on_bench"], r["on_bench"]))
    progress = html('<span class="progress"$data>$state</span>', state=state_cell(item) if item else "", data=attrs(
        data_key=key, data_item=item["id"] if item else "", data_state=item["state"] if item else ""))
    button, label = "", "Add to hub and onboard" if r.get("via") else "Onboard"
    if r.get("via"):
        where = html('$w <span class="muted">(from $via through the hub)</span>', w=where, via=r["via"])
    if not item or item["state"] == "failed":
        button = html(ONBOARD, csrf=csrf(frame), pick=hidden("pick", pick), back=hidden("back", back),
                      served=r["served"], endpoint=r["endpoint"], label="Try again" if item else label)
    return html('<div class="route">$where $button$progress</div>', where=where, button=button, progress=progress)


def no_route(add: dict, frame: Frame) -> Html:
    text = trusted('<span class="muted">no route yet:</span> ')
    if add["how"] == "sign-in":
        return html('$text<form method="post" action="$start" class="inline">$csrf<button type="submit" '
                    'class="small secondary">Sign in with $name</button></form>', text=text, start=add["start"],
                    csrf=csrf(frame), name=add["name"])
    if add["how"] == "paste":
        return html("$text$link", text=text, link=link(add["href"], f"add {add['name']}"))
    return html("${text}add $name", text=text, name=add["name"])


def queue_one(req: Request, bench: object, form: Form) -> Done:
    picks = [(p.split("|", 2) + [None])[:3] for p in form.getlist("pick") if "|" in p]
    if not picks:
        raise BadRequest("No model picked.", "Press a model's Onboard button.")
    items = post(req, "/bench/onboard", {"models": [{"endpoint": a, "served": b, "via": c} for a, b, c in picks],
                                         "mode": "quick"})["items"]
    names = ", ".join(i["served"] for i in items)
    return Done(f"Queued {names} for onboarding (Quick): its progress shows beside it, and on the Onboard page.",
                safe_local(form.get("back")) or "/discover", {"items": items})


ACTIONS = [("/discover/onboard", queue_one, "/discover")]


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
