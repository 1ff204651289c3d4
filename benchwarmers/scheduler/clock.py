"""The scheduler's clock: the time now, local time of day, and waits; tests give it a clock they control."""
from __future__ import annotations

import threading
import time
from datetime import datetime


class Clock:
    """Wall time in the user's local zone (the system's), real waits."""

    def now(self) -> float:
        return time.time()

    def local(self, t: float) -> datetime:
        """Epoch seconds as a naive local date and time."""
        return datetime.fromtimestamp(t)

    def epoch(self, local: datetime) -> float:
        """A naive local date and time as epoch seconds (daylight saving time applied as the system does)."""
        return local.timestamp()

    def zone(self) -> str:
        return time.strftime("%Z") or "local time"

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> None:
        """A pause between paced calls; ends early when `stop` is set."""
        if seconds > 0:
            (stop or threading.Event()).wait(seconds)

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """The loop's pause between ticks; True once `stop` is set."""
        return stop.wait(seconds)
