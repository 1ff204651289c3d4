"""Monthly budgets in dollars (the user's `usd_month`, on a model, a connection, a collection, a gateway key and the
whole bench), enforced before a call is sent: the most it can cost (its estimate: prompt tokens and output cap at the
model's price) is reserved in one database transaction with every process's spend and holds, so calls racing for
the last cents never pass a budget by more than one estimate; its real cost is booked when it ends, the hold let go.
Months turn at midnight on the first in the user's time zone (the scheduler's clock: the system's local time)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from ...store import Config, Database, spend
from ...store.ids import new_id
from . import userset

OVER = "over budget"      # how a seat (or a member passed over) kept by a budget says so
NEAR = 0.8                # a budget this much spent is near: Home and the Quotas page warn of it
BOOKED_KEPT = 4096        # calls whose booking is remembered, so an amended record books only the difference
MEMO = ("budgets",)       # where a request's memo (Config.memo) keeps set()'s answer (not a file name)
WHAT = {"model": "model", "connection": "connection", "collection": "collection", "key": "gateway key",
        "bench": "the whole bench"}


@dataclass
class Charge:
    """What one call counts against: its id (its hold's), model alias, connection, collection and gateway key."""
    call: str
    model: str
    connection: str
    collection: str | None = None
    key: str | None = None

    def keys(self) -> list:
        return spend.keys_of(self.model, self.connection, self.collection, self.key)


def usd(value: float) -> str:
    """Dollars as a person reads them: cents, or four places below a cent."""
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def named(scope: str, name: str) -> str:
    return WHAT[scope] if scope == userset.BENCH else f"{WHAT[scope]} {name!r}"


@dataclass
class BudgetRefusal:
    """Why a call may not go: the budget it would pass, what is spent and held of it, and when the month turns."""
    scope: str
    name: str
    budget: float
    spent: float
    held: float
    estimate: float
    at: float          # epoch seconds: the month's turn in the user's time zone
    reset_text: str    # that moment as the user reads it

    def text(self) -> str:
        """'over budget: model 'a' spent $4.99 of its $5.00 a month ...': a seat's words, in every format."""
        held = f" (and {usd(self.held)} held for calls under way)" if self.held > 0 else ""
        return (f"{OVER}: {named(self.scope, self.name)} spent {usd(self.spent)} of its {usd(self.budget)} a month"
                f"{held}; this call could cost up to {usd(self.estimate)}; resets at {self.reset_text}")


class Budgets:
    """The user's budgets, their month's spend and holds (shared with every process on the data folder, in the
    `spend` tables), checked and reserved before a call and booked after it."""

    def __init__(self, db: Database, config: Config, clock):
        self.db, self.config, self.clock = db, config, clock
        self.process = new_id()
        self._lock = threading.Lock()
        self._booked: OrderedDict = OrderedDict()   # call -> (month, keys, cost booked): an amend books the change
        self._holding: set = set()                   # calls this process holds an estimate for
        self._limits: tuple = (None, {})

    # ---- what is set ------------------------------------------------------------------------------
    def set(self) -> dict:
        """{(scope, name): dollars a month}, read again when limits.json changed (looked at once a request)."""
        return self.config.kept(MEMO, self._read)

    def _read(self) -> dict:
        try:
            raw = self.config.view(userset.FILE)
        except Exception:   # a broken file sets no budget; bench status and the Quotas page say why
            raw = None
        seen, found = self._limits
        if raw is not seen:
            found = userset.budgets(userset.read(self.config)) if raw is not None else {}
            self._limits = (raw, found)
        return found

    def month(self, now: float | None = None) -> tuple[str, float, float]:
        """(YYYY-MM, its start, its end) of the month `now` falls in, in the user's time zone."""
        t = self.clock.local(self.clock.now() if now is None else now)
        year, month = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
        return (f"{t.year:04d}-{t.month:02d}", self.clock.epoch(datetime(t.year, t.month, 1)),
                self.clock.epoch(datetime(year, month, 1)))

    def reset_text(self, at: float) -> str:
        return f"{self.clock.local(at):%Y-%m-%d %H:%M} ({self.clock.zone()})"

    # ---- before a call --------------------------------------------------------------------------
    def check(self, charge: Charge, estimate: float | None) -> BudgetRefusal | None:
        """The budget one more call of this estimate would pass, without reserving anything (a seat's pre-check);
        None when none would, no budget applies, or the model has no known price (`estimate` None)."""
        mine = self.applying(charge) if estimate is not None else {}
        if not mine or estimate is None:
            return None
        return self._over_read(self.month(), mine, estimate)

    def reserve(self, charge: Charge, estimate: float | None) -> BudgetRefusal | None:
        """Hold `estimate` on every budget the call counts against when each has room for it (None), in one
        transaction with every process's holds; else the refusal, and nothing is held."""
        mine = self.applying(charge) if estimate is not None else {}
        if not mine or estimate is None:
            return None
        month = self.month()

        def take(conn):
            spend.expire(conn)
            refusal = self._over(conn, month, mine, estimate)
            if refusal is None:
                spend.hold(conn, charge.call, month[0], charge.keys(), estimate, self.process)
            return refusal
        refusal = self.db.call(take)
        if refusal is None:
            with self._lock:
                self._holding.add(charge.call)
        return refusal

    def applying(self, charge: Charge) -> dict:
        """{(scope, name): dollars a month} of the budgets this call counts against (most calls: none, at once)."""
        budgets = self.set()
        if not budgets:
            return {}
        return {key: budgets[key] for key in charge.keys() if key in budgets}

    def _over(self, conn, month: tuple, mine: dict, estimate: float) -> BudgetRefusal | None:
        found = spend.sums(lambda sql, params: conn.execute(sql, params).fetchone(), month[0], list(mine))
        return self._worst(month, mine, found, estimate)

    def _over_read(self, month: tuple, mine: dict, estimate: float) -> BudgetRefusal | None:
        return self._worst(month, mine, spend.sums(self.db.one, month[0], list(mine)), estimate)

    def _worst(self, month: tuple, mine: dict, found: dict, estimate: float) -> BudgetRefusal | None:
        """The budget with the least room of those this call would pass."""
        over = []
        for key, budget in mine.items():
            spent, held = found.get(key, (0.0, 0.0))
            if spent + held + estimate > budget + 1e-12:
                over.append(BudgetRefusal(key[0], key[1], budget, spent, held, estimate, month[2],
                                          self.reset_text(month[2])))
        return min(over, key=lambda r: r.budget - r.spent - r.held) if over else None

    # ---- after it ---------------------------------------------------------------------------------
    def book(self, charge: Charge, cost: float | None) -> None:
        """The call is over: its real cost (None: unpriced, 0 for one never sent) added to this month's spend of each
        budget it counts against, and its hold let go, together. A call booked before (a seat amended after the panel
        stopped waiting) books the difference, in the month it was first booked."""
        cost = cost or 0.0
        if not cost and charge.call not in self._holding and charge.call not in self._booked:
            return    # as below, without the lock (sound: a call leaves _holding only once it is in _booked)
        with self._lock:
            held = charge.call in self._holding
            before = self._booked.get(charge.call)
            if not cost and not held and before is None:
                return                      # nothing to book, nothing held: no write (an unpriced call's)
            month, keys, was = before if before else (self.month()[0], charge.keys(), 0.0)
            if cost == was and not held:
                return
            self._booked[charge.call] = (month, keys, cost)
            self._booked.move_to_end(charge.call)   # the newest (never out of it in between: see above)
            self._holding.discard(charge.call)
            while len(self._booked) > BOOKED_KEPT:
                self._booked.popitem(last=False)

        def write(conn):
            if held:
                spend.release(conn, charge.call)
            if cost != was:
                spend.add(conn, month, keys, cost - was, 0.0)
        self.db.submit(write)

    # ---- what the Quotas page and `bench limits` show ----------------------------------------------
    def view(self) -> dict:
        """Every budget set with this month's spend, holds, what is left and its state; the month and its turn."""
        label, start, end = self.month()
        self.db.sync()
        rows = {(r["scope"], r["name"]): (r["spent"], r["held"])
                for r in self.db.query("SELECT scope, name, spent, held FROM spend WHERE month = ?", (label,))}
        budgets = []
        for (scope, name), budget in sorted(self.set().items()):
            spent, held = rows.get((scope, name), (0.0, 0.0))
            used = spent + held
            state = "at" if used >= budget else "near" if used >= budget * NEAR else "ok"
            budgets.append({"scope": scope, "name": name, "usd_month": budget, "spent": round(spent, 6),
                            "held": round(held, 6), "left": round(max(budget - used, 0.0), 6), "state": state,
                            "what": named(scope, name)})
        return {"month": label, "starts_at": start, "resets_at": end, "reset_text": self.reset_text(end),
                "zone": self.clock.zone(), "budgets": budgets,
                "spent": {f"{s}:{n}": round(v[0], 6) for (s, n), v in rows.items()}}
