"""Seeding as a job of the service: one at a time, in its own thread, with a deadline; a request only starts it and
reads how it stands, and a shutdown stops it within a moment, whatever it is doing (its tests are killed)."""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from ..errors import BadRequest, BenchError, Conflict, NotFound
from .seed import DEFAULT_DEADLINE, MAX_COUNT, MAX_DEADLINE, repo_entry, seed_repo

log = logging.getLogger("benchwarmers.suite")
KEPT = 20                  # finished jobs remembered (in memory: a restart forgets them, not the tasks they wrote)
RUNNING, DONE, STOPPED, FAILED = "running", "done", "stopped", "failed"


class SeedJobs:
    def __init__(self, home: Path):
        self.home = home
        self.lock = threading.Lock()
        self.jobs: dict[int, dict] = {}
        self.next_id = 1
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, repo: str, count: int = 20, seed: int = 0, deadline: float = DEFAULT_DEADLINE) -> dict:
        """Start seeding `repo` (409 while another seeding runs); the job's state at once."""
        if not 1 <= count <= MAX_COUNT:
            raise BadRequest(f"count must be from 1 to {MAX_COUNT}.")
        if not 1 <= deadline <= MAX_DEADLINE:
            raise BadRequest(f"deadline_seconds must be from 1 to {MAX_DEADLINE:,}.")
        repo_entry(self.home, repo)                      # an unknown repo or a bad entry is refused now, not later
        with self.lock:
            if self.stopping.is_set():
                raise Conflict("The service is stopping; seed after it restarts.")
            busy = next((j for j in self.jobs.values() if j["status"] == RUNNING), None)
            if busy:
                raise Conflict(f"Seeding job {busy['id']} ({busy['repo']}) is still running.",
                               f"Wait for it: GET /bench/suite/seed/{busy['id']} (bench suite seed waits on its own).")
            job = {"id": self.next_id, "repo": repo, "count": count, "seed": seed, "deadline_seconds": deadline,
                   "status": RUNNING, "started": time.time(), "finished": None, "made": 0, "error": None,
                   "result": None}
            self.next_id += 1
            self.jobs[job["id"]] = job
            for old in sorted(self.jobs)[:-KEPT]:
                self.jobs.pop(old)
            self.thread = threading.Thread(target=self.work, args=(job,), name="bench-seed", daemon=True)
            self.thread.start()
            return dict(job)

    def work(self, job: dict) -> None:
        def progress(report: dict) -> None:
            job["made"] = len(report["written"])
        try:
            result = seed_repo(self.home, job["repo"], job["count"], job["seed"], job["deadline_seconds"],
                               self.stopping, progress)
            status = DONE if not result["stopped"] else STOPPED
            job.update(result=result, made=result["made"], error=stopped_words(result["stopped"]))
        except BenchError as e:
            status = FAILED
            job.update(error=e.message)
        except Exception:                   # a bug of ours ends this job, not the service
            log.exception("seeding %s failed", job["repo"])
            status = FAILED
            job.update(error="internal error; see the log")
        with self.lock:
            job.update(status=status, finished=time.time())

    def get(self, job_id: int) -> dict:
        with self.lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise NotFound(f"No seeding job {job_id}.", "Jobs are kept in memory until the service restarts.")
            return dict(job)

    def recent(self) -> list[dict]:
        with self.lock:
            return [dict(j, result=None) for _, j in sorted(self.jobs.items(), reverse=True)]

    def close(self, wait: float = 3.0) -> None:
        """Stop the job running (its tests are killed at their next check, a tenth of a second); wait briefly."""
        self.stopping.set()
        thread = self.thread
        if thread is not None:
            thread.join(wait)


def stopped_words(why: str | None) -> str | None:
    if why is None:
        return None
    if why == "stopped":
        return "the service stopped; the tasks written so far are kept"
    return "it reached its deadline; the tasks written so far are kept (seed again to go on)"
