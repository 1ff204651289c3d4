"""Onboarding steps: find the endpoint serving a model, pick its alias, probe it, register it only if it answers.

The onboarding queue (onboard_queue.py) runs these steps one model at a time; nothing here is saved unless the
probe answers. What happens to the suite step depends on the mode: "full" says the suite is not available in this
version, "quick" records that the model owes the suite, "adhoc" owes nothing (an ad hoc model is
never called by the bench unprompted).
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from . import health
from .errors import BadRequest, BenchError, Conflict, NotFound, UpstreamFailed
from .registry import Endpoint, Model, Registry, check_name


def list_timeouts():
    from .providers.transport import Timeouts
    return Timeouts(connect=10, first_byte=30, idle=30)


def listing(reg: Registry, endpoint: Endpoint) -> list[dict]:
    """What one endpoint serves; faults raised as one-line UpstreamFailed that say what to do."""
    try:
        return reg.provider(endpoint).list_models(timeouts=list_timeouts())
    except UpstreamFailed as e:
        raise health.explain(e, endpoint, f"Listing the models of endpoint {endpoint.name!r} failed") from None


def listings(reg: Registry, names: list[str] | None = None) -> dict[str, dict]:
    """name -> {"models": [...]} or {"error": one line}, every endpoint asked at once."""
    endpoints = [e for n, e in reg.endpoints().items() if names is None or n in names]

    def one(endpoint: Endpoint) -> tuple[str, dict]:
        try:
            return endpoint.name, {"models": listing(reg, endpoint)}
        except BenchError as e:
            return endpoint.name, {"error": health.one_line(str(e))}
    if not endpoints:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(endpoints))) as pool:
        return dict(pool.map(one, endpoints))


def locate(reg: Registry, served: str, endpoint: str | None) -> tuple[Endpoint, dict]:
    """(the endpoint that serves `served`, its list entry); refuses when none or several do."""
    if endpoint:
        found = reg.endpoint(endpoint)
        entry = next((m for m in listing(reg, found) if m.get("id") == served), None)
        if entry is None:
            raise NotFound(f"Endpoint {endpoint!r} does not serve {served!r}.",
                           "`bench candidates` lists what it serves; check the exact served name.")
        return found, entry
    if not reg.endpoints():
        raise NotFound("There are no endpoints yet.", "Add one first: bench endpoint add NAME --base URL.")
    lists = listings(reg)
    hits = [(n, m) for n, d in lists.items() for m in d.get("models", []) if m.get("id") == served]
    if len(hits) > 1:
        names = ", ".join(sorted(n for n, _ in hits))
        raise BadRequest(f"{served!r} is served by several endpoints ({names}).",
                         "Say which with --endpoint NAME.")
    if not hits:
        failed = "; ".join(f"{n}: {d['error']}" for n, d in sorted(lists.items()) if d.get("error"))
        raise NotFound(f"No endpoint serves {served!r}." + (f" Some could not be asked ({failed})." if failed else ""),
                       "`bench candidates` lists what each endpoint serves; check the exact served name.")
    name, entry = hits[0]
    return reg.endpoint(name), entry


def facts_from(entry: dict) -> dict:
    return {k: entry[k] for k in ("context_window", "max_output", "vision", "tools", "price_in", "price_out")
            if entry.get(k) is not None}


def pick_alias(reg: Registry, served: str, endpoint: str, alias: str | None) -> str:
    for existing in reg.models().values():
        if existing.endpoint == endpoint and existing.served == served:
            raise Conflict(f"{served!r} on {endpoint!r} is already on the bench as {existing.alias!r}.",
                           f"`bench model restore {existing.alias}` brings it back if it is retired.")
    if alias is None:
        return reg.unique_alias(served)
    check_name(alias, "Alias")
    if alias in reg.models():
        raise Conflict(f"The alias {alias!r} is taken.", "Pick another with --alias.")
    return alias


# ---- the steps the queue runs ----------------------------------------------------------------------

MODES = ("full", "quick", "adhoc")
SUITE = {"full": "not available: this version has no suite; the probe is the whole onboarding",
         "quick": "owed: the model owes the suite, which this version does not have yet",
         "adhoc": "none: an ad hoc model is never called by the bench unprompted"}


def probe(ctx, found: Endpoint, entry: dict, alias: str, ad_hoc: bool):
    """Send the one-word probe to a model not yet registered. Returns (model, probe); raises when it fails."""
    served = entry.get("id")
    model = Model(alias, found.name, served, ad_hoc=bool(ad_hoc), facts=facts_from(entry), added=time.time())
    result = health.run_probe(health.registry(ctx), model, kind="onboard")
    if not result.ok:
        kind = result.error_kind if result.error_kind in UpstreamFailed.kinds else "bad_response"
        raise UpstreamFailed(kind, f"{served!r} on {found.name!r} did not pass its probe: {result.error}. "
                             "Nothing was registered.", health.advice(kind, found))
    return model, result


def register(ctx, model: Model, result) -> None:
    """Save a model that passed its probe, and the probe with it; refuses when the alias was taken meanwhile."""
    reg = health.registry(ctx)
    pick_alias(reg, model.served, model.endpoint, model.alias)
    reg.save_model(model)
    health.record(ctx.db, result)


def model_view(model: Model, probe: dict | None = None, resting: float | None = None) -> dict:
    """A model as the admin API shows it: status text says active, resting until T, or retired with reason."""
    status = model.status
    text = status
    if model.status == "retired":
        text = f"retired: {model.reason}" if model.reason else "retired"
    elif resting:
        status, text = "resting", "resting until " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(resting))
    return {"alias": model.alias, "endpoint": model.endpoint, "served": model.served, "status": status,
            "status_text": text, "reason": model.reason, "retired_at": model.retired_at, "resting_until": resting,
            "ad_hoc": model.ad_hoc, "facts": model.facts, "added": model.added, "last_probe": probe}
