"""Seeding as a job of the service (a JobBoard's): one at a time, in its own thread, with a deadline; a shutdown
stops it within a moment, whatever it is doing (its tests are killed)."""
from __future__ import annotations

from pathlib import Path

from ..errors import BadRequest
from .jobboard import DONE, STOPPED, JobBoard
from .seed import DEFAULT_DEADLINE, MAX_COUNT, MAX_DEADLINE, repo_entry, seed_repo


class SeedJobs(JobBoard):
    def __init__(self, home: Path):
        super().__init__("Seeding", "/bench/suite/seed", "bench suite seed")
        self.home = home

    def start(self, repo: str, count: int = 20, seed: int = 0, deadline: float = DEFAULT_DEADLINE) -> dict:
        """Start seeding `repo` (409 while another seeding runs); the job's state at once."""
        if not 1 <= count <= MAX_COUNT:
            raise BadRequest(f"count must be from 1 to {MAX_COUNT}.")
        if not 1 <= deadline <= MAX_DEADLINE:
            raise BadRequest(f"deadline_seconds must be from 1 to {MAX_DEADLINE:,}.")
        repo_entry(self.home, repo)                      # an unknown repo or a bad entry is refused now, not later
        fields = {"repo": repo, "count": count, "seed": seed, "deadline_seconds": deadline, "made": 0}
        return self.begin(fields, self.work, repo)

    def work(self, job: dict) -> tuple:
        def progress(report: dict) -> None:
            job["made"] = len(report["written"])
        result = seed_repo(self.home, job["repo"], job["count"], job["seed"], job["deadline_seconds"],
                           self.stopping, progress)
        return (DONE if not result["stopped"] else STOPPED), {"result": result, "made": result["made"],
                                                              "error": stopped_words(result["stopped"])}


def stopped_words(why: str | None) -> str | None:
    if why is None:
        return None
    if why == "stopped":
        return "the service stopped; the tasks written so far are kept"
    return "it reached its deadline; the tasks written so far are kept (seed again to go on)"
