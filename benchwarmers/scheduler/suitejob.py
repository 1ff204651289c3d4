"""The daily suite job: plays the suite runs the bench owes (quick onboarding's, and runs a restart cut off).

The suite paces itself: one model at a time across the service, `suite_gap_seconds` between two calls, each call
a direct ask through this service's gateway. One run of this job asks at most `suite_job_calls` items in all,
oldest owed run first; what is left stays owed for its next run. Ad hoc, retired and held models are never
called (SuiteService.run_owed leaves them out); a run the user started is played by the suite's own worker."""
from __future__ import annotations

from .jobrun import JobFailed


def run(job) -> str:
    if job.suite is None:
        raise JobFailed("this service has no suite to play")
    budget = job.settings()["suite_job_calls"]
    played = job.suite.run_owed(budget, progress=lambda run, item: job.count_call(run["model"]))
    job.detail["runs"] = [{k: r[k] for k in ("id", "model", "status", "done", "total", "failed", "error")}
                          for r in played]
    if not played:
        return "no suite run was owed"
    words = [_words(r) for r in played]
    return (f"played {len(played)} owed suite run{'s' if len(played) != 1 else ''} in {job.calls} calls "
            f"(at most {budget}): " + "; ".join(words))


def _words(run: dict) -> str:
    where = f"{run['model']} (run {run['id']}) {run['done']} of {run['total']} items"
    if run["status"] == "done":
        return where + ", done"
    if run["status"] == "owed":
        return where + ", the rest owed to the next run"
    return where + f", {run['status']}" + (f": {run['error']}" if run["error"] else "")
