"""Admin API for the model roster: list and find, onboard, show with probes, probe, retire, restore."""
from __future__ import annotations

from .. import health, onboard
from ..onboard_queue import queue
from ..errors import BadRequest
from ..server.context import Context
from ..server.messages import Request, Response
from ..server.routes import ADMIN, Route

WAIT = 600.0   # seconds POST /bench/models waits for its item before answering 202 with it


def view(ctx: Context, model, probe: dict | None = None) -> dict:
    if probe is None:
        probe = next(iter(health.recent(ctx.db, model.alias, 1)), None)
    return onboard.model_view(model, probe, health.resting_until(ctx.db, model))


def list_models(req: Request, ctx: Context) -> Response:
    """The roster, optionally filtered by `find` (any part of alias, served name or endpoint, any case)."""
    needle = (req.query.get("find") or "").strip().lower()
    reg = health.registry(ctx)
    last = health.latest(ctx.db)
    rows = []
    for alias, model in sorted(reg.models().items()):
        if needle and not any(needle in s.lower() for s in (alias, model.served, model.endpoint)):
            continue
        rows.append(view(ctx, model, last.get(alias)))
    return Response.json({"models": rows, "find": needle or None})


def add_model(req: Request, ctx: Context) -> Response:
    """One model through the onboarding queue, answered when it is done (the queue runs one model at a time)."""
    body = req.json()
    extra = sorted(set(body) - {"served", "endpoint", "alias", "quick", "ad_hoc"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "Send served, endpoint, alias, quick, ad_hoc.")
    served = body.get("served")
    if not isinstance(served, str) or not served.strip():
        raise BadRequest("Say which model to onboard: its served name.", "e.g. bench onboard gpt-4o-mini")
    mode = "adhoc" if body.get("ad_hoc") else "quick" if body.get("quick") else "full"
    q = queue(ctx)
    request = {"models": [served], "mode": mode}
    request.update({k: body[k] for k in ("endpoint", "alias") if body.get(k) is not None})
    [item] = q.enqueue(request)
    [item] = q.wait([item["id"]], WAIT)
    if item["state"] == "failed":
        raise q.error_of(item["id"])
    if item["state"] != "done":
        return Response.json({"item": item, "note": "Still onboarding; follow it with GET /bench/onboard/"
                                                    f"{item['id']}."}, 202)
    model = health.registry(ctx).model(item["model"])
    probes = health.recent(ctx.db, model.alias, 1)
    return Response.json({"model": view(ctx, model, probes[0] if probes else None),
                          "probe": probes[0] if probes else None, "suite": item["suite"], "item": item["id"]}, 201)


def show_model(req: Request, ctx: Context) -> Response:
    model = health.registry(ctx).model(req.params["alias"])
    probes = health.recent(ctx.db, model.alias)
    out = view(ctx, model, probes[0] if probes else None)
    out["probes"] = probes
    return Response.json({"model": out})


def probe_model(req: Request, ctx: Context) -> Response:
    """Probe now; a model that fails for a reason of its own is confirmed once, then retired with evidence."""
    result = health.check(ctx, req.params["alias"])
    model = health.registry(ctx).model(req.params["alias"])
    result["model"] = view(ctx, model, result.get("confirm") or result["probe"])
    result.pop("model_after", None)
    return Response.json(result)


def retire_model(req: Request, ctx: Context) -> Response:
    body = req.json() if req.body.strip() else {}
    reason = body.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise BadRequest("reason must be text.")
    model = health.retire(health.registry(ctx), req.params["alias"], reason or "")
    return Response.json({"model": view(ctx, model)})


def restore_model(req: Request, ctx: Context) -> Response:
    model = health.restore(health.registry(ctx), req.params["alias"])
    return Response.json({"model": view(ctx, model)})


ROUTES = [
    Route("GET", "/bench/models", list_models, "bench", ADMIN),
    Route("POST", "/bench/models", add_model, "bench", ADMIN),
    Route("GET", "/bench/models/{alias}", show_model, "bench", ADMIN),
    Route("POST", "/bench/models/{alias}/probe", probe_model, "bench", ADMIN),
    Route("POST", "/bench/models/{alias}/retire", retire_model, "bench", ADMIN),
    Route("POST", "/bench/models/{alias}/restore", restore_model, "bench", ADMIN),
]
