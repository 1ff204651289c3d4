"""The jobs the scheduler knows, one entry each: when it runs by default, what it does, and its function.

Adding a job is a module with a `run` meeting JobContract and one entry in JOBS. An entry without `run` is listed
as not available."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from . import catalogjob, compactjob, perfjob, probejob, suitejob
from .jobrun import JobRun
from .when import At


@runtime_checkable
class JobContract(Protocol):
    """A job's work: what its module's `run` does with one run of it."""

    def __call__(self, job: JobRun) -> str:
        """Do the work and return its outcome in words, for the run's record.

        `job` has the models it may call and a paced dialer that counts its calls (`job.complete`,
        `job.list_models`), the catalog, the suite, the settings (`job.settings()`), the clock, `job.stop` (set:
        stop soon) and `job.detail`, a tally kept with the record. A run that fails raises JobFailed(outcome);
        what it tallied so far is kept."""


@dataclass(frozen=True)
class Job:
    name: str
    weekly: bool
    what: str
    run: JobContract | None = None   # None: not available in this version
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
