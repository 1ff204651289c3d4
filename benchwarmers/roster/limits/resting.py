"""What rests on a provider's rate limit, a model or a whole connection, and a model whose calls keep failing; quota.py
beside it adds the user's own limits to it for seating, route mode, each call and the roster's status."""
from __future__ import annotations

import json
import threading
import time
from typing import Callable

from ...errors import FaultKind, StoreFailing, UpstreamFailed
from ...providers import RateLimitBook
from ...providers.ratelimits import KEY
from ...store import Database

WHOLE = ""       # the served-name slot that means the whole connection (its key), not one model
USED_UP = (("requests_remaining", "requests_reset_at"), ("tokens_remaining", "tokens_reset_at"))
# A model whose calls fail this many times running (nothing answered, the upstream's 5xx, a timeout) rests for
# FAILED_REST seconds: seating passes it over, with the reason, whether or not the scheduler probes it. Each call
# that fails after the rest rests it again; an answer (a seat's, or a probe's) ends the count and the rest.
FAILING = (FaultKind.CONNECTION, FaultKind.SERVER, FaultKind.TIMEOUT)
REST_AFTER = 3
FAILED_REST = 300.0
LOOKED = "resting looked"   # the key a request's memo keeps once the table was looked at for that request


class Resting:
    """Rests are kept per (endpoint, served model), with WHOLE for the connection: a 429 rests what its limit names
    (the model asked, or the whole key when the limit is the key's, as the provider's headers say), until its reset.
    They are kept in the ratelimits table and also read from the rate-limit facts every response leaves in the
    transport's RateLimitBook (a quota used up rests its model, or its connection). The limits the user sets are
    counted apart (Quota), so what a provider says never loosens them."""

    def __init__(self, db: Database, limits: RateLimitBook | None = None,
                 memo: Callable[[], dict | None] | None = None):
        self.db = db
        self.limits = limits
        # the memo of the request this thread serves (Config.memo): another process's commit is looked for once a
        # request, not at each of its seats' dozen questions (each look starts an SQLite read, locks and all)
        self._memo = memo
        self._until: dict[tuple[str, str], float] = {}
        self._failed: dict[tuple[str, str], int] = {}             # a model's calls failed in a row, in this process
        self._failing: dict[tuple[str, str], tuple[float, str]] = {}   # a rest on failures: (until, why)
        self._lock = threading.Lock()
        self._seen: dict = {}       # what the database's change marker said at the last look (Database.changed)
        self.refresh()

    def refresh(self) -> None:
        """Read the table now (the roster's status does; seating, whenever anything was committed since: another
        process on this data folder rests a model for this one from its next request)."""
        now = time.time()
        rows = self.db.query("SELECT endpoint, model, facts, resting_until FROM ratelimits WHERE resting_until > ?",
                             (now,))
        with self._lock:
            for r in rows:
                slot = (r["endpoint"], r["model"] or WHOLE)
                why = failing_why(r["facts"])
                if why:          # a rest on failures, kept apart: it keeps seats away, never a probe
                    self._failing[slot] = (max(r["resting_until"], self._failing.get(slot, (0.0,))[0]), why)
                else:
                    self._until[slot] = max(r["resting_until"], self._until.get(slot) or 0.0)

    def until(self, endpoint: str, served: str | None = None) -> float | None:
        """When this model (or, without `served`, the connection as a whole) may be called again: the later of the
        connection's rest and the model's, from 429s or from quotas the headers say are used up."""
        memo = self._memo() if self._memo else None
        if memo is None or LOOKED not in memo:   # here, so a request's later questions make no call
            self._look(memo)
        rests = self._until
        t = max(rests.get((endpoint, WHOLE)) or 0.0, (rests.get((endpoint, served)) or 0.0) if served else 0.0) \
            if rests else 0.0    # (most of the time nothing rests, and no facts are known: nothing to look at)
        book = self.limits   # nothing known of the connection: nothing of its models either (the book keeps both)
        if book is not None and book.entries and (whole := book.peek(endpoint)):
            now = time.time()
            for facts in ((whole,) if whole.get("scope") == KEY else ()) + \
                         ((book.peek(endpoint, served),) if served else ()):
                for used_up, reset in USED_UP if facts else ():
                    if facts.get(used_up) == 0 and (facts.get(reset) or 0) > now:
                        t = max(t, facts[reset])
            return t if t > now else None
        return t if t and t > time.time() else None   # (no rest: no need of the time)

    def mark(self, endpoint: str, until: float, facts: dict | None = None, served: str = WHOLE) -> None:
        """Rest the model `served` of this endpoint (WHOLE: every model of it) until `until`."""
        slot = (endpoint, served or WHOLE)
        with self._lock:
            self._until[slot] = max(until, self._until.get(slot) or 0)
        self._write(slot, until, facts or {})

    def observe(self, endpoint: str, served: str, error: BaseException) -> None:
        """A call failed: a rate limit with a known reset rests what it names (the model, or the whole connection
        when it is the key's limit) until then, so the next asks skip it and nothing else. Nothing answering, a
        5xx or a timeout counts towards the model's rest on failures (REST_AFTER in a row)."""
        if not isinstance(error, UpstreamFailed):
            return
        if error.kind is FaultKind.RATE_LIMITED and error.reset_at:
            self.mark(endpoint, error.reset_at, served=WHOLE if error.scope == KEY else served)
        elif error.kind in FAILING:
            slot = (endpoint, served)
            with self._lock:
                count = self._failed[slot] = self._failed.get(slot, 0) + 1
            if count >= REST_AFTER:
                last = " ".join(error.message.split())[:300].rstrip(".")
                why = f"its last {count} calls failed ({error.kind.value}: {last})"
                until = time.time() + FAILED_REST
                with self._lock:
                    self._failing[slot] = (until, why)
                self._write(slot, until, {"failing": why})

    def answered(self, endpoint: str, served: str) -> None:
        """A call of this model answered: its count of failures ends, and so does its rest on them."""
        slot = (endpoint, served)
        if slot not in self._failed and slot not in self._failing:     # the usual case: nothing to do
            return
        with self._lock:
            self._failed.pop(slot, None)
            rested = self._failing.pop(slot, None)
        if rested:       # written before the next refresh() could read the rest back (rare: a rested model answered)
            now = time.time()
            try:
                self.db.call(lambda c: c.execute(
                    "UPDATE ratelimits SET resting_until = ?, updated = ? WHERE endpoint = ? AND model = ? AND "
                    "resting_until > ? AND facts LIKE '%\"failing\"%'", (now, now, endpoint, served, now)))
            except StoreFailing:      # the answer still goes out; the stored rest ends by itself
                pass

    def failing(self, endpoint: str, served: str) -> tuple[float, str] | None:
        """(until when, why) this model rests because its calls keep failing, or None."""
        memo = self._memo() if self._memo else None
        if memo is None or LOOKED not in memo:   # as in until()
            self._look(memo)
        found = self._failing.get((endpoint, served)) if self._failing else None
        return found if found and found[0] > time.time() else None

    def _look(self, memo: dict | None) -> None:
        """Read the table again when anything was committed since the last look (another process may have rested a
        model for this one): at every question outside a request, once a request inside one (`memo`: the request's,
        not marked LOOKED yet). This process's own rests are in memory already."""
        if memo is not None:
            memo[LOOKED] = True
        if self.db.changed(self._seen):   # looked at before the table is read: no commit falls between
            self.refresh()

    def _write(self, slot: tuple[str, str], until: float, facts: dict) -> None:
        self.db.submit(lambda c: c.execute(
            "INSERT INTO ratelimits (endpoint, model, facts, resting_until, updated) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(endpoint, model) DO UPDATE SET facts = excluded.facts, "
            "resting_until = excluded.resting_until, updated = excluded.updated",
            (slot[0], slot[1], json.dumps(facts), until, time.time())))


def failing_why(facts: str | None) -> str | None:
    """The reason a stored rest gives when it rests a model on its failures (None: a rate limit's rest)."""
    try:
        found = json.loads(facts or "{}")
    except ValueError:
        return None
    why = found.get("failing") if isinstance(found, dict) else None
    return why if isinstance(why, str) and why else None
