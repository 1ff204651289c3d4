"""Admin API for the model roster: list and find, onboard, show with probes, probe, retire, restore."""
from __future__ import annotations

from ..errors import BadRequest
from ..roster import health, onboard
from ..server.bench import Bench
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route

MODEL = obj(("alias", "endpoint", "served", "status"), alias=STRING, endpoint=STRING, served=STRING, status=STRING)
ONE = obj(("model",), model=MODEL)


def view(bench: Bench, model, probe: dict | None = None) -> dict:
    if probe is None:
        probe = next(iter(health.recent(bench.db, model.alias, 1)), None)
    return onboard.model_view(model, probe, bench.resting.until(model.endpoint, model.served))


def list_models(req: Request, bench: Bench) -> Response:
    """The roster, optionally filtered by `find` (any part of alias, served name or endpoint, any case)."""
    needle = (req.query.get("find") or "").strip().lower()
    reg = bench.registry
    bench.resting.refresh()   # the admin's view: what the table says now, other processes' rests included
    last = health.latest(bench.db)
    record = bench.record.models()
    rows = []
    for alias, model in sorted(reg.models().items()):
        if needle and not any(needle in s.lower() for s in (alias, model.served, model.endpoint)):
            continue
        rows.append({**view(bench, model, last.get(alias)), "record": record.get(alias)})
    return Response.json({"models": rows, "find": needle or None})


def add_model(req: Request, bench: Bench) -> Response:
    body = req.json()
    result = bench.onboarding.onboard(body.get("served"), endpoint=body.get("endpoint"), alias=body.get("alias"),
                                      quick=bool(body.get("quick")), ad_hoc=bool(body.get("ad_hoc")))
    return Response.json(result, 201)


def show_model(req: Request, bench: Bench) -> Response:
    model = bench.registry.model(req.params["alias"])
    probes = health.recent(bench.db, model.alias)
    out = view(bench, model, probes[0] if probes else None)
    out["probes"] = probes
    out["record"] = bench.record.models().get(model.alias)
    return Response.json({"model": out})


def probe_model(req: Request, bench: Bench) -> Response:
    """Probe now; a model that fails for a reason of its own is confirmed once, then retired with evidence."""
    result = health.check(bench.registry, bench.db, req.params["alias"])
    model = bench.registry.model(req.params["alias"])
    result["model"] = view(bench, model, result.get("confirm") or result["probe"])
    result.pop("model_after", None)
    return Response.json(result)


def retire_model(req: Request, bench: Bench) -> Response:
    body = req.json() if req.body.strip() else {}
    reason = body.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise BadRequest("reason must be text.")
    model = health.retire(bench.registry, req.params["alias"], reason or "")
    return Response.json({"model": view(bench, model)})


def restore_model(req: Request, bench: Bench) -> Response:
    model = health.restore(bench.registry, req.params["alias"])
    return Response.json({"model": view(bench, model)})


ROUTES = [
    Route("GET", "/bench/models", list_models, "bench", ADMIN, doc=op(
        "The roster, each model with its record; `find` matches any part of alias, served name or endpoint.",
        query={"find": STRING}, ok=obj(("models",), models={"type": "array", "items": MODEL}))),
    Route("POST", "/bench/models", add_model, "bench", ADMIN, doc=op(
        "Onboard a model: registered only if its probe answers.", status=201,
        body=obj(("served",), served=STRING, endpoint={"type": ["string", "null"]}, alias={"type": ["string", "null"]},
                 quick={"type": "boolean"}, ad_hoc={"type": "boolean"}),
        ok=obj(("model", "probe"), model=MODEL))),
    Route("GET", "/bench/models/{alias}", show_model, "bench", ADMIN, doc=op(
        "One model with its last probes and its record.", ok=ONE)),
    Route("POST", "/bench/models/{alias}/probe", probe_model, "bench", ADMIN, doc=op(
        "Probe a model now; one that fails for a reason of its own twice is retired.",
        ok=obj(("probe", "model"), model=MODEL))),
    Route("POST", "/bench/models/{alias}/retire", retire_model, "bench", ADMIN, doc=op(
        "Retire a model.", body=obj(reason={"type": ["string", "null"]}), body_required=False, ok=ONE)),
    Route("POST", "/bench/models/{alias}/restore", restore_model, "bench", ADMIN, doc=op(
        "Bring a retired model back.", ok=ONE)),
]
