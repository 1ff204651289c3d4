"""Discover: models worth adding, from models.dev and FreeLLMAPI merged, each with this install's routes to it.

Worth adding means all of: it answers in text and is not deprecated; it is free (both prices 0, or on a
free tier FreeLLMAPI lists) or cheap (at most CHEAP_IN / CHEAP_OUT dollars per million tokens); its context
window, when known, holds at least MIN_CONTEXT tokens; and it came out within RECENT_DAYS of the catalog
copy's date (FreeLLMAPI's rows count as recent: the list is curated); and, when it is free, its provider's free
models work outside the provider's own app (providers.APP_ONLY), or the user switched that provider on. A route
is an endpoint of this install whose provider serves the model and whose own model list offers it, when the
service has read that list since it started (Registry.listed); an endpoint whose list lacks it is named in
`unlisted`. A hub endpoint (hubs/) whose sources reach the model's provider is a route too (`via` names the
source): onboarding it adds the model to the hub first. With no route, the row says which provider to add and how.
"""
from __future__ import annotations

import datetime as dt
import shlex

from . import roles as roles_mod
from .merge import Indexed
from .vendors import BY_FREELLMAPI, describe

CHEAP_IN, CHEAP_OUT = 0.5, 2.0
MIN_CONTEXT = 32_000
RECENT_DAYS = 548
SHOWN = ("context_window", "max_output", "vision", "tools", "reasoning", "price_in", "price_out")


def _date(text: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


def rows(ix: Indexed) -> dict[tuple[str, str], dict]:
    """(provider, model id) -> a row with the catalog's facts and, where FreeLLMAPI lists it, its free tier."""
    out: dict = {}
    for pid, provider in ix.providers.items():
        for mid, entry in provider["models"].items():
            out[(pid, mid)] = {"model": mid, "provider": pid, "entry": dict(entry), "sources": ["models.dev"]}
    label = f"FreeLLMAPI ({ix.hint_date})"
    for platform, models in ix.hints.items():
        pid = BY_FREELLMAPI.get(platform)
        if not pid:
            continue
        index = ix.by_provider.get(pid)
        for mid, row in models.items():
            found, exact = index.find(mid) if index else (None, False)
            key = (pid, found) if found and exact else (pid, mid)
            target = out.setdefault(key, {"model": mid, "provider": pid, "sources": [],
                                          "entry": {k: row.get(k) for k in ("context_window", "vision", "tools")}})
            target["entry"].setdefault("name", row.get("name"))
            target["sources"].append(label)
            target["free_tier"] = {**{k: row.get(k) for k in ("rpm", "rpd", "tpm", "tpd")}, "source": label,
                                   "as_of": ix.hint_date}
    return out


def worth(row: dict, since: dt.date) -> bool:
    e = row["entry"]
    if e.get("text_out") is False or e.get("deprecated"):
        return False
    pin, pout = e.get("price_in"), e.get("price_out")
    free = row.get("free_tier") is not None or (pin == 0 and pout == 0)
    cheap = pin is not None and pout is not None and pin <= CHEAP_IN and pout <= CHEAP_OUT
    if not (free or cheap):
        return False
    if (e.get("context_window") or MIN_CONTEXT) < MIN_CONTEXT:
        return False
    if "free_tier" in row:            # FreeLLMAPI's list is curated: its rows count as recent
        return True
    released = _date(e.get("released"))
    return released is not None and released >= since


def is_free(row: dict) -> bool:
    e = row["entry"]
    return row.get("free_tier") is not None or (e.get("price_in") == 0 and e.get("price_out") == 0)


def shape(row: dict, routes: list, providers: dict) -> dict:
    e = row["entry"]
    free = is_free(row)
    provider = describe(row["provider"], providers)
    return {"model": row["model"], "name": e.get("name") or row["model"], "provider": row["provider"],
            "provider_name": provider["name"], "free": free, "released": e.get("released"),
            "facts": {k: e[k] for k in SHOWN if e.get(k) is not None}, "roles": roles_mod.auto(row["model"], e),
            "free_tier": row.get("free_tier"), "sources": row["sources"], "routes": routes,
            "no_route": None if routes else provider}


def route(endpoint: str, model: str, alias: str | None, listed: bool, via: str | None = None) -> dict:
    """A route to a model (through a hub that can add it from provider `via`), with the `bench onboard` that
    queues it as words (a client quotes them for its shell) and as one line for a POSIX shell: a model id is the
    catalog's, and may hold anything."""
    argv = ["bench", "onboard", model, "--endpoint", endpoint] + (["--via", via] if via else [])
    return {"endpoint": endpoint, "served": model, "on_bench": alias, "listed": listed, "via": via,
            "onboard_argv": argv, "onboard": shlex.join(argv)}


def offers(names: frozenset | None, model: str) -> bool:
    """Whether an endpoint's own list offers the model; a list not read yet is taken on trust."""
    return names is None or model in names


def matches(item: dict, free: bool, tools: bool, vision: bool, min_context: int, find: str) -> bool:
    f = item["facts"]
    if (free and not item["free"]) or (tools and f.get("tools") is not True) or \
            (vision and f.get("vision") is not True) or (min_context and (f.get("context_window") or 0) < min_context):
        return False
    return not find or any(find in str(v).lower() for v in (item["model"], item["name"], item["provider"],
                                                                 item["provider_name"]))


def hub_routes(row: dict, hub_names: list, offered: list, on_bench: dict) -> list[dict]:
    """Routes through hubs that can add the model from its provider (a hub that lists it is an ordinary route)."""
    model, pid = row["model"], row["provider"]
    return [route(name, model, on_bench.get((name, model)), True, pid) for name in hub_names if name not in offered]


def discover(catalog, free=False, tools=False, vision=False, min_context=0, find="", limit=100,
             reachable=False) -> dict:
    """The Discover list: routed rows first, then free ones, then the newest. `reachable`: only models one of this
    install's endpoints serves (a route to onboard it by, a hub's included)."""
    ix, _ = catalog.state()
    md = catalog.copies.get().get("models.dev")
    base = _date(md.fetched if md else None) or dt.date.today()
    since = base - dt.timedelta(days=RECENT_DAYS)
    by_provider: dict[str, list] = {}
    via_hub: dict[str, list] = {}       # catalog provider -> the hubs that can add its models
    listed = {}
    for endpoint in catalog.registry.endpoints().values():
        by_provider.setdefault(catalog.provider_of(endpoint), []).append(endpoint.name)
        listed[endpoint.name] = catalog.registry.listed(endpoint)
        for pid in (catalog.registry.sources(endpoint) or ()) if endpoint.hub else ():
            via_hub.setdefault(pid, []).append(endpoint.name)
    on_bench = {(m.endpoint, m.served): m.alias for m in catalog.registry.models().values()}
    items: list[dict] = []
    app_only: dict = {}
    for row in rows(ix).values():
        if not worth(row, since):
            continue
        names = sorted(by_provider.get(row["provider"], []))
        offered = [n for n in names if offers(listed[n], row["model"])]
        routes = [route(name, row["model"], on_bench.get((name, row["model"])), listed[name] is not None)
                  for name in offered]
        routes += hub_routes(row, sorted(via_hub.get(row["provider"], [])), offered, on_bench)
        item = shape(row, routes, ix.providers)
        item["unlisted"] = [n for n in names if n not in offered]
        if (reachable and not routes) or not matches(item, free, tools, vision, min_context,
                                                      (find or "").strip().lower()):
            continue
        if catalog.app_only_free(row["provider"], item["free"]):
            app_only[row["provider"]] = app_only.get(row["provider"], 0) + 1
        else:
            items.append(item)
    items.sort(key=lambda i: (not i["routes"], not i["free"], -(_date(i["released"]) or dt.date.min).toordinal(),
                              -(i["facts"].get("context_window") or 0), i["provider"], i["model"]))
    left_out = [{**a, "models": app_only[a["provider"]]} for a in catalog.app_only() if a["provider"] in app_only]
    return {"models": items[:limit], "total": len(items), "since": since.isoformat(), "app_only": left_out,
            "rules": {"cheap_in": CHEAP_IN, "cheap_out": CHEAP_OUT, "min_context": MIN_CONTEXT,
                      "recent_days": RECENT_DAYS}}
