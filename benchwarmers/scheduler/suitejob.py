"""The daily suite job: plays the suite runs the bench owes (quick onboarding's, and runs a restart cut off).

One model at a time across the service, each call a direct ask through the bench's panel, paced like every
scheduled call: the endpoint's one scheduled seat, `scheduler_gap_seconds` after its last call and only once the
user's own asks on it are answered (plus the suite's own `suite_gap_seconds`). A call the pacing holds back ends
that run's round: the rest stays owed, and so do the other runs on that endpoint. One run of this job asks at most
`suite_job_calls` items in all, oldest owed run first. Ad hoc, retired and held models are never called
(SuiteService.run_owed leaves them out); a run the user started is played by the suite's own worker."""
from __future__ import annotations

from contextlib import contextmanager

from ..suite.asker import NotAsked
from ..words import plural
from .jobrun import JobFailed
from .pacing import Held


def run(job) -> str:
    if job.suite is None:
        raise JobFailed("this service has no suite to play")
    budget = job.settings()["suite_job_calls"]
    played = job.suite.run_owed(budget, pace=lambda alias: _paced(job, alias))
    job.detail["runs"] = [{k: r[k] for k in ("id", "model", "status", "done", "total", "failed", "error")}
                          for r in played]
    if not played:
        return "no suite run was owed"
    words = [_words(r) for r in played]
    return (f"played {plural(len(played), 'owed suite run')} in {plural(job.calls, 'call')} "
            f"(at most {budget}): " + "; ".join(words))


@contextmanager
def _paced(job, alias: str):
    """One suite call in its endpoint's scheduled seat, counted as the job's call once it goes out."""
    try:
        with job.pacer.turn(job.registry.model(alias).endpoint, sent=lambda: job.count_call(alias)):
            yield
    except Held as e:
        raise NotAsked(str(e)) from None


def _words(run: dict) -> str:
    where = f"{run['model']} (run {run['id']}) {run['done']} of {plural(run['total'], 'item')}"
    if run["status"] == "done":
        return where + ", done"
    if run["status"] == "owed":
        return where + ", the rest owed to the next run" + (f" ({run['error']})" if run["error"] else "")
    return where + f", {run['status']}" + (f": {run['error']}" if run["error"] else "")
