"""When a job runs: a time of day ("04:37") or of the week ("sun 05:12") in local time, and its windows."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..errors import BadRequest

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
FULL_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
EARLY = (2 * 60, 6 * 60)          # the default spread: a minute from 02:00 to 05:59, when few people ask
_TIME = re.compile(r"(\d{1,2}):(\d{2})")


@dataclass(frozen=True)
class At:
    minute: int                   # minutes after local midnight
    weekday: int | None = None    # 0 is Monday; None: every day

    @property
    def days(self) -> int:
        return 1 if self.weekday is None else 7

    def text(self) -> str:
        clock = f"{self.minute // 60:02d}:{self.minute % 60:02d}"
        return clock if self.weekday is None else f"{DAYS[self.weekday]} {clock}"

    @classmethod
    def parse(cls, text, weekly: bool, job: str = "the job") -> "At":
        """'HH:MM' for a daily job, 'DAY HH:MM' for a weekly one; 400 saying which otherwise."""
        want = "'DAY HH:MM' (e.g. 'sun 05:12')" if weekly else "'HH:MM' (e.g. '04:37')"
        words = text.strip().lower().split() if isinstance(text, str) else []
        day = None
        if weekly and len(words) == 2:
            name = words.pop(0)
            day = DAYS.index(name) if name in DAYS else FULL_DAYS.index(name) if name in FULL_DAYS else None
        found = _TIME.fullmatch(words[0]) if len(words) == 1 and (day is not None or not weekly) else None
        if not found or int(found[1]) > 23 or int(found[2]) > 59:
            raise BadRequest(f"{text!r} is not a time {job} can run at.",
                             f"{job.capitalize()} runs {'weekly' if weekly else 'daily'}: give {want}, "
                             "24-hour, your local time.")
        return cls(int(found[1]) * 60 + int(found[2]), day)

    @classmethod
    def pick(cls, weekly: bool, rng: random.Random | None = None) -> "At":
        """A random early-morning minute (and day), so installs do not all call at once."""
        rng = rng or random.SystemRandom()
        return cls(rng.randrange(*EARLY), rng.randrange(7) if weekly else None)

    # ---- windows ------------------------------------------------------------------------------
    def _latest_local(self, clock, t: float) -> datetime:
        local = clock.local(t)
        at = local.replace(hour=self.minute // 60, minute=self.minute % 60, second=0, microsecond=0)
        if self.weekday is not None:
            at -= timedelta(days=(local.weekday() - self.weekday) % 7)
        if clock.epoch(at) > t:
            at -= timedelta(days=self.days)
        return at

    def latest(self, clock, t: float) -> float:
        """The last window at or before `t`."""
        return clock.epoch(self._latest_local(clock, t))

    def after(self, clock, t: float) -> float:
        """The first window after `t`."""
        return clock.epoch(self._latest_local(clock, t) + timedelta(days=self.days))
