"""Admin API for the model roster: list and find (with the verdict record and the suite scores), onboard, show with
probes, probe, retire, restore."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .. import hubs
from ..catalog import Catalog
from ..core.rankings import Rankings
from ..errors import BadRequest
from ..names import REASON_MOST, check_text
from ..roster import health, healthrecord, onboard, speed
from ..roster.health import Health
from ..roster.limits.quota import Quota
from ..roster.limits.resting import Resting
from ..roster.onboardqueue import OnboardQueue
from ..roster.registry import Registry
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import Database
from ..suite.service import SuiteService

if TYPE_CHECKING:
    from ..bench import Bench


class ModelViewParts(Protocol):
    """One model as the API shows it: its facts and price, its probes, its rate limits."""
    catalog: Catalog
    db: Database
    quota: Quota


class ModelListParts(ModelViewParts, Protocol):
    """The roster's models, with their record, suite scores and rests."""
    rankings: Rankings
    registry: Registry
    resting: Resting
    suite: SuiteService


class ModelsParts(ModelListParts, Protocol):
    health: Health
    onboard_queue: OnboardQueue


WAIT = 600.0   # seconds POST /bench/models waits for its item before answering 202 with it
MODEL = obj(("alias", "endpoint", "served", "status"), alias=STRING, endpoint=STRING, served=STRING, status=STRING)
ONE = obj(("model",), model=MODEL)


def view(bench: ModelViewParts, model, probe: dict | None = None, perf: dict | None = None) -> dict:
    if probe is None:
        probe = next(iter(health.recent(bench.db, model.alias, 1)), None)
    out = onboard.model_view(model, probe, bench.quota.until(model),   # a provider's rest, or a limit of yours
                             bench.quota.failing(model))               # or its calls keep failing
    out["perf"] = perf if perf is not None else speed.latest(bench.db, [model.alias]).get(model.alias)
    out["catalog"] = bench.catalog.describe(model)
    held = out["catalog"]["held"]
    if held and model.active:
        out["status"], out["status_text"] = "held", f"held: {held['reason']}"
    return out


def models_view(bench: ModelListParts, find: str | None = None) -> dict:
    """The roster, optionally filtered by `find` (any part of alias, served name or endpoint, any case)."""
    needle = (find or "").strip().lower()
    reg = bench.registry
    bench.resting.refresh()   # the admin's view: what the table says now, other processes' rests included
    aliases = list(reg.models())
    last, perf = health.latest(bench.db, aliases), speed.latest(bench.db, aliases)
    record, scores = bench.rankings.models(), bench.suite.store.scores()   # two sources, kept apart
    rows = []
    for alias, model in sorted(reg.models().items()):
        if needle and not any(needle in s.lower() for s in (alias, model.served, model.endpoint)):
            continue
        rows.append({**view(bench, model, last.get(alias), perf.get(alias)),
                     "record": record[alias].to_dict() if alias in record else None,
                     "suite": scores.get(alias)})
    return {"models": rows, "find": needle or None}


def list_models(req: Request, bench: ModelsParts) -> Response:
    return Response.json(models_view(bench, req.query.get("find")))


def add_model(req: Request, bench: ModelsParts) -> Response:
    """One model through the onboarding queue, answered when it is done (the queue runs one model at a time)."""
    body = req.json()
    extra = sorted(set(body) - {"served", "endpoint", "alias", "quick", "ad_hoc"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "Send served, endpoint, alias, quick, ad_hoc.")
    served = body.get("served")
    if not isinstance(served, str) or not served.strip():
        raise BadRequest("Say which model to onboard: its served name.", "e.g. bench onboard gpt-4o-mini")
    mode = "adhoc" if body.get("ad_hoc") else "quick" if body.get("quick") else "full"
    q = bench.onboard_queue
    request = {"models": [served], "mode": mode}
    request.update({k: body[k] for k in ("endpoint", "alias") if body.get(k) is not None})
    [item] = q.enqueue(request)
    [item] = q.wait([item["id"]], WAIT)
    if item["state"] == "failed":
        error = q.error_of(item["id"])
        assert error is not None     # a failed item keeps its fault
        raise error
    if item["state"] != "done":
        return Response.json({"item": item, "note": "Still onboarding; follow it with GET /bench/onboard/"
                                                    f"{item['id']}."}, 202)
    bench.registry.config.look_again()   # the other service on this data folder may have onboarded it
    model = bench.registry.model(item["model"])
    probes = health.recent(bench.db, model.alias, 1)
    return Response.json({"model": view(bench, model, probes[0] if probes else None),
                          "probe": probes[0] if probes else None, "suite": item["suite"], "item": item["id"]}, 201)


def model_view(bench: ModelListParts, alias: str) -> dict:
    """One model with its probes, your verdicts' record, the suite's scores, its speed history and retirement."""
    model = bench.registry.model(alias)
    probes = health.recent(bench.db, model.alias)
    out = view(bench, model, probes[0] if probes else None)
    out["probes"] = probes
    record = bench.rankings.models().get(model.alias)              # the user's verdicts
    out["record"] = record.to_dict() if record else None
    out["suite"] = bench.suite.store.scores(model.alias).get(model.alias)   # the suite's scores, never mixed in
    out["suite_open"] = [{k: r[k] for k in ("id", "status", "reason", "created")}   # owed, queued or running
                         for r in bench.suite.store.open_runs(model.alias)]
    out["perf_history"] = speed.history(bench.db, model.alias)
    found = healthrecord.retirement(bench.db, model.alias)
    out["retirement"] = found if found and not model.active and found["reason"] == model.reason else None
    return {"model": out}


def show_model(req: Request, bench: ModelsParts) -> Response:
    return Response.json(model_view(bench, req.params["alias"]))


def probe_model(req: Request, bench: ModelsParts) -> Response:
    """Probe now; a model that fails for a reason of its own is confirmed once, then retired with evidence."""
    result = bench.health.check(req.params["alias"])
    model = bench.registry.model(req.params["alias"])
    result["model"] = view(bench, model, result.get("confirm") or result["probe"])
    result.pop("model_after", None)
    return Response.json(result)


def retire_model(req: Request, bench: ModelsParts) -> Response:
    body = req.json() if req.body.strip() else {}
    reason = check_text(body.get("reason"), "reason", REASON_MOST)
    from_hub = body.get("from_hub", False)
    if not isinstance(from_hub, bool):
        raise BadRequest("from_hub must be true or false.")
    found = bench.registry.model(req.params["alias"])
    endpoint = bench.registry.endpoints().get(found.endpoint)
    if from_hub and (endpoint is None or not endpoint.hub):
        raise BadRequest(f"{found.alias!r} does not come from a hub.", "Leave from_hub out.")
    hub = None
    if from_hub and endpoint is not None:   # only when asked, and first: a hub that refuses leaves the model as it was
        health.retire_reason(reason)
        hub = {"endpoint": endpoint.name, "removed": hubs.adapter(endpoint).remove(found.served)}
    model = health.retire(bench.registry, req.params["alias"], reason or "")
    return Response.json({"model": view(bench, model), "hub": hub})


def restore_model(req: Request, bench: ModelsParts) -> Response:
    """Probe first: a model comes back only once it answers (an active one is left as it is, with no call)."""
    model, probe = bench.health.restore(req.params["alias"])
    return Response.json({"model": view(bench, model), "probe": probe.to_dict() if probe else None})


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/models", list_models, "bench", ADMIN, doc=op(
        "The roster, each model with its record; `find` matches any part of alias, served name or endpoint.",
        query={"find": STRING}, ok=obj(("models",), models={"type": "array", "items": MODEL}))),
    Route("POST", "/bench/models", add_model, "bench", ADMIN, doc=op(
        "Onboard a model through the onboarding queue: 201 once it is on the bench (its probe answered), 202 "
        "with the queue item while it still runs.", status=201,
        body=obj(("served",), served=STRING, endpoint={"type": ["string", "null"]}, alias={"type": ["string", "null"]},
                 quick={"type": "boolean"}, ad_hoc={"type": "boolean"}),
        ok=obj(("model", "probe"), model=MODEL))),
    Route("GET", "/bench/models/{alias}", show_model, "bench", ADMIN, doc=op(
        "One model with its last probes and its record.", ok=ONE)),
    Route("POST", "/bench/models/{alias}/probe", probe_model, "bench", ADMIN, doc=op(
        "Probe a model now; one that fails for a reason of its own twice is retired.",
        ok=obj(("probe", "model"), model=MODEL))),
    Route("POST", "/bench/models/{alias}/retire", retire_model, "bench", ADMIN, doc=op(
        "Retire a model; with from_hub, also remove it from the hub it came through (never otherwise).",
        body=obj(reason={"type": ["string", "null"]}, from_hub={"type": "boolean"}), body_required=False, ok=ONE)),
    Route("POST", "/bench/models/{alias}/restore", restore_model, "bench", ADMIN, doc=op(
        "Bring a retired model back.", ok=ONE)),
]
