"""The jobs the scheduler knows, one entry each: when it runs by default, what it does, and its function.

Adding a job is adding one entry: `run(job_run) -> outcome text` gets a JobRun (the models it may call, a
paced caller that counts its calls, the catalog, the suite, the settings, a tally for the record) and raises
JobFailed(outcome) for a run that failed. An entry without `run` is listed as not available."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import catalogjob, compactjob, perfjob, probejob, suitejob
from .when import At


@dataclass(frozen=True)
class Job:
    name: str
    weekly: bool
    what: str
    run: Callable | None = None      # None: not available in this version
    why_not: str = ""
    fallback: At = At(4 * 60)        # serves while a hand-edited time cannot be read
    on_by_default: bool = True       # once the scheduler is on; False: this job waits to be switched on alone

    @property
    def available(self) -> bool:
        return self.run is not None

    @property
    def period(self) -> str:
        return "weekly" if self.weekly else "daily"


JOBS: dict[str, Job] = {job.name: job for job in (
    Job("probe", False, "a one-word prompt to every active model that is neither ad hoc nor held; one that stops "
        "answering is retired after a confirming call (its endpoint no longer listing it is kept as evidence; "
        "one that still answers stays, listed or not)", probejob.run),
    Job("perf", True, "a short and a long prompt to every active model that is neither ad hoc nor held: time to "
        "first token and output tokens per second", perfjob.run, fallback=At(5 * 60, 6)),
    Job("suite", False, "plays the suite runs the bench owes (quick onboarding's, and runs a restart cut off), "
        "oldest first, one model at a time, at most suite_job_calls calls a run", suitejob.run, fallback=At(5 * 60)),
    Job("catalog", False, "fetches the public catalogs of model facts and prices again (models.dev, OpenRouter); "
        "calls no model; off until you switch it on", catalogjob.run, fallback=At(3 * 60), on_by_default=False),
    Job("compact", False, "prunes the prompt and answer text older than record_keep_days (every count, verdict, "
        "claim and ledger line stays), gives free pages back and gathers the query planner's statistics; calls no "
        "model", compactjob.run, fallback=At(2 * 60 + 30)),
)}
