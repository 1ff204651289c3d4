"""Rate limits enforced before a call is sent: the user's limits, counted per connection and per model in one atomic
check-and-count, and the rests the providers' own limits impose (Resting, from headers and 429s)."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ...store import Config, Database
from ...store.ids import new_id
from ...store.ledger import Ledger, month_of
from . import userset
from .counts import DAY, MERGE, MINUTE, Counts, MinuteWindow, count_on  # noqa: F401 (MERGE, MinuteWindow: read here)
from .userset import CONNECTION, LIMITS, MODEL

SHARED_KEEP = 2 * DAY      # seconds the admits table keeps a counted call for the other processes to read
ADMIT = "INSERT INTO admits (endpoint, model, created, tokens, requests, process)"
PROVIDER = "provider"       # the scope of a rest the provider's own limit imposed (Resting)
RESTS = ("resting until", "rate limited")   # how a seat (or a member passed over) kept by a rate limit says so
FAILING = "failing, resting until"          # how one kept by its own failures says so (resting.REST_AFTER)
LIMITS_MEMO = ("quota limits",)   # where a request's memo (Config.memo) keeps set_limits()' answer (not a file name)
LIMITS_OF_MEMO = ("quota limits of",)   # and _limits_of()'s


def utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


@dataclass
class Refusal:
    """Why a call may not go now: the limit that is used up, and when it lets the call through."""
    at: float                  # epoch seconds
    scope: str                 # connection, model, or "provider" for a rest the provider's own limit imposed
    name: str
    limit: str                 # rpm, rpd, rpmonth, tpm, tpd; "rest" for a provider's
    value: int | None = None

    def text(self) -> str:
        """'rate limited: resets at T (rpm 5 of connection 'x')': a seat's words, in every format."""
        what = (f"the provider's limit on {self.name!r}" if self.limit == "rest" else
                f"{self.limit} {self.value} of {self.scope} {self.name!r}")
        return f"rate limited: resets at {utc(self.at)} ({what})"


class Quota:
    """The counts of every connection and model, checked and counted under one lock, so concurrent calls never
    overrun a limit together. Counts start from the ledger (a restart keeps them) and follow `clock`."""

    def __init__(self, db: Database, config: Config, resting, clock):
        self.db, self.ledger, self.config, self.resting = db, Ledger(db), config, resting
        self.clock = clock                 # now() and sleep(): the scheduler's Clock (tests give one they control)
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], Counts] = {}
        self._pairs: dict[tuple[str, str], tuple[Counts, Counts]] = {}   # (endpoint, alias): _pair()'s
        self._limits: tuple = (None, {"connections": {}, "models": {}})
        self._of: tuple = (None, {})       # _limits_of(): (the set_limits() it was made of, {(endpoint, alias): ...})
        # Another process on this data folder (bench serve and bench gateway) counts its calls too: a call to a
        # connection or model with a limit is checked and counted in a database transaction, its row in `admits`,
        # and the other process's rows are counted here before each check (`_seen`: the last one counted).
        self.process = new_id()
        self._seen, self._shared = 0, 0
        self.restore()

    # ---- what is set -------------------------------------------------------------------------------
    def set_limits(self) -> dict:
        """The user's limits, read again when limits.json changed (looked at once a request, in its memo)."""
        return self.config.kept(LIMITS_MEMO, self._read_limits)

    def _read_limits(self) -> dict:
        try:
            raw = self.config.view(userset.FILE)
        except Exception:   # a broken file sets no limit (read() says so too); bench status names its line
            raw = None
        seen, limits = self._limits
        if raw is not seen:
            limits = userset.read(self.config)
            self._limits = (raw, limits)
        return limits

    def _limits_of(self) -> tuple:
        """(set_limits(), {(endpoint, alias): _work_out()'s}): the second made anew when the first changed; take(),
        spent() and blocked() (a panel asks at each check, count and correction of each seat) keep it in the
        request's memo (LIMITS_OF_MEMO) and look a call's limits up in it (_limits_for)."""
        limits = self.set_limits()
        of = self._of
        if of[0] is not limits:
            self._of = of = (limits, {})
        return of

    def _limits_for(self, endpoint: str, alias: str) -> tuple[tuple, bool]:
        """_work_out()'s for a call's connection and model, from the request's memo."""
        of = self.config.kept(LIMITS_OF_MEMO, self._limits_of)
        try:
            return of[1][(endpoint, alias)]
        except KeyError:
            return self._work_out(of, endpoint, alias)

    def _work_out(self, of: tuple, endpoint: str, alias: str) -> tuple[tuple, bool]:
        """(((scope, name, {limit: n}) of the connection and the model), whether any is set), kept in `of`
        (_limits_of()'s): worked out once for each set of limits read."""
        limits, found = of   # a budget (usd_month) is Budgets' to enforce, not a rate limit
        out = ((CONNECTION, endpoint, userset.rates(limits["connections"].get(endpoint) or {})),
               (MODEL, alias, userset.rates(limits["models"].get(alias) or {})))
        hit = found[(endpoint, alias)] = (out, limited(out))
        return hit

    # ---- checking and counting ---------------------------------------------------------------------
    def take(self, model, tokens: int, now: float | None = None) -> Refusal | None:
        """Count one call of about `tokens` prompt tokens to `model` if every limit lets it go now (None), else say
        when it could; nothing is counted then. Under a limit, in one database transaction with every process's
        counted calls (so two processes on one data folder never overrun it together). `now`: the clock's, read
        just before by the caller (a call under a limit reads it inside its transaction)."""
        endpoint, alias = model.endpoint, model.alias
        limits, shared = self._limits_for(endpoint, alias)   # read outside the lock
        if shared:
            return self.db.call(lambda conn: self._take_shared(conn, model, tokens, limits))
        if now is None:
            now = self.clock.now()
        with self._lock:   # no limit set on it: nothing to check, only to count
            count_on(self._pair(model, now), now, tokens, 1)
        return None

    def _take_shared(self, conn, model, tokens: int, limits: tuple) -> Refusal | None:
        """take() under a limit, inside the writer's transaction (it holds the database's write lock, which every
        process takes for this): the other processes' calls counted, then the check, then this call's row."""
        rows = conn.execute("SELECT id, endpoint, model, created, tokens, requests FROM admits WHERE id > ? AND "
                            "process != ? ORDER BY id", (self._seen, self.process)).fetchall()
        now = self.clock.now()
        with self._lock:
            self._count_rows(rows, now)
            refusal = self._check(limits, now, tokens)
            if refusal is None:
                cur = conn.execute(f"{ADMIT} VALUES (?, ?, ?, ?, 1, ?)",
                                   (model.endpoint, model.alias, now, tokens, self.process))
                self._at((CONNECTION, model.endpoint), now).count(now, tokens)
                self._at((MODEL, model.alias), now).count(now, tokens)
                self._seen = max(self._seen, cur.lastrowid)
            self._shared += 1
            prune = self._shared % 500 == 0
        if prune:
            conn.execute("DELETE FROM admits WHERE created < ?", (now - SHARED_KEEP,))
        return refusal

    def _count_rows(self, rows, now: float) -> None:
        """The other processes' counted calls (and tokens) since the last one seen (lock held)."""
        day = int(now // DAY)
        for r in rows:
            if r["id"] <= self._seen:
                continue
            self._seen = r["id"]
            for key in self._row_keys(r):
                counts = self._at(key, now)
                if r["requests"]:
                    if r["created"] > now - MINUTE:
                        counts.times.append(r["created"])
                    counts.day_requests += int(r["created"] // DAY) == day
                    counts.month_requests += month_of(r["created"]) == counts.month
                if r["tokens"] and int(r["created"] // DAY) == day:
                    counts.add(r["created"] if r["created"] > now - MINUTE else now - MINUTE, r["tokens"])

    def _sync(self, limits_set: bool | None = None) -> None:
        """Count what the other processes counted since, before a look at a limited model's counts (`limits_set`:
        its _work_out()'s; None: at any counts while some limit is set)."""
        if not (limits_set if limits_set is not None else any(userset.rates(e) for scope in ("connections", "models")
                                                             for e in self.set_limits()[scope].values())):
            return
        rows = self.db.query("SELECT id, endpoint, model, created, tokens, requests FROM admits WHERE id > ? AND "
                             "process != ? ORDER BY id", (self._seen, self.process))
        if rows:
            now = self.clock.now()
            with self._lock:
                self._count_rows(rows, now)

    def blocked(self, model, tokens: int = 0, provider: bool = True) -> Refusal | None:
        """take() without counting: what a call to `model` would meet now, the provider's rests included (unless
        `provider` is False: the user's limits alone)."""
        endpoint, alias = model.endpoint, model.alias
        limits, shared = self._limits_for(endpoint, alias)
        mine = None     # no limit set on it: nothing of the user's to check
        if shared:
            self._sync(True)
            now = self.clock.now()
            with self._lock:
                mine = self._check(limits, now, tokens)
        rest = self.resting.until(model.endpoint, model.served) if provider else None   # rested(), one step less
        if rest and (mine is None or rest > mine.at):
            return Refusal(rest, PROVIDER, model.endpoint, "rest")
        return mine

    def until(self, model) -> float | None:
        """When `model` may be called again, or None when it may now."""
        refusal = self.blocked(model)
        return refusal.at if refusal else None

    def failing(self, model) -> tuple[float, str] | None:
        """(until when, why) the model rests because its calls keep failing, or None."""
        return self.resting.failing(model.endpoint, model.served)

    def rested(self, model) -> float | None:
        """When a provider's limit (a 429, or headers that said none are left) lets this model be called again."""
        return self.resting.until(model.endpoint, model.served)

    def spent(self, model, tokens: int, now: float | None = None) -> None:
        """A counted call's tokens, once known (`tokens`: what it used beyond what was counted when it went; `now`:
        the clock's, read just before by the caller)."""
        if not tokens:
            return
        if now is None:
            now = self.clock.now()
        endpoint, alias = model.endpoint, model.alias
        with self._lock:
            count_on(self._pair(model, now), now, tokens, 0)
        if self._limits_for(endpoint, alias)[1]:   # for the other processes' token limits
            self.db.insert((ADMIT, (endpoint, alias, now, tokens, 0, self.process)))

    def _check(self, limits_of: tuple, now: float, tokens: int) -> Refusal | None:
        """The latest-freeing of the limits (_work_out()'s) one more call of `tokens` would break; lock held."""
        found = []
        for scope, name, limits in limits_of:
            if limits:
                found += [Refusal(at, scope, name, which, limits[which])
                          for at, which in self._at((scope, name), now).blocked_until(limits, now, tokens)]
        return max(found, key=lambda r: r.at) if found else None

    def _pair(self, model, now: float) -> tuple[Counts, Counts]:
        """_at() of the model's connection and of the model, kept as a pair (until restore()) for take() and spent(),
        which count on both at every call (count_on() rolls them); lock held."""
        key = (model.endpoint, model.alias)
        try:
            return self._pairs[key]
        except KeyError:
            pair = self._pairs[key] = (self._at((CONNECTION, model.endpoint), now), self._at((MODEL, model.alias), now))
            return pair

    def _at(self, key: tuple, now: float) -> Counts:
        try:
            counts = self._counts[key]
        except KeyError:
            counts = self._counts[key] = Counts()
        counts.roll(now)
        return counts

    # ---- what the Quotas page and `bench limits` show -------------------------------------------
    def usage(self, scope: str, name: str) -> dict:
        """{limit: {"used", "resets_at"}} for a connection or a model, counted now."""
        self._sync()
        now = self.clock.now()
        with self._lock:
            counts = self._at((scope, name), now)
            used, resets = counts.used(), counts.resets(now)
        return {k: {"used": used[k], "resets_at": resets[k]} for k in LIMITS}

    # ---- counts from the ledger ----------------------------------------------------------------
    def restore(self) -> None:
        """Count what the ledger holds for this month, today and the last minute (UTC), as at start-up; the other
        processes' calls counted from now on are read from `admits`."""
        now = self.clock.now()
        day_start = (now // DAY) * DAY
        found = self.ledger.counts(month_of(now), day_start, now - MINUTE)
        last = self.db.one("SELECT MAX(id) AS id FROM admits")
        with self._lock:
            self._seen = (last["id"] if last else None) or 0
            self._counts.clear()
            self._pairs.clear()
            for row in found["month"]:
                for key in self._row_keys(row):
                    self._at(key, now).month_requests += row["requests"]
            for row in found["day"]:
                for key in self._row_keys(row):
                    counts = self._at(key, now)
                    counts.day_requests += row["requests"]
                    counts.day_tokens += row["tokens"] or 0
            for row in found["minute"]:
                for key in self._row_keys(row):
                    counts = self._at(key, now)
                    counts.times.append(row["created"])
                    if row["tokens"]:
                        counts.tokens.append(row["created"], row["tokens"])

    @staticmethod
    def _row_keys(row) -> list:
        return [k for k in ((CONNECTION, row["endpoint"]), (MODEL, row["model"])) if k[1]]


def limited(limits) -> bool:
    """Whether any of a call's limits (_work_out()'s) is set."""
    return any(values for _, _, values in limits)
