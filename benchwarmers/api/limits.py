"""/bench/limits: every connection's and model's rate limits (the user's, with what is used and when each resets,
and what the provider's headers said) and every monthly budget in dollars (spent, held, left, the month's turn);
set and clear the user's."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..catalog import Catalog
from ..core.collection import Collections
from ..errors import ConfigError
from ..roster.limits import userset
from ..roster.limits.budgets import Budgets
from ..roster.limits.quota import Quota
from ..roster.limits.resting import Resting
from ..roster.limits.userset import BENCH, COLLECTION, CONNECTION, KEY, LIMITS, MODEL, RATED, SCOPES, USD
from ..roster.registry import Registry
from ..server.gatewaykeys import GatewayKeys
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import Config
from .parts import EffectiveSettings

if TYPE_CHECKING:
    from ..bench import Bench


class LimitsParts(EffectiveSettings, Protocol):
    config: Config
    quota: Quota
    budgets: Budgets
    registry: Registry
    resting: Resting
    catalog: Catalog
    collections: Collections
    gateway_keys: GatewayKeys


NEAR = 0.8          # a limit this much used is near: Home warns of it
STATES = ("ok", "near", "at")


def windows(set_limits: dict, usage: dict) -> dict:
    """Each limit: what is set (None: no limit), used, left, and when its window next lets more through."""
    out = {}
    for key in LIMITS:
        limit, used = set_limits.get(key), usage[key]["used"]
        out[key] = {"limit": limit, "used": used, "left": max(limit - used, 0) if limit else None,
                    "resets_at": usage[key]["resets_at"], "what": LIMITS[key]}
    return out


def learned_state(facts: dict) -> str:
    """How full the provider's own limits are, from its last headers."""
    worst = "ok"
    for unit in ("requests", "tokens"):
        limit, left = facts.get(f"{unit}_limit"), facts.get(f"{unit}_remaining")
        if left == 0:
            return "at"
        if limit and left is not None and left <= limit * (1 - NEAR):
            worst = "near"
    return worst


def state_of(rows: dict, facts: dict, resting: float | None, blocked: float | None) -> str:
    """ok, near (a limit 80% used) or at (a call would have to wait now)."""
    if resting or blocked:
        return "at"
    states = [learned_state(facts)]
    for row in rows.values():
        if row["limit"]:
            states.append("at" if row["used"] >= row["limit"] else "near" if row["used"] >= row["limit"] * NEAR
                          else "ok")
    return max(states, key=STATES.index)


def entry(bench: LimitsParts, scope: str, name: str, set_limits: dict, known: bool, model=None) -> dict:
    usage = bench.quota.usage(scope, name)
    rows = windows(set_limits, usage)
    book = bench.registry.transport.limits
    if model is not None:
        facts, resting, blocked = book.get(model.endpoint, model.served), bench.quota.rested(model), \
            bench.quota.until(model)
    else:
        facts, resting = book.get(name), bench.resting.until(name) if known else None
        blocked = None
    out = {"scope": scope, "name": name, "known": known, "set": set_limits, "windows": rows,
           "learned": {k: v for k, v in facts.items() if isinstance(v, (int, float))},
           "resting_until": resting, "blocked_until": blocked, "state": state_of(rows, facts, resting, blocked)}
    if model is not None:
        out["connection"] = model.endpoint
    return out


def limits_view(bench: LimitsParts) -> dict:
    """Every connection; the models with a limit set, a call this month, or a rest."""
    try:
        bench.config.view(userset.FILE)
        problem = None
    except ConfigError as e:
        problem = e.message
    stored = bench.quota.set_limits()
    endpoints, models = bench.registry.endpoints(), bench.registry.models()
    bench.resting.refresh()
    connections = [entry(bench, CONNECTION, name, stored["connections"].get(name) or {}, name in endpoints)
                   for name in sorted(set(endpoints) | set(stored["connections"]))]
    shown = []
    for alias in sorted(set(models) | set(stored["models"])):
        model = models.get(alias)
        row = entry(bench, MODEL, alias, stored["models"].get(alias) or {}, model is not None, model)
        if row["set"] or row["windows"]["rpmonth"]["used"] or row["blocked_until"]:
            shown.append(row)
    settings = bench.settings()
    return {"connections": connections, "models": shown, "limits": dict(LIMITS), "model_names": sorted(models),
            "waits": {k: settings[k] for k in ("limit_wait_seconds", "limit_wait_scheduled_seconds")},
            "file": str(bench.config.path(userset.FILE)), "problem": problem, "money": money_view(bench)}


def money_view(bench: LimitsParts) -> dict:
    """The budgets with this month's spend; the models no dollar budget limits, their price unknown (only when some
    budget is set); the collections and keys a budget may be put on."""
    out = bench.budgets.view()
    models = bench.registry.models()
    out["unpriced"] = sorted(alias for alias, model in models.items() if None in bench.catalog.price(model)[:2]) \
        if out["budgets"] else []
    out["collections"] = sorted(bench.collections.all())
    out["keys"] = sorted(k.name for k in bench.gateway_keys.list() if k.revoked is None)
    return out


def get_limits(req: Request, bench: LimitsParts) -> Response:
    return Response.json(limits_view(bench))


def one(bench: LimitsParts, scope: str, name: str) -> dict:
    """What NAME has now: its limits with their use (a connection or a model), and its budget with this month's
    spend."""
    stored = bench.quota.set_limits()[SCOPES[scope]].get(name) or {}
    budget = next((b for b in bench.budgets.view()["budgets"] if (b["scope"], b["name"]) == (scope, name)), None)
    if scope not in RATED:
        return {"scope": scope, "name": name, "known": True, "set": stored, "budget": budget}
    model = bench.registry.models().get(name) if scope == MODEL else None
    known = model is not None if scope == MODEL else name in bench.registry.endpoints()
    return {**entry(bench, scope, name, stored, known, model), "budget": budget}


def target(bench: LimitsParts, name, scope) -> tuple[str, str]:
    """(scope, name) a request means: a connection or a model (found by name), or a collection, a gateway key or
    the whole bench (said by `scope`)."""
    stored = bench.quota.set_limits()
    if scope in (COLLECTION, KEY, BENCH):
        known = set(bench.collections.all()) if scope == COLLECTION else \
            {k.name for k in bench.gateway_keys.list() if k.revoked is None} if scope == KEY else set()
        return userset.resolve_other(scope, name, known | set(stored[SCOPES[scope]]))
    return userset.resolve(bench.registry, name, scope, stored)


def change(bench: LimitsParts, body: dict, name) -> dict:
    """Set (or, with null, clear) the limits and budget the body names, on NAME; what NAME has now."""
    if not isinstance(body, dict):
        body = {}
    changes = userset.changes(body, body.get("scope"))   # a bad value is a 400 before an unknown name is a 404
    scope, name = target(bench, name, body.get("scope"))
    userset.apply(bench.config, scope, name, changes)
    return one(bench, scope, name)


def set_limits(req: Request, bench: LimitsParts) -> Response:
    """{"name": NAME, "scope"?: connection|model|collection|key|bench, "rpm": 20, "tpd": null, "usd_month": 5, ...}:
    null clears that limit."""
    body = req.json()
    return Response.json(change(bench, body, body.get("name") if isinstance(body, dict) else None))


def put_limits(req: Request, bench: LimitsParts) -> Response:
    """PUT /bench/limits/NAME {"scope"?, "usd_month": 5, "rpm": 20, ...}: the same as POST, NAME in the path."""
    return Response.json(change(bench, req.json(), req.params["name"]))


def clear_limits(req: Request, bench: LimitsParts) -> Response:
    """Every limit and the budget NAME has (?scope= when NAME is both a connection and a model, or is a collection, a
    key or the bench)."""
    scope, name = target(bench, req.params["name"], req.query.get("scope"))
    keys = list(LIMITS) + [USD] if scope in RATED else [USD]
    userset.apply(bench.config, scope, name, {key: None for key in keys})
    return Response.json(one(bench, scope, name))


ENTRY = obj(("scope", "name", "set"), scope=STRING, name=STRING, set={"type": "object"},
            windows={"type": "object"}, state={"enum": list(STATES)}, budget={"type": ["object", "null"]})
SCOPE = {"enum": list(SCOPES)}
CHANGES = {**{key: {"type": ["integer", "null"], "minimum": 1} for key in LIMITS},
           USD: {"type": ["number", "null"], "minimum": 0}}
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/limits", get_limits, "bench", ADMIN, doc=op(
        "Every connection's and model's rate limits: what is set, used and left, when each resets, and what the "
        "provider's headers said; every monthly budget with this month's spend (money).",
        ok=obj(("connections", "models"), connections={"type": "array"}, models={"type": "array"}))),
    Route("POST", "/bench/limits", set_limits, "bench", ADMIN, doc=op(
        "Set (or, with null, clear) a connection's or a model's limits, or a monthly budget in dollars (usd_month) "
        "on either, a collection, a gateway key or the whole bench (scope bench).",
        body=obj(("name",), name=STRING, scope=SCOPE, **CHANGES), ok=ENTRY)),
    Route("PUT", "/bench/limits/{name:path}", put_limits, "bench", ADMIN, doc=op(
        "Set (or, with null, clear) NAME's limits or monthly budget: as POST /bench/limits, NAME in the path.",
        body=obj((), scope=SCOPE, **CHANGES), ok=ENTRY)),
    Route("DELETE", "/bench/limits/{name:path}", clear_limits, "bench", ADMIN, doc=op(
        "Clear every limit and the budget of a connection, a model, a collection, a key or the bench.",
        query={"scope": SCOPE}, ok=ENTRY)),
]
