"""The jobs the scheduler knows, one entry each: when it runs by default, what it does, and its function.

Adding a job is adding one entry: `run(job_run) -> outcome text` gets a JobRun (the models it may call, a
paced caller that counts its calls, a tally for the record). An entry without `run` is listed as not available."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import perfjob, probejob
from .when import At


@dataclass(frozen=True)
class Job:
    name: str
    weekly: bool
    what: str
    run: Callable | None = None      # None: not available in this version
    why_not: str = ""
    fallback: At = At(4 * 60)        # serves while a hand-edited time cannot be read

    @property
    def available(self) -> bool:
        return self.run is not None

    @property
    def period(self) -> str:
        return "weekly" if self.weekly else "daily"


JOBS: dict[str, Job] = {job.name: job for job in (
    Job("probe", False, "a one-word prompt to every active model that is not ad hoc; one that stops answering "
        "or is no longer listed is retired after a confirming call", probejob.run),
    Job("perf", True, "a short and a long prompt to every active model that is not ad hoc: time to first token "
        "and output tokens per second", perfjob.run, fallback=At(5 * 60, 6)),
    Job("suite", True, "runs the suite work onboarding left owed", why_not="the suite is not in this version"),
    Job("catalog", False, "refreshes the catalog of model facts", why_not="the catalog is not in this version"),
)}
