"""Onboarding: find the endpoint serving a model, probe it, and register it only once it answers; one at a time.

Onboarding runs synchronously inside the request that asks for it (a probe is one short call) and is recorded
as a job in the `jobs` table, whose id comes back with the result. Only one model onboards at a time: a second
request waits for the first (up to LOCK_WAIT seconds), then is refused with 409. This version has no suite, so
the probe is the whole onboarding, with or without `quick`; the result's `suite` field says so.
"""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from . import health
from ..errors import BadRequest, BenchError, Conflict, NotFound, UpstreamFailed
from ..providers import Timeouts
from ..names import check_name
from .registry import Endpoint, Model, Registry

LOCK_WAIT = 300.0
SUITE_PENDING = "not run: this version has no suite; the probe is the whole onboarding"
SUITE_QUICK = "not run (quick): the probe is the whole onboarding"


LIST_TIMEOUTS = Timeouts(connect=10, first_byte=30, idle=30)   # listing an endpoint's models


def listing(reg: Registry, endpoint: Endpoint) -> list[dict]:
    """What one endpoint serves; faults raised as one-line UpstreamFailed that say what to do."""
    try:
        return reg.provider(endpoint).list_models(timeouts=LIST_TIMEOUTS)
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


# ---- jobs ------------------------------------------------------------------------------------------

def start_job(db, name: str) -> int:
    return db.call(lambda c: c.execute("INSERT INTO jobs (name, started, status) VALUES (?, ?, 'running')",
                                       (name, time.time())).lastrowid)


def finish_job(db, job: int, status: str, detail: dict) -> None:
    db.call(lambda c: c.execute("UPDATE jobs SET finished = ?, status = ?, detail = ? WHERE id = ?",
                                (time.time(), status, json.dumps(detail), job)))


# ---- the one entry point ----------------------------------------------------------------------------

class Onboarding:
    """The service's onboarding: one model at a time, each run recorded as a job."""

    def __init__(self, registry: Registry, db):
        self.registry = registry
        self.db = db
        self._lock = threading.Lock()

    def onboard(self, served, endpoint: str | None = None, alias: str | None = None, quick: bool = False,
                ad_hoc: bool = False) -> dict:
        """Register `served` and probe it; nothing is saved unless the probe answers."""
        if not isinstance(served, str) or not served.strip():
            raise BadRequest("Say which model to onboard: its served name.", "e.g. bench onboard gpt-4o-mini")
        if endpoint is not None and not isinstance(endpoint, str) or alias is not None and not isinstance(alias, str):
            raise BadRequest("endpoint and alias must be strings.")
        if alias:
            check_name(alias, "Alias")   # before any upstream is asked
        if not self._lock.acquire(timeout=LOCK_WAIT):
            raise Conflict("Another model is still onboarding.", "Try again when it is done.")
        try:
            job = start_job(self.db, f"onboard {served.strip()}")
            try:
                result = onboard_one(self.registry, self.db, served.strip(), endpoint, alias, quick, ad_hoc)
            except BenchError as e:
                finish_job(self.db, job, "failed", {"served": served, "error": health.one_line(str(e))})
                raise
            result["job"] = job
            finish_job(self.db, job, "done", {"served": served, "alias": result["model"]["alias"]})
            return result
        finally:
            self._lock.release()


def onboard_one(reg: Registry, db, served: str, endpoint: str | None, alias: str | None, quick: bool,
                ad_hoc: bool) -> dict:
    found, entry = locate(reg, served, endpoint or None)
    alias = pick_alias(reg, served, found.name, alias or None)
    model = Model(alias, found.name, served, ad_hoc=bool(ad_hoc), facts=facts_from(entry), added=time.time())
    probe = health.run_probe(reg, model, kind="onboard")
    if not probe.ok:
        kind = probe.error_kind
        raise UpstreamFailed(kind, f"{served!r} on {found.name!r} did not pass its probe: {probe.error}. "
                             "Nothing was registered.", health.advice(kind, found))
    reg.save_model(model)
    health.record(db, probe)
    return {"model": model_view(model, probe.to_dict()), "probe": probe.to_dict(),
            "suite": SUITE_QUICK if quick else SUITE_PENDING}


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
