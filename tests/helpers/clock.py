"""A clock the tests control: the scheduler's time moves only when a test moves it; pauses are recorded, not slept."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from benchwarmers.scheduler.clock import Clock

MONDAY = datetime(2025, 3, 3, 10, 0)      # a Monday, 10:00 local time


class FakeClock(Clock):
    """Local time is a fixed zone. The scheduler's loop ticks every `pace` real seconds (its time unchanged),
    so a service's own thread keeps ticking while a test runs, as it does for real."""

    def __init__(self, start: datetime = MONDAY, tz=timezone(timedelta(hours=1)), pace: float = 0.1):
        self.tz, self.pace = tz, pace
        self.t = start.replace(tzinfo=tz).timestamp()
        self.slept: list[float] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self.t

    def local(self, t: float) -> datetime:
        return datetime.fromtimestamp(t, self.tz).replace(tzinfo=None)

    def epoch(self, local: datetime) -> float:
        return local.replace(tzinfo=self.tz).timestamp()

    def zone(self) -> str:
        return "UTC+01:00"

    def sleep(self, seconds: float, stop=None) -> None:
        if seconds > 0:
            self.slept.append(seconds)
            self.advance(seconds=seconds)

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(self.pace)

    def advance(self, **kw) -> "FakeClock":
        with self._lock:
            self.t += timedelta(**kw).total_seconds()
        return self

    def to(self, local: datetime) -> "FakeClock":
        with self._lock:
            self.t = self.epoch(local)
        return self

    def at(self) -> datetime:
        return self.local(self.now())


class HeldClock(FakeClock):
    """A FakeClock whose pauses last until the test moves time past their end (`advance`, `to`), as a real pause
    lasts until real time has passed: a call waiting for a rate limit stays waiting while the test looks."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._moved = threading.Condition(self._lock)
        self.waiting = 0                 # pauses under way now

    def sleep(self, seconds: float, stop=None) -> None:
        if seconds <= 0:
            return
        with self._moved:
            self.slept.append(seconds)
            end, self.waiting = self.t + seconds, self.waiting + 1
            try:
                while self.t < end and not (stop and stop.is_set()):
                    self._moved.wait(0.05)
            finally:
                self.waiting -= 1

    def advance(self, **kw) -> "HeldClock":
        with self._moved:
            self.t += timedelta(**kw).total_seconds()
            self._moved.notify_all()
        return self

    def to(self, local: datetime) -> "HeldClock":
        with self._moved:
            self.t = self.epoch(local)
            self._moved.notify_all()
        return self
