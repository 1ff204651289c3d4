"""The weekly speed test: a short and a long prompt to every active model that is not ad hoc, timed.

Figures go to `perf` with the date; a failure is recorded as a figure too and retires nothing (the daily
probe decides that). A refused key flags the endpoint and skips the rest of it; a rate limit rests what it names
(the model, or the whole key) and skips the rest of the endpoint only when the whole key rests."""
from __future__ import annotations

from ..errors import QuotaRefused
from ..roster import health, healthrecord, speed
from ..words import plural
from .pacing import Held


def run(job) -> str:
    job.each_endpoint(lambda name, models: _endpoint(job, name, models))
    d = job.detail
    words = [f"{len(d['ok'])} measured"] + [f"{len(d[k])} {k}" for k in ("failed", "skipped") if d[k]]
    return f"timed {plural(len(job.touched), 'model')}: " + ", ".join(words)


def _endpoint(job, name: str, models: list) -> None:
    for i, model in enumerate(models):
        figures: list = []
        rests = False
        for prompt in ("short", "long"):
            try:
                fig = speed.measure(model, prompt, job, job.id)
            except Held as e:
                job.skip(models[i:] if e.whole else [model], str(e))
                if e.whole:
                    return
                rests = True          # this model alone rests: the others of the endpoint go on
                break
            except QuotaRefused as e:   # it would wait longer than a scheduled call may: until the next run
                job.add("skipped", {"model": model.alias, "why": e.message})
                rests = True
                break
            speed.record(job.db, fig)
            healthrecord.note(job.db, job.resting, name, fig, "speed figure", served=model.served)
            figures.append(fig)
            if not fig.ok:
                break
        if rests:
            continue
        failed = next((f for f in figures if not f.ok), None)
        if failed is None:
            job.add("ok", {"model": model.alias, "ttft": figures[0].to_dict()["ttft"],
                           "tokens_per_second": figures[-1].to_dict()["tokens_per_second"]})
            continue
        job.add("failed", {"model": model.alias, "prompt": failed.prompt, "error": failed.error})
        if failed.error_kind in health.NOT_THE_MODEL and healthrecord.stops_endpoint(job.resting, name,
                                                                                      failed.error_kind):
            job.skip(models[i + 1:], job.endpoint_words(name))
            return
