"""The suite inside the service (`bench.suite`): a worker for the runs users start, and entry points for other parts.

Entry points: `run_owed()` (what a scheduled job calls: runs owed or cut off by a restart), `run_for_model(alias,
progress=...)` (a full onboarding's suite step), `owe(alias)` (quick onboarding: run it later). One model at a time,
service-wide: every run takes the same lock.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Callable

from ..errors import BadRequest, Conflict, NotFound
from ..roster.registry import Registry
from . import results as res
from .asker import Pace, TaskAsker
from .fetchjob import FetchJobs
from .runner import Runner
from .seedjob import SeedJobs
from .tasks import load_all, select

log = logging.getLogger("benchwarmers.suite")


class SuiteService:
    """Built once in Bench._build (after the panel its asks go through), closed in Bench.close."""

    def __init__(self, home: Path, db, registry: Registry, held: Callable[[str], dict | None],
                 settings: Callable[[], dict], panel):
        self.home = home
        self.registry = registry
        self.held = held                             # the catalog's: a free model that turned paid is not called
        self.store = res.Results(db)
        self.stopping = threading.Event()
        self.one_at_a_time = threading.Lock()
        self.current: int | None = None              # the run this process is playing now
        self.wake = threading.Event()
        self.worker: threading.Thread | None = None
        self.runner = Runner(self.store, self.tasks, TaskAsker(panel), lambda: settings()["suite_gap_seconds"],
                             lease=lambda: settings()["seat_timeout"] + 60, stopping=self.stopping)
        self.seeding = SeedJobs(home)                # planting bugs in the user's repos: a job, one at a time
        self.fetching = FetchJobs(home)              # the picks of real fixes, downloaded: a job, one at a time

    def tasks(self) -> dict:
        return load_all(self.home)[0]

    # -- starting ------------------------------------------------------------------------------------
    def start(self, models: list[str], tasks: str | None, reason: str) -> list[dict]:
        """Queue one run per model (reusing an open run of the same model and tasks) and wake the worker."""
        if not select(self.tasks(), tasks):
            raise BadRequest(f"No ready suite task matches {tasks or '*'!r}.",
                             "`bench suite tasks` lists them; drafts join once accepted.")
        runs = []
        for model in models:
            run = self.reuse(model, tasks)
            if run is None:
                run = self.store.create(model, tasks, res.QUEUED, reason)
            elif run["status"] != res.RUNNING:
                self.store.update(run["id"], status=res.QUEUED, error=None)
                run = self.store.known(run["id"])
            runs.append(run)
        self.ensure_worker()
        self.wake.set()
        return runs

    def reuse(self, model: str, tasks: str | None) -> dict | None:
        return next((r for r in self.store.open_runs(model) if r["tasks"] == tasks), None)

    def owe(self, model: str, reason: str = "quick onboarding") -> dict:
        """Record that `model` is owed a suite run; nothing is called now."""
        return self.reuse(model, None) or self.store.create(model, None, res.OWED, reason)

    def cancel(self, rid: int) -> dict:
        run = self.store.run(rid)
        if run is None:
            raise NotFound(f"No suite run {rid}.", "`bench suite runs` lists them.")
        if run["status"] not in res.OPEN:
            raise Conflict(f"Suite run {rid} is {run['status']}; only open runs can be cancelled.")
        if self.current == rid:
            self.runner.cancelled.add(rid)       # stops after the call in flight
        else:
            self.store.update(rid, status=res.CANCELLED, error="cancelled", lease_until=None)
        return self.store.known(rid)

    # -- playing -------------------------------------------------------------------------------------
    def play(self, rid: int, progress=None, max_items: int | None = None, pace: Pace | None = None) -> dict | None:
        with self.one_at_a_time:
            self.current = rid
            try:
                return self.runner.run(rid, progress, max_items, pace)
            finally:
                self.current = None

    def run_for_model(self, alias: str, tasks: str | None = None, progress=None, reason: str = "onboarding") -> dict:
        """Run the suite for one model now, in the caller's thread; returns the finished run with its scores."""
        run = self.reuse(alias, tasks) or self.store.create(alias, tasks, res.QUEUED, reason)
        done = self.play(run["id"], progress)
        assert done is not None     # its run was just found or made
        done["scores"] = self.store.scores(alias).get(alias)
        return done

    def run_owed(self, max_items: int | None = None, progress=None, pace: Pace | None = None) -> list[dict]:
        """Play the runs that are owed or were cut off, oldest first, within `max_items` calls in all;
        queued runs go to the worker (started here if a restart left them waiting). `pace(alias)` is held
        around each call (the scheduler's); once it holds one back, that endpoint's other runs wait too."""
        played, budget, held_back = [], max_items, set()
        models = self.registry.models()
        for run in self.store.open_runs():
            model = models.get(run["model"])
            if model is None or not model.active or model.ad_hoc or self.held(model.alias):
                continue                    # ad hoc or held: the bench never calls it on its own
            if model.endpoint in held_back:
                continue
            if run["status"] == res.RUNNING:                          # being played right now
                continue
            if run["status"] == res.QUEUED:
                self.ensure_worker()
                self.wake.set()
                continue
            if budget is not None and budget <= 0 or self.stopping.is_set():
                break
            before = run["done"]
            after = self.play(run["id"], progress, budget, pace)
            assert after is not None    # an open run, just read
            played.append(after)
            if after.get("held"):
                held_back.add(model.endpoint)
            if budget is not None:
                budget -= max(0, after["done"] - before) + after["failed"]
        return played

    # -- the worker ----------------------------------------------------------------------------------
    def ensure_worker(self) -> None:
        if self.worker is None or not self.worker.is_alive():
            self.worker = threading.Thread(target=self.work, name="bench-suite", daemon=True)
            self.worker.start()

    def work(self) -> None:
        while not self.stopping.is_set():
            try:
                if not self.step():
                    self.wake.wait(5.0)
                    self.wake.clear()
            except Exception:                      # a bug of ours must not leave the worker dead
                if self.stopping.is_set():
                    return
                log.exception("the suite worker hit an error")
                self.stopping.wait(5.0)

    def step(self) -> bool:
        """Play the oldest queued run; False when there is none."""
        queued = [r for r in self.store.open_runs() if r["status"] == res.QUEUED]
        if not queued:
            return False
        try:
            self.play(queued[0]["id"])
        except Exception:
            if not self.stopping.is_set():
                self.store.update(queued[0]["id"], status=res.FAILED_RUN, error="internal error; see the log",
                                  lease_until=None)
            raise
        return True

    def stop_asking(self) -> None:
        """The service is stopping: a run asks no further item. Called before the seats still out are hung up, so
        the item cut off is the last one asked (close() then marks its run interrupted)."""
        self.stopping.set()

    def close(self) -> None:
        """Stop after the call in flight; a run cut off here is marked interrupted so it can be resumed. A seeding
        job stops at once (its tests are killed), a fetch after the file it is reading."""
        self.stopping.set()
        self.seeding.close()
        self.fetching.close()
        self.wake.set()
        if self.worker is not None:
            self.worker.join(timeout=2)
        if self.current is not None:
            try:
                self.store.update(self.current, status=res.INTERRUPTED, error="the service stopped",
                                  lease_until=None)
            except Exception:   # shutting down: the run's lease running out marks it interrupted all the same
                log.exception("marking suite run %s interrupted failed", self.current)

