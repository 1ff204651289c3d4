"""The seat pool shared between endpoints: each may hold at most its share of the workers, so one hanging upstream
cannot stall the seats of the others."""
from __future__ import annotations

import logging
import math
import threading
from collections import deque
from concurrent.futures import Executor
from typing import Callable

log = logging.getLogger("benchwarmers.lanes")


class Lanes:
    """Work for an endpoint runs on the shared pool while the endpoint holds fewer than `cap()` workers; beyond
    that it waits in the endpoint's own queue, holding no worker, and runs when one of its own finishes. So 200
    panels on an upstream that never answers hold at most its share, and a panel on another endpoint still gets
    workers at once."""

    def __init__(self, pool: Executor, workers: int, share: Callable[[], float]):
        self.pool, self.workers, self.share = pool, workers, share
        self._running: dict[str, int] = {}
        self._waiting: dict[str, deque] = {}
        self._lock = threading.Lock()

    def cap(self) -> int:
        """How many workers one endpoint may hold: `endpoint_share` of the pool, at least one."""
        return max(1, math.floor(self.workers * self.share()))

    def submit(self, endpoint: str, fn: Callable, *args) -> None:
        with self._lock:
            if self._running.get(endpoint, 0) >= self.cap():
                self._waiting.setdefault(endpoint, deque()).append((fn, args))
                return
            self._running[endpoint] = self._running.get(endpoint, 0) + 1
        self.pool.submit(self._run, endpoint, fn, args)

    def executor(self, endpoint: str) -> "LaneExecutor":
        """An Executor-like view that submits into this endpoint's lane (for pump, which takes an executor)."""
        return LaneExecutor(self, endpoint)

    def _run(self, endpoint: str, fn: Callable, args: tuple) -> None:
        """Run the work, then the endpoint's next waiting work on this same worker while it is within its share."""
        while True:
            try:
                fn(*args)
            except BaseException:   # the work reports its own faults; this keeps the lane's count right
                log.exception("work on endpoint %s failed", endpoint)
            with self._lock:
                waiting = self._waiting.get(endpoint)
                if waiting and self._running[endpoint] <= self.cap():
                    fn, args = waiting.popleft()
                    if not waiting:
                        del self._waiting[endpoint]
                    continue
                self._running[endpoint] -= 1
                if not self._running[endpoint]:
                    del self._running[endpoint]
                return


class LaneExecutor:
    """One endpoint's lane, where an Executor is expected (`submit` only)."""

    def __init__(self, lanes: Lanes, endpoint: str):
        self.lanes, self.endpoint = lanes, endpoint

    def submit(self, fn: Callable, *args) -> None:
        self.lanes.submit(self.endpoint, fn, *args)
