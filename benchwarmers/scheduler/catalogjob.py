"""The daily catalog refresh: every public catalog fetched again (Catalog.refresh); a failed fetch fails the run.

A source that fails keeps its last good copy (the catalog itself changes nothing for it), so the run is recorded
as failed with what went wrong and which copy is still in use; no model is called."""
from __future__ import annotations

from ..errors import BenchError
from ..words import plural
from .jobrun import JobFailed


def run(job) -> str:
    try:
        result = job.catalog.refresh()
    except BenchError as e:          # e.g. a refresh the user started is still running
        raise JobFailed(e.message) from None
    for name, fetched in result["sources"].items():
        job.count_call()
        if fetched["ok"]:
            job.add("ok", {"source": name, "models": fetched["models"]})
        else:
            job.add("failed", {"source": name, "error": fetched["error"], "kept": fetched["kept"]})
    held = [h["model"] for h in result["held"]]
    job.detail["held"] = held
    words = [f"{d['source']} ({plural(d['models'], 'model')})" for d in job.detail["ok"]]
    words += [f"{d['source']} failed ({d['error']}; kept {d['kept']})" for d in job.detail["failed"]]
    outcome = "fetched " + ", ".join(words) + (f"; held: {', '.join(held)}" if held else "")
    if job.detail["failed"]:
        raise JobFailed(outcome)
    return outcome
