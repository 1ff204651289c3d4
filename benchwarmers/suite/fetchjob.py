"""Fetching the picks of real fixes as a job of the service (a JobBoard's): one at a time, in its own thread, its
progress readable while it goes; the tasks go into the data folder's suite/tasks."""
from __future__ import annotations

from pathlib import Path

from ..errors import BadRequest
from . import fetch
from .jobboard import DONE, FAILED, STOPPED, JobBoard
from .tasks import data_dir


class FetchJobs(JobBoard):
    def __init__(self, home: Path):
        super().__init__("Fetching", "/bench/suite/fetch", "bench suite fetch")
        self.home = home

    def folder(self) -> Path:
        return data_dir(self.home)

    def picks(self, given: dict | None = None) -> list[dict]:
        """The picks given in a request ({"picks": [...]}), else the shipped ones; 400 names what is wrong."""
        try:
            return fetch.picks_of(given, "the picks sent") if given is not None else fetch.read_picks()
        except ValueError as e:
            raise BadRequest(str(e), "Each pick names repo, commit, base_commit, path, license, sha256_before and "
                                     "sha256_after (suite/REBENCH.md).") from None

    def plan(self, given: dict | None = None) -> dict:
        return fetch.plan(self.picks(given), self.folder())

    def start(self, given: dict | None = None, source: str | None = None) -> dict:
        """Start fetching (409 while another fetch runs); the job's state at once, with what it will fetch."""
        picks = self.picks(given)
        try:
            get = fetch.reader(source)
        except ValueError as e:
            raise BadRequest(f"source: {e}", "Give an http(s) URL laid out as OWNER/NAME/COMMIT/PATH, or a folder "
                                             "of the service's machine holding such files or clones.") from None
        planned = fetch.plan(picks, self.folder())
        fields = {"source": source or fetch.forge(), "total": planned["total"], "missing": planned["missing"],
                  "repositories": planned["repositories"], "done": 0, "written": 0, "present": 0, "skipped": 0}
        return self.begin(fields, lambda job: self.work(job, picks, get), "real bugs")

    def work(self, job: dict, picks: list[dict], get) -> tuple:
        def progress(report: dict) -> None:
            job.update(done=report["done"], written=len(report["written"]), present=len(report["present"]),
                       skipped=len(report["skipped"]))
        report = fetch.fetch(picks, self.folder(), get, progress, self.stopping)
        progress(report)
        fields = {"result": report, "outcome": fetch.outcome(report)}
        if report["unreachable"]:
            return FAILED, dict(fields, error=report["unreachable"])
        if report["stopped"]:
            return STOPPED, dict(fields, error="the service stopped; the tasks written so far are kept (fetch "
                                               "again to go on)")
        if not report["written"] and not report["present"]:
            return FAILED, dict(fields, error="no fix could be fetched: " + "; ".join(
                s["why"] for s in report["skipped"][:3]))
        return DONE, fields
