"""Running one suite run: every (task, variant) item of the chosen tasks, one call at a time, resumable."""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from . import prompt, results as res
from .asker import NotAsked, Pace
from .parse import parse_bugs, parse_claim
from .score import CORRECT, FAILED, outcome
from .tasks import select

log = logging.getLogger("benchwarmers.suite")
MAX_FAILURES = 3          # calls failing in a row: the model is not answering; stop rather than spend more


class Runner:
    """Plays one run to its end (or until stopped, cancelled, or its item budget is spent)."""

    def __init__(self, store: res.Results, load_tasks: Callable[[], dict], asker, gap: Callable[[], float],
                 lease: Callable[[], float], stopping: threading.Event):
        self.store = store
        self.load_tasks = load_tasks
        self.asker = asker
        self.gap = gap
        self.lease = lease
        self.stopping = stopping
        self.cancelled: set = set()

    def plan(self, run: dict) -> list:
        """(task, variant) for every variant of every ready task the run's globs select, in id order."""
        return [(t, v) for t in select(self.load_tasks(), run["tasks"]) for v in t.variants]

    def run(self, rid: int, progress: Callable | None = None, max_items: int | None = None,
            pace: Pace | None = None) -> dict | None:
        """`pace`: held around each call (a scheduled round's); a call it holds back leaves the rest owed."""
        run = self.store.run(rid)
        if run is None or run["status"] in (res.DONE, res.CANCELLED):
            return run
        # a budget spent leaves a user's run queued, and anything else owed to the next round
        idle_status = res.QUEUED if run["status"] == res.QUEUED else res.OWED
        items = self.plan(run)
        done = self.store.done_items(rid)
        todo = [(t, v) for t, v in items if (t.id, v) not in done]
        self.store.update(rid, status=res.RUNNING, started=run["started"] or time.time(), total=len(items),
                          done=len(items) - len(todo), error=None, lease_until=time.time() + self.lease())
        failures, asked = 0, 0
        for task, variant in todo:
            stop = self.why_stop(rid, max_items, asked)
            if stop:
                return self.finish(rid, *stop, idle_status=idle_status)
            if asked:
                self.stopping.wait(self.gap())
            try:
                item = self.play(rid, run["model"], task, variant, pace)
            except NotAsked as e:
                return dict(self.finish(rid, "idle", f"not asked: {e}", idle_status=idle_status), held=True)
            asked += 1
            failures = failures + 1 if item["outcome"] == FAILED else 0
            self.store.update(rid, done=len(self.store.done_items(rid)), failed=self.failed(rid),
                              lease_until=time.time() + self.lease())
            if progress:
                progress(self.store.run(rid), item)
            if item.get("rate_limited"):
                return self.finish(rid, res.INTERRUPTED, f"rate limited: {item['error']}")
            if failures >= MAX_FAILURES:
                return self.finish(rid, res.FAILED_RUN, f"{failures} calls in a row failed; the last: {item['error']}")
        return self.finish(rid, res.DONE, None)

    def why_stop(self, rid: int, max_items: int | None, asked: int) -> tuple[str, str | None] | None:
        if rid in self.cancelled:
            return res.CANCELLED, "cancelled"
        if self.stopping.is_set():
            return res.INTERRUPTED, "the service stopped"
        if max_items is not None and asked >= max_items:
            return "idle", None
        return None

    def finish(self, rid: int, status: str, error: str | None, idle_status: str = res.QUEUED) -> dict:
        if status == "idle":       # budget spent or a call held back: the rest stays owed (or queued) for later
            self.store.update(rid, status=idle_status, error=error, lease_until=None)
        else:
            self.store.update(rid, status=status, error=error, lease_until=None,
                              finished=time.time() if status in (res.DONE, res.CANCELLED, res.FAILED_RUN) else None)
        self.cancelled.discard(rid)
        return self.store.known(rid)

    def failed(self, rid: int) -> int:
        return sum(1 for r in self.store.items(rid) if r["outcome"] == FAILED)

    def play(self, rid: int, model: str, task, variant: str, pace: Pace | None = None) -> dict:
        """Ask, read, score and record one item."""
        system, user = prompt.build(task, variant)
        answered = self.asker.ask(model, system, user, pace)
        item = {"run": rid, "model": model, "task": task.id, "variant": variant, "purpose": task.purpose,
                "task_hash": task.digest(), "call": answered.call, "answer": answered.text,
                "seconds": round(answered.seconds, 3)}
        if answered.status != "ok":
            item.update(outcome=FAILED, error=answered.error)
            self.store.add(**item)
            return dict(item, rate_limited=answered.rate_limited)
        parsed = (parse_claim if variant == "claim" else parse_bugs)(answered.text)
        result = outcome(task, variant, parsed)
        item.update(outcome=result, correct=CORRECT.get(result), confidence=parsed.confidence, parse=parsed.how,
                    flagged=[list(f) for f in parsed.flagged])
        self.store.add(**item)
        return item
