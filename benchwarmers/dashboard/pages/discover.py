"""Discover: the models worth adding, filtered, each with its routes (which endpoints serve it, under which served
name) or the provider to add; one click puts a routed model on the onboarding queue, its progress beside it."""
from __future__ import annotations

from urllib.parse import urlencode

from ...errors import BadRequest
from ...words import plural
from ..apicall import get, post
from ..contract import stays
from ..render import card, e, link, table
from ..web import Done, safe_local
from ..widgets import chip, csrf, hidden
from .onboard import latest_items, state_cell

FLAGS = (("free", "Free"), ("tools", "Calls tools"), ("vision", "Reads images"),
         ("reachable", "Only models I can reach"))
TRUE = ("1", "on", "yes", "true")
CAN = ("tools", "vision", "reasoning")


def data(req, bench) -> dict:
    q = req.query
    filters = {name: (q.get(name) or "").lower() in TRUE for name, _ in FLAGS}
    filters["find"] = (q.get("find") or "").strip()[:200]
    raw = (q.get("min_context") or "").strip()
    usable = raw.isascii() and raw.isdigit() and len(raw) <= 9   # int() refuses thousands of digits
    filters["min_context"] = int(raw) if usable and int(raw) <= 100_000_000 else None
    problem = None if not raw or filters["min_context"] is not None else \
        f"Min context must be a whole number of tokens, not {raw!r}: it was left out."
    found = get(req, "/bench/discover", limit=200, find=filters["find"], min_context=filters["min_context"],
                **{k: 1 for k, _ in FLAGS if filters[k]})
    latest = latest_items(get(req, "/bench/onboard", limit=200)["items"])
    providers = get(req, "/bench/connect")["providers"]
    for m in found["models"]:
        for r in m["routes"]:
            r["item"] = latest.get((r["endpoint"], r["served"]))
        m["add"] = None if m["routes"] else how_to_add(m["no_route"], providers)
    return {"filters": filters, "problem": problem, "models": found["models"], "total": found["total"],
            "app_only": found["app_only"], "rules": found["rules"], "since": found["since"],
            "hub_errors": found.get("hub_errors") or [],
            "endpoints": len(get(req, "/bench/endpoints")["endpoints"])}


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


def render(d: dict, frame) -> tuple[str, str]:
    r = d["rules"]
    lead = (f'<p class="lead">Models that are free or cheap (at most ${r["cheap_in"]:g} in and ${r["cheap_out"]:g} '
            f'out per million tokens), hold at least {r["min_context"] // 1000}k tokens, and came out since '
            f'{e(d["since"])}, from models.dev and FreeLLMAPI. Those your endpoints serve come first: '
            '“Onboard” queues one (Quick: probed now, it owes the suite) and its progress shows beside it; '
            f'{link("/onboard", "the Onboard page")} shows the whole queue.</p>')
    notes = "".join(f'<div class="flash flash-error" role="alert">{e(x)}</div>' for x in [d["problem"]] if x)
    notes += "".join(f'<p class="callout">{plural(a["models"], "free model")} of '
                     f'{e(a["name"])} left out: they work only in {e(a["app"])}. '
                     f'{link("/settings#app_only", "Switch it on in Settings")} if your endpoint reaches them '
                     'through that app.</p>' for a in d["app_only"])
    notes += "".join(f'<p class="callout">Hub {e(h["endpoint"])} offers no routes now: {e(h["error"])}</p>'
                     for h in d["hub_errors"])
    shown = f'<p class="muted" role="status">{len(d["models"])} of {d["total"]} shown.</p>' if d["models"] else ""
    return "Discover", lead + notes + filter_form(d["filters"]) + card("", shown + models_table(d, frame))


def filter_form(f: dict) -> str:
    boxes = "".join(f'<label class="choice"><input type="checkbox" name="{name}" value="1"'
                    f'{" checked" if f[name] else ""}> {label}</label>' for name, label in FLAGS)
    return (f'<form method="get" action="/discover" class="search" role="search" id="discover-filters">'
            f'<div class="choices">{boxes}</div>'
            f'<label for="d-context">Min context</label><input id="d-context" name="min_context" type="number" '
            f'min="0" step="1000" value="{e(f["min_context"] or "")}" placeholder="tokens">'
            f'<label for="d-find">Find</label><input id="d-find" name="find" type="search" value="{e(f["find"])}" '
            f'placeholder="name or provider"><button type="submit" class="secondary">Filter</button>'
            f'{link("/discover", "Clear")}</form>')


def models_table(d: dict, frame) -> str:
    if not d["models"]:
        return '<p class="empty">Nothing matches: fewer filters, or a newer catalog (bench catalog refresh).</p>'
    back = "/discover?" + urlencode({k: v for k, v in d["filters"].items() if v not in (None, "", False)})
    rows = []
    for m in d["models"]:
        f = m["facts"]
        name = f'<strong>{e(m["name"])}</strong><br><span class="served">{e(m["model"])}</span>'
        price = chip("active", "free") if m["free"] else e(f"${f.get('price_in', 0):g} / ${f.get('price_out', 0):g}")
        tier = m.get("free_tier") or {}
        limits = ", ".join(f"{tier[k]} {k}" for k in ("rpm", "rpd") if tier.get(k))
        can = " · ".join(k for k in CAN if f.get(k)) or '<span class="muted">text</span>'
        context = f'{f["context_window"]:,}' if f.get("context_window") else '<span class="muted">?</span>'
        rows.append([name, e(m["provider_name"]), price + (f'<br><span class="muted">{e(limits)}</span>'
                                                           if limits else ""),
                     context, can, routes_cell(m, frame, back)])
    return f'<div id="discovered">{table(["Model", "Provider", "Price $/M", "Context", "Can", "Routes"], rows)}</div>'


def routes_cell(m: dict, frame, back: str) -> str:
    if not m["routes"] and m.get("unlisted"):
        return f'<span class="muted">no route: your endpoint {e(", ".join(m["unlisted"]))} does not list it</span>'
    if not m["routes"]:
        return no_route(m["add"], frame)
    return "".join(route_line(m, r, frame, back) for r in m["routes"])


def route_line(m: dict, r: dict, frame, back: str) -> str:
    key, item = f'{r["endpoint"]}|{r["served"]}', r["item"]
    pick = key + (f'|{r["via"]}' if r.get("via") else "")    # through a hub: the source it is added from
    where = f'<span class="route-name">{e(r["endpoint"])}</span> <span class="served">{e(r["served"])}</span>'
    if r["on_bench"] and not item:
        return f'<div class="route">{where} {chip("active", "on the bench")} as ' \
               f'{link("/models/" + r["on_bench"], r["on_bench"])}</div>'
    progress = (f'<span class="progress" data-key="{e(key)}" data-item="{e(item["id"]) if item else ""}" '
                f'data-state="{e(item["state"]) if item else ""}">{state_cell(item) if item else ""}</span>')
    button, label = "", "Add to hub and onboard" if r.get("via") else "Onboard"
    if r.get("via"):
        where += f' <span class="muted">(from {e(r["via"])} through the hub)</span>'
    if not item or item["state"] == "failed":
        button = (f'<form method="post" action="/discover/onboard" class="inline" data-onboard data-once>'
                  f'{csrf(frame)}{hidden("pick", pick)}{hidden("back", back)}'
                  f'<button type="submit" class="small" aria-label="Onboard {e(r["served"])} from '
                  f'{e(r["endpoint"])}">{"Try again" if item else label}</button>'
                  f'<span class="status-text" data-status role="status"></span></form>')
    return f'<div class="route">{where} {button}{progress}</div>'


def no_route(add: dict, frame) -> str:
    text = '<span class="muted">no route yet:</span> '
    if add["how"] == "sign-in":
        return (text + f'<form method="post" action="{e(add["start"])}" class="inline">{csrf(frame)}'
                f'<button type="submit" class="small secondary">Sign in with {e(add["name"])}</button></form>')
    if add["how"] == "paste":
        return text + link(add["href"], f"add {add['name']}")
    return text + f'add {e(add["name"])}'


def queue_one(req, bench, form) -> Done:
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
