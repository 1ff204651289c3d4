"""One thread that calls each function at its time (a referee given up at referee_timeout): a timer thread for every
panel would cost a thread's start and stop each."""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Callable

log = logging.getLogger("benchwarmers.deadlines")


class Deadlines:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._heap: list = []                  # [when, order, fn]; fn None once cancelled
        self._order = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def at(self, when: float, fn: Callable[[], None]) -> list:
        """Call `fn` at `when` (the clock's time) unless cancelled first; the entry is what cancel() takes."""
        entry = [when, next(self._order), fn]
        with self._cond:
            if self._closed:
                return entry
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="deadlines", daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:
                self._cond.notify()
        return entry

    @staticmethod
    def cancel(entry: list) -> None:
        entry[2] = None        # left in the heap: dropped when its time comes

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._heap or self._heap[0][0] > self.clock()):
                    self._cond.wait(self._heap[0][0] - self.clock() if self._heap else None)
                if self._closed:
                    return
                _, _, fn = heapq.heappop(self._heap)
            if fn is not None:
                try:
                    fn()
                except Exception:      # one deadline's fault must not stop the others
                    log.exception("a deadline's call failed")
