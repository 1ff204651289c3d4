"""Onboarding's steps: find the endpoint serving a model, pick its alias, probe it, register it only if it answers.

The onboarding queue (onboardqueue.py) runs these steps through the bench's one Onboarding, one model at a time, and
says after each step where the item is. Nothing is saved unless the probe answers; the probe, and the quick speed
measure after it, go through the bench's Dialer, as every other call to a member. The last step is the suite's, by
mode: "full" runs the suite for the model now (through the bench's suite, with progress), "quick" records a suite
run the model owes (the scheduler's suite job plays it), "adhoc" owes nothing (an ad hoc model is never called by
the bench unprompted).
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from . import health, speed
from .. import hubs
from ..errors import BadRequest, BenchError, Conflict, NotFound, QuotaRefused, UpstreamFailed
from ..names import check_name
from ..providers import Timeouts
from ..redaction import names_a_key
from ..words import plural
from .registry import Endpoint, Model, Registry, close_names

LIST_TIMEOUTS = Timeouts(connect=10, first_byte=30, idle=30)   # listing an endpoint's models
HUB_WAITS = (0.0, 0.3, 0.7, 1.5, 3.0)     # seconds before each reading of a hub's list after adding to it: a hub
#                                          may reload its config, or cache its list, for a moment


def listing(reg: Registry, endpoint: Endpoint) -> list[dict]:
    """What one endpoint serves; faults raised as one-line UpstreamFailed that say what to do."""
    try:
        models = reg.provider(endpoint).list_models(timeouts=LIST_TIMEOUTS)
    except UpstreamFailed as e:
        raise health.explain(e, endpoint, f"Listing the models of endpoint {endpoint.name!r} failed") from None
    reg.note_listing(endpoint, models)
    return models


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


def served_as(asked: str, listed: str) -> bool:
    """Whether a listed name is the one asked for: the same, or its `:latest` when the name asked carries no tag
    (Ollama lists `llama3.2:latest` for `llama3.2`)."""
    return listed == asked or (":" not in asked.rsplit("/", 1)[-1] and listed == asked + ":latest")


def same_name(a: str, b: str) -> bool:
    """Two names asked for are one model (`llama3.2` and `llama3.2:latest`)."""
    return served_as(a, b) or served_as(b, a)


def find_entry(models: list[dict], served: str) -> dict | None:
    """The list entry for `served`: the exact name first, else its `:latest`."""
    exact = next((m for m in models if m.get("id") == served), None)
    return exact or next((m for m in models if served_as(served, str(m.get("id")))), None)


def not_served(served: str, where: str, listed) -> NotFound:
    """No such model: the close names among those listed, else where to look."""
    close = close_names(served, {str(m.get("id")) for m in listed})
    hint = ("Did you mean " + " or ".join(repr(c) for c in close) + "?" if close else
            "`bench candidates` lists what each endpoint serves; check the exact served name.")
    return NotFound(f"{where} {served!r}.", hint)


def locate(reg: Registry, served: str, endpoint: str | None) -> tuple[Endpoint, dict]:
    """(the endpoint that serves `served`, its list entry); refuses when none or several do."""
    if endpoint:
        found = reg.endpoint(endpoint)
        models = listing(reg, found)
        entry = find_entry(models, served)
        if entry is None:
            raise not_served(served, f"Endpoint {endpoint!r} does not serve", models)
        return found, entry
    if not reg.endpoints():
        raise NotFound("There are no endpoints yet.", "Add one first: bench endpoint add NAME --base URL.")
    lists = listings(reg)
    hits = [(n, e) for n, d in lists.items() for e in [find_entry(d.get("models", []), served)] if e]
    if len(hits) > 1:
        names = ", ".join(sorted(n for n, _ in hits))
        raise BadRequest(f"{served!r} is served by several endpoints ({names}).",
                         "Say which with --endpoint NAME.")
    if not hits:
        failed = "; ".join(f"{n}: {d['error']}" for n, d in sorted(lists.items()) if d.get("error"))
        listed = [m for d in lists.values() for m in d.get("models", [])]
        raise not_served(served, ("Some endpoints could not be asked (" + failed + "), and no other serves"
                                  if failed else "No endpoint serves"), listed)
    name, entry = hits[0]
    return reg.endpoint(name), entry


def facts_from(entry: dict) -> dict:
    return {k: entry[k] for k in ("context_window", "max_output", "vision", "tools", "price_in", "price_out")
            if entry.get(k) is not None}


def refuse_duplicate(reg: Registry, served: str, endpoint: str | None) -> None:
    """A model already on the bench is refused before any endpoint is asked (`endpoint` None: on any of them)."""
    for existing in reg.models().values():
        if (endpoint is None or existing.endpoint == endpoint) and served_as(served, existing.served):
            other = "" if endpoint else " To add it from another endpoint too, say which with --endpoint NAME."
            raise Conflict(f"{served!r} on {existing.endpoint!r} is already on the bench as {existing.alias!r}.",
                           f"`bench model restore {existing.alias}` brings it back if it is retired.{other}")


def pick_alias(reg: Registry, served: str, endpoint: str, alias: str | None) -> str:
    refuse_duplicate(reg, served, endpoint)
    if alias is None:
        return reg.unique_alias(served)
    check_name(alias, "Alias")
    if alias in reg.models():
        raise Conflict(f"The alias {alias!r} is taken.", "Pick another with --alias.")
    return alias


# ---- the steps, in the order the queue runs them -------------------------------------------------

MODES = ("full", "quick", "adhoc")
OWED = ("owed: the scheduler's suite job plays it while the scheduler is on; `bench suite run --model {alias}` plays "
        "it now")
NEVER = "none: an ad hoc model is never called by the bench unprompted"


def suite_words(run: dict, alias: str) -> str:
    """What a full onboarding's suite run came to, in one line."""
    where = f"{run['done']} of {plural(run['total'], 'item')} (run {run['id']})"
    if run["status"] == "done":
        if not run["total"]:
            return f"done: no ready suite task to run (run {run['id']})"
        scores = run.get("scores") or {}
        said = [f"{purpose} {round(scores[purpose]['score'] * 100)}%" for purpose in ("review", "claims")
                if scores.get(purpose) and scores[purpose]["score"] is not None]
        return f"done: {where}" + (f"; {', '.join(said)}" if said else "")
    why = f": {run['error']}" if run.get("error") else ""
    if run["status"] in ("interrupted", "owed", "queued"):
        return (f"{run['status']} after {where}{why}; the run stays open: the scheduler's suite job or `bench suite "
                f"run --model {alias}` resumes it")
    return f"{run['status']} after {where}{why}; `bench suite run --model {alias}` runs it again"


class Onboarding:
    """The service's onboarding steps over its registry and database; the queue runs them one model at a time.
    `dialer` is the bench's Dialer (the probe goes through it); `suite` the bench's SuiteService (run_for_model,
    owe, held)."""

    def __init__(self, registry: Registry, db, dialer, suite, provider_of: Callable | None = None):
        self.registry = registry
        self.db = db
        self.dialer = dialer
        self.suite_service = suite
        self.provider_of = provider_of or (lambda base_url: None)   # a base URL -> its catalog provider id
        self.wait = time.sleep

    def through_hub(self, served: str, endpoint: str | None, via: str | None, log: Callable) -> str:
        """Step 0, for a hub named as the endpoint: a model the hub does not list yet is added through its admin
        API from the source `via` names, and its list read again; the name the hub lists it under."""
        found = self.registry.endpoint(endpoint) if endpoint else None
        if found is None or not found.hub or find_entry(listing(self.registry, found), served):
            return served
        hub = hubs.adapter(found)
        source = hubs.pick(hubs.sources(hub, self.provider_of), via, served, hub)
        on_hub = hub.add(served, source)
        log(f"added {served} to {hub.name} of endpoint {found.name} from {source.label} through its admin API "
            f"(as {on_hub}); reading its model list again")
        for pause in HUB_WAITS:
            self.wait(pause)
            if find_entry(listing(self.registry, found), on_hub):
                return on_hub
        raise NotFound(f"{hub.name} of endpoint {found.name!r} took {served!r}, but its model list does not show "
                       f"{on_hub!r}.", "Its API key may not see the model (check the hub's access settings for it); "
                                       "queue it again once the hub lists it.")

    def check_new(self, served: str, endpoint: str | None, alias: str | None, via: str | None = None) -> None:
        """Refuse, before anything is queued, a model already on the bench, an unknown endpoint, a taken alias, a
        served name that holds a provider key, or a `via` with no hub to take it (it would be passed over without
        a word)."""
        if names_a_key(served) or names_a_key(alias or ""):
            raise BadRequest("That served name (or alias) holds a provider key; it is not put on the bench.",
                             "Onboard the model under its real served name (bench candidates lists them).")
        reg = self.registry
        found = reg.endpoint(endpoint) if endpoint else None
        if via and (found is None or not found.hub):
            fix = (f"Endpoint {found.name!r} is no hub: leave --via out." if found else
                   "Give the hub endpoint (--endpoint NAME, one added with --hub), or leave --via out.")
            raise BadRequest(f"via {via!r} names a hub's source, and {served!r} is not onboarded through a hub.", fix)
        if not endpoint and not reg.endpoints():
            raise NotFound("There are no endpoints yet.", "Add one first: bench endpoint add NAME --base URL.")
        refuse_duplicate(reg, served, endpoint or None)
        if alias and alias in reg.models():
            raise Conflict(f"The alias {alias!r} is taken.", "Pick another alias.")

    def locate(self, served: str, endpoint: str | None) -> tuple[Endpoint, dict]:
        """Step 1: (the endpoint that serves `served`, its list entry)."""
        return locate(self.registry, served, endpoint or None)

    def pick_alias(self, served: str, endpoint: str, alias: str | None) -> str:
        """Step 2: the alias it joins under (the one asked for, or one made from the served name)."""
        return pick_alias(self.registry, served, endpoint, alias or None)

    def probe(self, found: Endpoint, entry: dict, alias: str, ad_hoc: bool) -> tuple[Model, health.Probe]:
        """Step 3: the one-word probe to a model not yet registered; raises when it does not answer."""
        served = entry["id"]             # (located by it)
        model = Model(alias, found.name, served, ad_hoc=bool(ad_hoc), facts=facts_from(entry), added=time.time())
        result = health.run_probe(self.registry, model, kind="onboard", dialer=self.dialer)
        if not result.ok:
            kind = result.error_kind
            assert kind is not None      # a failed probe says how
            raise UpstreamFailed(kind, f"{served!r} on {found.name!r} did not pass its probe: {result.error}. "
                                 "Nothing was registered.", health.advice(kind, found))
        return model, result

    def measure(self, model: Model, mode: str) -> tuple[speed.Figure | None, str]:
        """Step 3b: time a few dozen tokens (quick and full onboarding, for a model that is not held), so the
        model's first panel asks it for what it writes in `panel_seconds` rather than for a cap sized for no one;
        (the figure, or None when there is none to record; what became of it, in one line)."""
        modest = (f"its panel cap is {speed.UNMEASURED:,} output tokens until its speed is measured (the perf job, or "
                  "Measure speed now)")
        if mode == "adhoc":
            return None, f"speed: not measured (an ad hoc model is called only when asked); {modest}"
        if self.suite_service.held(model.alias):
            return None, f"speed: not measured (held until its price is confirmed); {modest}"
        try:
            fig = speed.measure(model, "quick", self.dialer)
        except QuotaRefused as e:
            return None, f"speed: not measured ({health.one_line(e.message)}); {modest}"
        if not fig.ok:
            return fig, f"speed: the measure failed ({fig.error}); {modest}"
        tps = f"{fig.tokens_per_second:.1f} tokens/s" if fig.tokens_per_second else "too few tokens to time"
        ttft = f"{fig.ttft:.2f} s to the first token, " if fig.ttft is not None else ""
        return fig, f"speed: {ttft}{tps} ({fig.output_tokens} tokens in {fig.seconds:.1f} s)"

    def register(self, model: Model, result: health.Probe, figure: speed.Figure | None = None) -> None:
        """Step 4: save a model that passed its probe, and the probe and its speed with it; refuses when the alias
        was taken (or the model added) meanwhile."""
        pick_alias(self.registry, model.served, model.endpoint, model.alias)
        self.registry.save_model(model)
        health.record(self.db, result)
        if figure is not None:
            speed.record(self.db, figure)

    def runs_suite(self, alias: str, mode: str) -> bool:
        """Whether step 5 calls the model: a full onboarding of a model that is not held."""
        return mode == "full" and not self.suite_service.held(alias)

    def suite(self, alias: str, mode: str, progress: Callable | None = None) -> str:
        """Step 5, for a model just registered: a full onboarding runs the suite for it now (`progress(run, item)`
        after each item), a quick one records the run it owes; returns what became of the suite, in one line."""
        suite = self.suite_service
        if mode == "adhoc":
            return NEVER
        if self.runs_suite(alias, mode):
            return suite_words(suite.run_for_model(alias, progress=progress, reason="full onboarding"), alias)
        suite.owe(alias, "full onboarding of a held model" if mode == "full" else "quick onboarding")
        if mode == "full":
            return (f"owed: {alias} is held ({suite.held(alias)['reason']}), so it is not called until its price "
                    "is confirmed; the scheduler's suite job then plays it")
        return OWED.format(alias=alias)


def model_view(model: Model, probe: dict | None = None, resting: float | None = None,
               failing: tuple[float, str] | None = None) -> dict:
    """A model as the admin API shows it: status text says active, resting until T (`failing`: (T, why) when its
    calls keep failing), or retired with reason."""
    status = model.status
    text = status
    if model.status == "retired":
        text = f"retired: {model.reason}" if model.reason else "retired"
    elif resting or failing:
        why = f", as {failing[1]}" if failing and (not resting or failing[0] >= resting) else ""
        resting = max(resting or 0.0, failing[0] if failing else 0.0)
        status, text = "resting", "resting until " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(resting)) + why
    return {"alias": model.alias, "endpoint": model.endpoint, "served": model.served, "status": status,
            "status_text": text, "reason": model.reason, "retired_at": model.retired_at, "resting_until": resting,
            "ad_hoc": model.ad_hoc, "facts": model.facts, "added": model.added, "last_probe": probe}
