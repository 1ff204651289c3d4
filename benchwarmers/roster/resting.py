"""When an endpoint rests on a rate limit: the one check used by seating, route mode and the roster's status."""
from __future__ import annotations

import json
import threading
import time

from ..errors import FaultKind, UpstreamFailed
from ..providers import RateLimitBook
from ..store import Database

REFRESH = 2.0    # seconds between reads of the ratelimits table (another process on this data folder may write it)


class Resting:
    """Endpoints resting until a reset time: marked here on a 429, kept in the ratelimits table, and read from
    the rate-limit headers every response leaves in the transport's RateLimitBook."""

    def __init__(self, db: Database, limits: RateLimitBook | None = None):
        self.db = db
        self.limits = limits
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()
        self._read = 0.0
        self.refresh()

    def refresh(self) -> None:
        """Read the table now (the roster's status does; seating reads it at most every REFRESH seconds)."""
        now = time.time()
        rows = self.db.query("SELECT endpoint, resting_until FROM ratelimits WHERE resting_until > ?", (now,))
        with self._lock:
            for r in rows:
                self._until[r["endpoint"]] = max(r["resting_until"], self._until.get(r["endpoint"]) or 0.0)
            self._read = time.monotonic()

    def until(self, endpoint: str) -> float | None:
        """When the endpoint may be called again: a 429's reset, or a quota the headers say is used up."""
        if time.monotonic() - self._read > REFRESH:
            self.refresh()
        now = time.time()
        t = self._until.get(endpoint) or 0.0
        facts = self.limits.get(endpoint) if self.limits else {}
        for used_up, reset in (("requests_remaining", "requests_reset_at"), ("tokens_remaining", "tokens_reset_at")):
            if facts.get(used_up) == 0 and (facts.get(reset) or 0) > now:
                t = max(t, facts[reset])
        return t if t > now else None

    def mark(self, endpoint: str, until: float, facts: dict | None = None) -> None:
        with self._lock:
            self._until[endpoint] = max(until, self._until.get(endpoint) or 0)
        self.db.submit(lambda c: c.execute(
            "INSERT INTO ratelimits (endpoint, facts, resting_until, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(endpoint) DO UPDATE SET facts = excluded.facts, resting_until = excluded.resting_until, "
            "updated = excluded.updated", (endpoint, json.dumps(facts or {}), until, time.time())))

    def observe(self, endpoint: str, error: BaseException) -> None:
        """A call failed: a rate limit with a known reset rests its endpoint until then, so the next asks skip it."""
        if isinstance(error, UpstreamFailed) and error.kind is FaultKind.RATE_LIMITED and error.reset_at:
            self.mark(endpoint, error.reset_at)
