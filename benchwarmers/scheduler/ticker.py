"""The scheduler: a thread in the service whose every tick starts each job whose time has come, once.

A job counts windows only from when it (and the scheduler) was switched on. A window missed while the service
was down runs once when it is back, if the first missed window is under seven days old; older misses are
recorded as skipped and the job waits for its next time. Each window is claimed in SQLite under the job's
lease, so two services on one data folder never run it twice, nor the same job side by side."""
from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, TimeoutError as FutureTimeout

from ..errors import BadRequest, Conflict, NotFound
from ..roster.health import one_line
from . import config, runs
from .clock import Clock
from .jobrun import JobFailed, JobRun
from .jobs import JOBS
from .pacing import Pacer

log = logging.getLogger("benchwarmers.scheduler")
FIRST_TICK, TICK_SECONDS = 5.0, 30.0
ON_TIME = 15 * 60.0               # started this soon after its time, a run is "schedule"; later, "catch-up"
CATCH_UP = 7 * 86400.0            # a miss older than this is not caught up
ONE_MODEL = ("probe", "perf")     # the jobs that can be run for one model


class Scheduler:
    """Built once with the bench (`config` for its switches, `health` for the models and their checks, `dialer`
    for every scheduled call, `suite` for the owed suite runs); the service starts its thread and the bench stops
    it."""

    def __init__(self, config, health, dialer, clock: Clock | None = None, jobs: dict | None = None, suite=None):
        self.config, self.health, self.db, self.suite = config, health, health.db, suite
        self.clock = clock or Clock()
        self.jobs = JOBS if jobs is None else jobs
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._stop = threading.Event()
        self._tick_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="bench-job")
        self._running: dict[int, Future] = {}
        self.pacer = Pacer(dialer, self.clock, health.resting, self._stop)

    # ---- life ---------------------------------------------------------------------------------
    def start(self) -> "Scheduler":
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="bench-scheduler", daemon=True)
            self._thread.start()
        return self

    def stop(self, grace: float = 5.0) -> None:
        """Stop ticking; running jobs stop at their next call and are recorded as interrupted."""
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=grace)
        self._wait_runs(grace)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.pacer.close()

    def _loop(self) -> None:
        if self.clock.wait(self._stop, FIRST_TICK):
            return
        while True:
            try:
                self.tick()
            except Exception:       # a bad tick must not end the scheduler: the next one tries again
                log.exception("scheduler tick failed")
            if self.clock.wait(self._stop, TICK_SECONDS):
                return

    # ---- ticking ------------------------------------------------------------------------------
    def settings(self, save: bool = True) -> config.Settings:
        return config.load(self.config, self.jobs, save=save)

    def tick(self) -> list[int]:
        """Start every job whose window has come; returns the ids of the runs started."""
        with self._tick_lock:
            if self._stop.is_set():
                return []
            self._running = {r: f for r, f in self._running.items() if not f.done()}
            enabled = self.settings(save=False).enabled
            s = self.settings() if enabled else None
            now, started = self.clock.now(), []
            for job in self.jobs.values():
                if not job.available:
                    continue
                since = runs.since(self.db, job.name)
                if not (s and s.jobs[job.name].on):
                    if since is not None:
                        runs.stop_counting(self.db, job.name)
                    continue
                if since is None:        # just switched on: windows count from now
                    runs.start_counting(self.db, job.name, now)
                    continue
                run = self._due(job, s.jobs[job.name].at, since, now)
                if run:
                    started.append(run)
            return started

    def _due(self, job, at, since: float, now: float) -> int | None:
        latest = at.latest(self.clock, now)
        floor = max(since, runs.last_due(self.db, job.name) or 0.0)
        if latest <= floor:
            return None
        first_missed = at.after(self.clock, floor)
        late = now - latest
        if late > ON_TIME and now - first_missed >= CATCH_UP:
            missed = time.strftime("%Y-%m-%d %H:%M", time.localtime(first_missed))
            runs.claim(self.db, job.name, self.holder, now, latest, "catch-up",
                       skip=f"missed since {missed}, more than 7 days ago: it waits for its next time")
            return None
        return self._start(job, "schedule" if late <= ON_TIME else "catch-up", latest)[0]

    def _start(self, job, trigger: str, due: float | None = None, only: str | None = None) -> tuple:
        run, busy = runs.claim(self.db, job.name, self.holder, self.clock.now(), due, trigger)
        if run is not None:
            self._running[run] = self._pool.submit(self._run, job, run, only)
        return run, busy

    def _run(self, job, run_id: int, only: str | None = None) -> None:
        jr = JobRun(self.health, self.pacer, self.clock, job.name, run_id, self._stop, self.suite, only)
        status, outcome = "done", ""
        try:
            outcome = job.run(jr)
        except JobFailed as e:
            status, outcome = "failed", one_line(str(e), 1000)
        except Exception as e:       # a bug in one job is that run's failure, never the service's
            if not self._stop.is_set():      # while stopping, the database may close under a running job
                log.exception("job %s (run %s) failed", job.name, run_id)
            status, outcome = "failed", f"internal error: {type(e).__name__}: {one_line(str(e), 200)}"
        if self._stop.is_set():
            status, outcome = "interrupted", f"{outcome}; {runs.INTERRUPTED}".lstrip("; ")
        try:
            runs.finish(self.db, job.name, run_id, self.clock.now(), status, len(jr.touched), jr.calls, outcome,
                        jr.detail)
        except Exception:            # the database closed under a stopping service: the lease expires instead
            log.warning("could not record the end of %s run %s", job.name, run_id)

    # ---- asked for ----------------------------------------------------------------------------
    def job(self, name: str):
        found = self.jobs.get(name)
        if found is None:
            raise NotFound(f"There is no job named {name!r}.", "Jobs: " + ", ".join(self.jobs) + ".")
        return found

    def run_now(self, name: str, only: str | None = None) -> dict:
        """Start a job now, whether or not the scheduler is on: the user asked for it. `only`: a model's alias, for
        the jobs that call each model (probe, perf): that model alone ("measure speed now" on its page)."""
        job = self.job(name)
        if only is not None and name not in ONE_MODEL:
            raise BadRequest(f"The {name} job runs for every model at once, not for one.",
                             "Leave out the model, or run " + " or ".join(ONE_MODEL) + " for one model.")
        if not job.available:
            raise Conflict(f"The {name} job is not available: {job.why_not}.")
        if self._stop.is_set():
            raise Conflict("The service is stopping.", "Run it again once the service is back.")
        with self._tick_lock:
            run, busy = self._start(job, "now", only=only)
        if run is None:
            raise Conflict(f"The {name} job is already running (run {busy}).",
                           f"`bench jobs show {busy}` follows it; run it again once it is done.")
        started = runs.get(self.db, run)
        assert started is not None     # just started
        return started

    def settle(self, timeout: float = 60.0) -> list[int]:
        """One tick now, then wait until every run this service started has finished (tests, shutdown)."""
        started = self.tick()
        self._wait_runs(timeout)
        return started

    def _wait_runs(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for future in list(self._running.values()):
            try:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
            except (FutureTimeout, CancelledError):
                pass                 # _run records its own end; one still going finishes (or expires) alone
