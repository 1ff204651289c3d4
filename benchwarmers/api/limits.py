"""/bench/limits: every connection's and model's rate limits (the user's, with what is used and when each resets,
and what the provider's headers said); set and clear the user's."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..errors import ConfigError
from ..roster.limits import userset
from ..roster.limits.quota import Quota
from ..roster.limits.resting import Resting
from ..roster.limits.userset import CONNECTION, LIMITS, MODEL, SCOPES
from ..roster.registry import Registry
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
    registry: Registry
    resting: Resting


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
            "file": str(bench.config.path(userset.FILE)), "problem": problem}


def get_limits(req: Request, bench: LimitsParts) -> Response:
    return Response.json(limits_view(bench))


def one(bench: LimitsParts, scope: str, name: str) -> dict:
    model = bench.registry.models().get(name) if scope == MODEL else None
    known = model is not None if scope == MODEL else name in bench.registry.endpoints()
    return entry(bench, scope, name, bench.quota.set_limits()[SCOPES[scope]].get(name) or {}, known, model)


def set_limits(req: Request, bench: LimitsParts) -> Response:
    """{"name": NAME, "scope"?: connection|model, "rpm": 20, "tpd": null, ...}: null clears that limit."""
    body = req.json()
    change = userset.changes(body)
    scope, name = userset.resolve(bench.registry, body.get("name"), body.get("scope"), bench.quota.set_limits())
    userset.apply(bench.config, scope, name, change)
    return Response.json(one(bench, scope, name))


def clear_limits(req: Request, bench: LimitsParts) -> Response:
    """Every limit NAME has (?scope= when NAME is both a connection and a model)."""
    scope, name = userset.resolve(bench.registry, req.params["name"], req.query.get("scope"),
                                  bench.quota.set_limits())
    userset.apply(bench.config, scope, name, {key: None for key in LIMITS})
    return Response.json(one(bench, scope, name))


ENTRY = obj(("scope", "name", "set", "windows", "state"), scope=STRING, name=STRING, set={"type": "object"},
            windows={"type": "object"}, state={"enum": list(STATES)})
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/limits", get_limits, "bench", ADMIN, doc=op(
        "Every connection's and model's rate limits: what is set, used and left, when each resets, and what the "
        "provider's headers said.", ok=obj(("connections", "models"), connections={"type": "array"},
                                           models={"type": "array"}))),
    Route("POST", "/bench/limits", set_limits, "bench", ADMIN, doc=op(
        "Set (or, with null, clear) a connection's or a model's limits.",
        body=obj(("name",), name=STRING, scope={"enum": [CONNECTION, MODEL]},
                 **{key: {"type": ["integer", "null"], "minimum": 1} for key in LIMITS}), ok=ENTRY)),
    Route("DELETE", "/bench/limits/{name:path}", clear_limits, "bench", ADMIN, doc=op(
        "Clear every limit of a connection or a model.", query={"scope": {"enum": [CONNECTION, MODEL]}}, ok=ENTRY)),
]
