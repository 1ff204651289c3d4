"""Work the suite does in the service's background, one job of a kind at a time, each in its own thread: a request
only starts a job and reads how it stands; a shutdown stops it within a moment. Seeding and fetching are such jobs."""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from ..errors import BenchError, Conflict, NotFound

log = logging.getLogger("benchwarmers.suite")
KEPT = 20                  # finished jobs remembered (in memory: a restart forgets them, not the tasks they wrote)
RUNNING, DONE, STOPPED, FAILED = "running", "done", "stopped", "failed"
Work = Callable[[dict], tuple]     # job -> (status, fields to set on it); runs in the job's thread


class JobBoard:
    def __init__(self, what: str, route: str, follow: str):
        self.what = what               # "Seeding": how messages name a job of this kind
        self.route = route             # where one is read: GET {route}/{id}
        self.follow = follow           # the command that waits for one on its own
        self.lock = threading.Lock()
        self.jobs: dict[int, dict] = {}
        self.next_id = 1
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def begin(self, fields: dict, work: Work, label: str) -> dict:
        """Start a job (409 while another of this kind runs, or while the service stops); its state at once."""
        with self.lock:
            if self.stopping.is_set():
                raise Conflict(f"The service is stopping; start {self.what.lower()} again after it restarts.")
            busy = next((j for j in self.jobs.values() if j["status"] == RUNNING), None)
            if busy:
                raise Conflict(f"{self.what} job {busy['id']} ({busy['label']}) is still running.",
                               f"Wait for it: GET {self.route}/{busy['id']} ({self.follow} waits on its own).")
            job = {"id": self.next_id, "label": label, **fields, "status": RUNNING, "started": time.time(),
                   "finished": None, "error": None, "result": None}
            self.next_id += 1
            self.jobs[job["id"]] = job
            for old in sorted(self.jobs)[:-KEPT]:
                self.jobs.pop(old)
            self.thread = threading.Thread(target=self.run, args=(job, work), name=f"bench-{label[:20]}",
                                           daemon=True)
            self.thread.start()
            return dict(job)

    def run(self, job: dict, work: Work) -> None:
        try:
            status, fields = work(job)
        except BenchError as e:
            status, fields = FAILED, {"error": e.message}
        except Exception:                   # a bug of ours ends this job, not the service
            log.exception("%s %s failed", self.what.lower(), job["label"])
            status, fields = FAILED, {"error": "internal error; see the log"}
        with self.lock:
            job.update(fields, status=status, finished=time.time())

    def get(self, job_id: int) -> dict:
        with self.lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise NotFound(f"No {self.what.lower()} job {job_id}.",
                               "Jobs are kept in memory until the service restarts.")
            return dict(job)

    def recent(self) -> list[dict]:
        with self.lock:
            return [dict(j, result=None) for _, j in sorted(self.jobs.items(), reverse=True)]

    def running(self) -> dict | None:
        with self.lock:
            return next((dict(j) for j in self.jobs.values() if j["status"] == RUNNING), None)

    def close(self, wait: float = 3.0) -> None:
        """Stop the job running (it checks `stopping` between steps); wait briefly."""
        self.stopping.set()
        thread = self.thread
        if thread is not None:
            thread.join(wait)
