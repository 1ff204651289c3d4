"""What rests on a provider's rate limit, a model or a whole connection; quota.py beside it adds the user's own limits
to it for seating, route mode, each call and the roster's status."""
from __future__ import annotations

import json
import threading
import time

from ...errors import FaultKind, UpstreamFailed
from ...providers import RateLimitBook
from ...providers.ratelimits import KEY
from ...store import Database

WHOLE = ""       # the served-name slot that means the whole connection (its key), not one model
USED_UP = (("requests_remaining", "requests_reset_at"), ("tokens_remaining", "tokens_reset_at"))


class Resting:
    """Rests are kept per (endpoint, served model), with WHOLE for the connection: a 429 rests what its limit names
    (the model asked, or the whole key when the limit is the key's, as the provider's headers say), until its reset.
    They are kept in the ratelimits table and also read from the rate-limit facts every response leaves in the
    transport's RateLimitBook (a quota used up rests its model, or its connection). The limits the user sets are
    counted apart (Quota), so what a provider says never loosens them."""

    def __init__(self, db: Database, limits: RateLimitBook | None = None):
        self.db = db
        self.limits = limits
        self._until: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()
        self._seen: dict = {}       # what the database's change marker said at the last look (Database.changed)
        self.refresh()

    def refresh(self) -> None:
        """Read the table now (the roster's status does; seating, whenever anything was committed since: another
        process on this data folder rests a model for this one from its next call)."""
        now = time.time()
        rows = self.db.query("SELECT endpoint, model, resting_until FROM ratelimits WHERE resting_until > ?", (now,))
        with self._lock:
            for r in rows:
                slot = (r["endpoint"], r["model"] or WHOLE)
                self._until[slot] = max(r["resting_until"], self._until.get(slot) or 0.0)

    def until(self, endpoint: str, served: str | None = None) -> float | None:
        """When this model (or, without `served`, the connection as a whole) may be called again: the later of the
        connection's rest and the model's, from 429s or from quotas the headers say are used up."""
        if self.db.changed(self._seen):   # looked at before the table is read: no commit falls between
            self.refresh()
        now = time.time()
        t = max(self._until.get((endpoint, WHOLE)) or 0.0,
                (self._until.get((endpoint, served)) or 0.0) if served else 0.0)
        if self.limits:
            whole = self.limits.peek(endpoint)
            for facts in ((whole,) if whole.get("scope") == KEY else ()) + \
                         ((self.limits.peek(endpoint, served),) if served else ()):
                for used_up, reset in USED_UP:
                    if facts.get(used_up) == 0 and (facts.get(reset) or 0) > now:
                        t = max(t, facts[reset])
        return t if t > now else None

    def mark(self, endpoint: str, until: float, facts: dict | None = None, served: str = WHOLE) -> None:
        """Rest the model `served` of this endpoint (WHOLE: every model of it) until `until`."""
        slot = (endpoint, served or WHOLE)
        with self._lock:
            self._until[slot] = max(until, self._until.get(slot) or 0)
        self.db.submit(lambda c: c.execute(
            "INSERT INTO ratelimits (endpoint, model, facts, resting_until, updated) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(endpoint, model) DO UPDATE SET facts = excluded.facts, "
            "resting_until = excluded.resting_until, updated = excluded.updated",
            (endpoint, slot[1], json.dumps(facts or {}), until, time.time())))

    def observe(self, endpoint: str, served: str, error: BaseException) -> None:
        """A call failed: a rate limit with a known reset rests what it names (the model, or the whole connection
        when it is the key's limit) until then, so the next asks skip it and nothing else."""
        if isinstance(error, UpstreamFailed) and error.kind is FaultKind.RATE_LIMITED and error.reset_at:
            self.mark(endpoint, error.reset_at, served=WHOLE if error.scope == KEY else served)
