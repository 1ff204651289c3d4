"""The daily probe: a one-word prompt to every active model that is not ad hoc, endpoint by endpoint.

Each endpoint's list is read first (one call), so a model it no longer lists is known before its probe; a
model that fails for a reason of its own is confirmed once and retired with the evidence (Health.check). A
refused key flags the endpoint and skips the rest of its models; a rate limit rests what it names (the model, or
the whole key, when it skips the rest of the endpoint too): never a retirement."""
from __future__ import annotations

from ..errors import BenchError, FaultKind, UpstreamFailed
from ..roster import health, healthrecord
from ..words import plural
from .pacing import Held


def run(job) -> str:
    job.each_endpoint(lambda name, models: _endpoint(job, name, models))
    d = job.detail
    words = [f"{len(d['ok'])} answered"]
    words += [f"{len(d[k])} {k}" for k in ("failed", "retired", "skipped") if d[k]]
    retired = ", ".join(r["model"] for r in d["retired"])
    return f"probed {plural(len(job.touched), 'model')}: " + ", ".join(words) + (f" ({retired})" if retired else "")


def _endpoint(job, name: str, models: list) -> None:
    try:
        served = _listing(job, name)
    except _Stop as stop:
        job.skip(models, str(stop))
        return
    for i, model in enumerate(models):
        try:
            result = job.health.check(model.alias, dialer=job, served=lambda: served)
        except Held as e:
            job.skip(models[i:] if e.whole else [model], str(e))
            if e.whole:
                return
            continue
        except BenchError as e:          # removed from the roster while the job ran
            job.add("skipped", {"model": model.alias, "why": health.one_line(str(e))})
            continue
        last = result.get("confirm") or result["probe"]
        if result["retired"]:
            job.add("retired", {"model": model.alias, "reason": result["model_after"]["reason"]})
        elif last["status"] == "ok":
            job.add("ok", model.alias)
        else:
            job.add("failed", {"model": model.alias, "error": last["error"]})
        if last.get("error_kind") in health.NOT_THE_MODEL and healthrecord.stops_endpoint(job.resting, name,
                                                                                          last["error_kind"]):
            job.skip(models[i + 1:], job.endpoint_words(name))
            return


class _Stop(Exception):
    """The endpoint cannot be asked in this run (its key was refused, it rests, or the pacer held the call)."""


def _listing(job, name: str) -> list[str] | None:
    """Its served names, or None when the list cannot be had (then the probes decide alone)."""
    try:
        return health.served_names(job.list_models(job.registry.endpoint(name)))
    except Held as e:
        raise _Stop(str(e)) from None
    except UpstreamFailed as e:
        if e.kind is FaultKind.AUTH:
            healthrecord.flag(job.db, name, healthrecord.KEY_REFUSED, f"{health.one_line(e.message)} (its model list)")
        elif e.kind is FaultKind.RATE_LIMITED:
            healthrecord.rest(job.resting, name, healthrecord.reset_of(e))
        else:
            return None
        job.add("endpoints", {"endpoint": name, "state": job.endpoint_words(name)})
        raise _Stop(job.endpoint_words(name)) from None
    except BenchError:
        return None
